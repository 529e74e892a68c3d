import { randomBytes } from "node:crypto"
import type * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Schema } from "effect"
import { REFRESH_TOKEN_SECONDS, tokenExpiry } from "./TokenLifetimes.js"
import type { RefreshToken, UserAccountsService } from "./UserAccounts.js"

/**
 * The refresh-token rows of `UserAccounts`: a refresh token is good once. Presenting it stores its
 * successor in the same family; presenting it again (or a revoked one) revokes the whole family,
 * the successor included, and with it every access token issued with the family.
 */

/** 128 random bits, URL-safe: refresh-token ids and families. */
const newId = (): string => randomBytes(16).toString("base64url")

const ConsumedRow = Schema.Struct({ family: Schema.String, userId: Schema.Number, clientId: Schema.String })

const PresentedRow = Schema.Struct({
  family: Schema.String,
  used: Schema.Boolean,
  revoked: Schema.Boolean
})

export type RefreshFamilies = Pick<
  UserAccountsService,
  "startRefreshFamily" | "rotateRefreshToken" | "revokeFamily" | "deleteExpiredRefreshTokens"
>

export const makeRefreshFamilies = (sql: SqlClient.SqlClient): RefreshFamilies => {
  const insert = (row: RefreshToken, createdAt: number) =>
    sql`INSERT INTO refresh_tokens (jti, family, user_id, client_id, created_at, expires_at)
    VALUES (${row.jti}, ${row.family}, ${row.userId}, ${row.clientId}, ${createdAt}, ${row.expiresAt})`

  const revokeFamilyQuery = (family: string, now: number) =>
    Effect.map(
      sql`UPDATE refresh_tokens SET revoked_at = ${now} WHERE family = ${family} AND revoked_at IS NULL RETURNING jti`,
      (rows) => rows.length
    )

  const startRefreshFamily = Effect.fn("UserAccounts.startRefreshFamily")(function* (
    holder: { readonly userId: number; readonly clientId: string },
    now: number
  ) {
    const token: RefreshToken = {
      jti: newId(),
      family: newId(),
      userId: holder.userId,
      clientId: holder.clientId,
      expiresAt: tokenExpiry(now, REFRESH_TOKEN_SECONDS)
    }
    yield* insert(token, now).pipe(Effect.orDie)
    return token
  })

  const rotateRefreshToken = Effect.fn("UserAccounts.rotateRefreshToken")(function* (
    jti: string,
    now: number
  ) {
    const successor = { jti: newId(), expiresAt: tokenExpiry(now, REFRESH_TOKEN_SECONDS) }
    const rotate = Effect.gen(function* () {
      const consumed = yield* Effect.flatMap(
        sql`UPDATE refresh_tokens SET used_at = ${now}
        WHERE jti = ${jti} AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ${now}
        RETURNING family, user_id AS "userId", client_id AS "clientId"`,
        Schema.decodeUnknown(Schema.Array(ConsumedRow))
      )
      const row = consumed[0]
      if (row !== undefined) {
        const next: RefreshToken = { ...successor, ...row }
        yield* insert(next, now)
        return { _tag: "Rotated", next } as const
      }
      const presented = yield* Effect.flatMap(
        sql`SELECT family, used_at IS NOT NULL AS used, revoked_at IS NOT NULL AS revoked
        FROM refresh_tokens WHERE jti = ${jti}`,
        Schema.decodeUnknown(Schema.Array(PresentedRow))
      )
      const found = presented[0]
      if (found === undefined) return { _tag: "Unknown" } as const
      if (!found.used && !found.revoked) return { _tag: "Expired" } as const
      // A second use of a one-time token: whoever holds the family may be an attacker.
      yield* revokeFamilyQuery(found.family, now)
      return { _tag: "Replayed", family: found.family } as const
    })
    return yield* sql.withTransaction(rotate).pipe(Effect.orDie)
  })

  const revokeFamily = Effect.fn("UserAccounts.revokeFamily")(function* (family: string, now: number) {
    return yield* revokeFamilyQuery(family, now).pipe(Effect.orDie)
  })

  const deleteExpiredRefreshTokens = Effect.fn("UserAccounts.deleteExpiredRefreshTokens")(function* (
    before: number
  ) {
    const rows = yield* sql`DELETE FROM refresh_tokens WHERE expires_at < ${before} RETURNING jti`.pipe(
      Effect.orDie
    )
    return rows.length
  })

  return { startRefreshFamily, rotateRefreshToken, revokeFamily, deleteExpiredRefreshTokens }
}

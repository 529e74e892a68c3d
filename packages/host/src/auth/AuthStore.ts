import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Context, Effect, Layer, Option, Schema } from "effect"

/**
 * What authentication reads and writes in the database: API clients with their user, desk and
 * maker id, the active flags, and the refresh-token rows that make refresh tokens one-time.
 * SQL failures are defects here: no client can act on them, and the request answers 500.
 */

export type Role = "trader" | "viewer"

export interface ClientAccount {
  readonly clientId: string
  readonly secretHash: string
  readonly clientActive: boolean
  readonly userId: number
  readonly userActive: boolean
  readonly deskId: number
  readonly roles: ReadonlyArray<Role>
  readonly makerId?: string | undefined
}

/** Whether a token's holder may still act: user and client active, refresh family not revoked. */
export interface AccountStatus {
  readonly active: boolean
  readonly familyRevoked: boolean
}

/** What a token names of its holder: the user, and the client and refresh family when it has them. */
export interface StatusKey {
  readonly userId: number
  readonly clientId?: string | undefined
  readonly family?: string | undefined
}

/** Keys per query of `accountStatuses`, so that one statement's parameter list stays small. */
const STATUS_CHUNK = 500

export interface NewRefreshToken {
  readonly jti: string
  readonly family: string
  readonly userId: number
  readonly clientId: string
  /** Unix milliseconds, as every timestamp column. */
  readonly createdAt: number
  readonly expiresAt: number
}

/**
 * The outcome of presenting refresh token `jti`:
 * - `Rotated`: it was live; it is now used and its successor (same family) is stored;
 * - `Replayed`: it had been used or revoked already; its whole family is now revoked;
 * - `Expired`: its row says it has expired (nothing changed);
 * - `Unknown`: no such row (never issued here, or cleaned up).
 */
export type RotateOutcome =
  | { readonly _tag: "Rotated"; readonly family: string; readonly userId: number; readonly clientId: string }
  | { readonly _tag: "Replayed"; readonly family: string }
  | { readonly _tag: "Expired" }
  | { readonly _tag: "Unknown" }

export interface AuthStoreService {
  readonly clientAccount: (clientId: string) => Effect.Effect<Option.Option<ClientAccount>>
  /** `clientId` and `family` are checked when given (the token names them). */
  readonly accountStatus: (
    userId: number,
    clientId: string | undefined,
    family: string | undefined
  ) => Effect.Effect<AccountStatus>
  /**
   * `accountStatus` of many token holders at once, in three queries per chunk of keys, whatever
   * their number (the sessions' periodic recheck). Answers in the order of `keys`.
   */
  readonly accountStatuses: (keys: ReadonlyArray<StatusKey>) => Effect.Effect<ReadonlyArray<AccountStatus>>
  readonly insertRefreshToken: (row: NewRefreshToken) => Effect.Effect<void>
  /**
   * Consumes refresh token `jti` and stores its successor `next` in one transaction. Of several
   * concurrent calls for the same `jti` exactly one gets `Rotated`: the conditional UPDATE takes
   * the row lock, and the others find it used once the winner commits (and revoke the family).
   */
  readonly rotateRefreshToken: (
    jti: string,
    next: { readonly jti: string; readonly createdAt: number; readonly expiresAt: number },
    now: number
  ) => Effect.Effect<RotateOutcome>
  /** Revokes every live token of the family; answers how many rows changed. */
  readonly revokeFamily: (family: string, now: number) => Effect.Effect<number>
  /** Deletes rows that expired before `before`; answers how many. */
  readonly deleteExpiredRefreshTokens: (before: number) => Effect.Effect<number>
}

export class AuthStore extends Context.Tag("rfq/host/AuthStore")<AuthStore, AuthStoreService>() {}

const ClientAccountRow = Schema.Struct({
  clientId: Schema.String,
  secretHash: Schema.String,
  clientActive: Schema.Boolean,
  userId: Schema.Number,
  userActive: Schema.Boolean,
  deskId: Schema.Number,
  roles: Schema.Array(Schema.Literal("trader", "viewer")),
  makerId: Schema.NullOr(Schema.String)
})

const StatusRow = Schema.Struct({
  userActive: Schema.Boolean,
  clientActive: Schema.NullOr(Schema.Boolean),
  familyRevoked: Schema.Boolean
})

const ConsumedRow = Schema.Struct({ family: Schema.String, userId: Schema.Number, clientId: Schema.String })

const PresentedRow = Schema.Struct({
  family: Schema.String,
  used: Schema.Boolean,
  revoked: Schema.Boolean
})

export const makeAuthStore: Effect.Effect<AuthStoreService, never, SqlClient.SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient

    const findClient = SqlSchema.findOne({
      Request: Schema.String,
      Result: ClientAccountRow,
      execute: (clientId) => sql`
      SELECT c.client_id AS "clientId", c.secret_hash AS "secretHash", c.active AS "clientActive",
        u.id AS "userId", u.active AS "userActive", u.desk_id AS "deskId", u.roles,
        m.maker_id AS "makerId"
      FROM api_clients c
      JOIN users u ON u.id = c.user_id
      LEFT JOIN makers m ON m.desk_id = u.desk_id
      WHERE c.client_id = ${clientId}`
    })

    const clientAccount = Effect.fn("AuthStore.clientAccount")(function* (clientId: string) {
      const row = yield* findClient(clientId).pipe(Effect.orDie)
      return Option.map(row, (found): ClientAccount => ({ ...found, makerId: found.makerId ?? undefined }))
    })

    const accountStatus = Effect.fn("AuthStore.accountStatus")(function* (
      userId: number,
      clientId: string | undefined,
      family: string | undefined
    ) {
      const clientActive =
        clientId === undefined
          ? sql`NULL::boolean`
          : sql`(SELECT c.active FROM api_clients c WHERE c.client_id = ${clientId} AND c.user_id = u.id)`
      const familyRevoked =
        family === undefined
          ? sql`false`
          : sql`EXISTS (SELECT 1 FROM refresh_tokens t WHERE t.family = ${family} AND t.revoked_at IS NOT NULL)`
      const rows = yield* Effect.flatMap(
        sql`SELECT u.active AS "userActive", ${clientActive} AS "clientActive", ${familyRevoked} AS "familyRevoked"
        FROM users u WHERE u.id = ${userId}`,
        Schema.decodeUnknown(Schema.Array(StatusRow))
      ).pipe(Effect.orDie)
      const row = rows[0]
      if (row === undefined) return { active: false, familyRevoked: false }
      // A token naming a client that no longer exists or belongs to someone else is not active either.
      const active = row.userActive && (clientId === undefined || row.clientActive === true)
      return { active, familyRevoked: row.familyRevoked }
    })

    const statusChunk = (keys: ReadonlyArray<StatusKey>) =>
      Effect.gen(function* () {
        const userIds = [...new Set(keys.map((k) => k.userId))]
        const clientIds = [...new Set(keys.flatMap((k) => (k.clientId === undefined ? [] : [k.clientId])))]
        const families = [...new Set(keys.flatMap((k) => (k.family === undefined ? [] : [k.family])))]
        const users = yield* sql<{ id: number; active: boolean }>`
          SELECT id, active FROM users WHERE id IN ${sql.in(userIds)}`
        const clients =
          clientIds.length === 0
            ? []
            : yield* sql<{ clientId: string; userId: number; active: boolean }>`
              SELECT client_id AS "clientId", user_id AS "userId", active FROM api_clients
              WHERE client_id IN ${sql.in(clientIds)}`
        const revoked =
          families.length === 0
            ? []
            : yield* sql<{ family: string }>`
              SELECT DISTINCT family FROM refresh_tokens
              WHERE family IN ${sql.in(families)} AND revoked_at IS NOT NULL`
        const userActive = new Map(users.map((u) => [Number(u.id), u.active]))
        const clientOf = new Map(clients.map((c) => [c.clientId, c]))
        const revokedFamilies = new Set(revoked.map((r) => r.family))
        return keys.map((key): AccountStatus => {
          const client = key.clientId === undefined ? undefined : clientOf.get(key.clientId)
          // The same rule as accountStatus: a client that is gone or now someone else's is not active.
          const clientActive =
            key.clientId === undefined ||
            (client !== undefined && Number(client.userId) === key.userId && client.active)
          return {
            active: userActive.get(key.userId) === true && clientActive,
            familyRevoked: key.family !== undefined && revokedFamilies.has(key.family)
          }
        })
      })

    const accountStatuses = Effect.fn("AuthStore.accountStatuses")(function* (
      keys: ReadonlyArray<StatusKey>
    ) {
      const chunks: Array<ReadonlyArray<StatusKey>> = []
      for (let i = 0; i < keys.length; i += STATUS_CHUNK) chunks.push(keys.slice(i, i + STATUS_CHUNK))
      const answers = yield* Effect.forEach(chunks, statusChunk).pipe(Effect.orDie)
      return answers.flat()
    })

    const insertRefreshToken = Effect.fn("AuthStore.insertRefreshToken")(function* (row: NewRefreshToken) {
      yield* sql`INSERT INTO refresh_tokens (jti, family, user_id, client_id, created_at, expires_at)
      VALUES (${row.jti}, ${row.family}, ${row.userId}, ${row.clientId}, ${row.createdAt}, ${row.expiresAt})`.pipe(
        Effect.orDie
      )
    })

    const revokeFamilyQuery = (family: string, now: number) =>
      Effect.map(
        sql`UPDATE refresh_tokens SET revoked_at = ${now} WHERE family = ${family} AND revoked_at IS NULL RETURNING jti`,
        (rows) => rows.length
      )

    const rotateRefreshToken = Effect.fn("AuthStore.rotateRefreshToken")(function* (
      jti: string,
      next: { readonly jti: string; readonly createdAt: number; readonly expiresAt: number },
      now: number
    ) {
      const rotate = Effect.gen(function* () {
        const consumed = yield* Effect.flatMap(
          sql`UPDATE refresh_tokens SET used_at = ${now}
          WHERE jti = ${jti} AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ${now}
          RETURNING family, user_id AS "userId", client_id AS "clientId"`,
          Schema.decodeUnknown(Schema.Array(ConsumedRow))
        )
        const row = consumed[0]
        if (row !== undefined) {
          yield* sql`INSERT INTO refresh_tokens (jti, family, user_id, client_id, created_at, expires_at)
          VALUES (${next.jti}, ${row.family}, ${row.userId}, ${row.clientId}, ${next.createdAt}, ${next.expiresAt})`
          return { _tag: "Rotated", ...row } as const
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

    const revokeFamily = Effect.fn("AuthStore.revokeFamily")(function* (family: string, now: number) {
      return yield* revokeFamilyQuery(family, now).pipe(Effect.orDie)
    })

    const deleteExpiredRefreshTokens = Effect.fn("AuthStore.deleteExpiredRefreshTokens")(function* (
      before: number
    ) {
      const rows = yield* sql`DELETE FROM refresh_tokens WHERE expires_at < ${before} RETURNING jti`.pipe(
        Effect.orDie
      )
      return rows.length
    })

    return {
      clientAccount,
      accountStatus,
      accountStatuses,
      insertRefreshToken,
      rotateRefreshToken,
      revokeFamily,
      deleteExpiredRefreshTokens
    } satisfies AuthStoreService
  }
)

/** `AuthStore` over the `SqlClient` in context (a migrated database). */
export const AuthStoreLive: Layer.Layer<AuthStore, never, SqlClient.SqlClient> = Layer.effect(
  AuthStore,
  makeAuthStore
)

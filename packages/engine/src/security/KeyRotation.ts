import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { ApiError } from "../domain/Errors.js"
import { credentialsAad, type SecretBoxService } from "./SecretBox.js"
import { Data, Effect } from "effect"

/**
 * Key rotation for exchange credentials at rest: every sealed client secret is opened with the old
 * key ring and sealed again with the new ring's current version, in one transaction. Nothing is
 * written unless every row opened: a row that fails its integrity check stops the rotation with the
 * row named, and the table is left as it was. Rows already under the target version are left alone,
 * so a rotation interrupted (or run twice) is simply run again.
 *
 * The AAD is the engine's: `credentials:<deskId>:<alias>` (SecretBox binds a ciphertext to its row).
 * Soft-deleted rows are rotated too: their ciphertext must not outlive the old key's retirement.
 *
 * The host's `npm run admin -- credentials rotate-key` runs it with the configured ring as both
 * `from` and `to` (every version opens, the highest seals).
 */
export class RotationRefused extends Data.TaggedError("RotationRefused")<{
  readonly credentialsId: number
  readonly reason: string
}> {}

export interface RotationResult {
  readonly rotated: number
  readonly alreadyCurrent: number
}

export const rotateCredentialsKey = (
  from: SecretBoxService,
  to: SecretBoxService
): Effect.Effect<RotationResult, RotationRefused | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rotate = Effect.gen(function* () {
      const rows = yield* sql<{
        id: number | string
        deskId: number | string
        alias: string
        sealed: Uint8Array
      }>`
        SELECT id, desk_id AS "deskId", alias, client_secret_encrypted AS sealed
        FROM exchange_credentials ORDER BY id FOR UPDATE`
      let rotated = 0
      let alreadyCurrent = 0
      for (const row of rows) {
        const sealed = new Uint8Array(row.sealed)
        if (sealed[0] === to.currentVersion) {
          alreadyCurrent++
          continue
        }
        const aad = credentialsAad(Number(row.deskId), row.alias)
        const refuse = (error: ApiError) =>
          new RotationRefused({ credentialsId: Number(row.id), reason: error.message })
        const plaintext = yield* from.open(sealed, aad).pipe(Effect.mapError(refuse))
        const resealed = yield* to.seal(plaintext, aad).pipe(Effect.mapError(refuse))
        // Opened back before writing: a new ring that cannot read its own output must not win.
        yield* to.open(resealed, aad).pipe(Effect.mapError(refuse))
        yield* sql`UPDATE exchange_credentials SET client_secret_encrypted = ${resealed} WHERE id = ${row.id}`
        rotated++
      }
      return { rotated, alreadyCurrent }
    })
    return yield* sql.withTransaction(rotate)
  })

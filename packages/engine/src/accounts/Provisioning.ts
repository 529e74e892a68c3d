import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect, Option } from "effect"

/**
 * The operator's writes of desks' reference data (the host's `npm run admin`): desks, makers and OTC
 * counterparties. Users and API clients are `UserAccounts`'. A serving engine's cache does not see
 * these writes by itself: a host that runs them (its admin socket) then calls
 * `AccountStore.referenceDataChanged`. SQL failures stay failures, for the operator to read.
 */

// The names' rules live with the API's text rules (`api/Names.ts`), where a client can take them.
export { NAME_MAX_LENGTH, nameIssue } from "../api/Names.js"

export interface DeskListing {
  readonly id: number
  readonly name: string
  /** The desk's maker id, when it is a maker. */
  readonly makerId: string | null
}

/** A new desk; answers its id. */
export const createDesk = (name: string): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const now = yield* Clock.currentTimeMillis
    const rows = yield* sql<{
      id: number
    }>`INSERT INTO desks (name, created_at) VALUES (${name}, ${now}) RETURNING id`
    return Number(rows[0]!.id)
  })

/** Every desk with its maker id, by id. */
export const listDesks: Effect.Effect<
  ReadonlyArray<DeskListing>,
  SqlError,
  SqlClient.SqlClient
> = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<DeskListing>`
    SELECT d.id, d.name, m.maker_id AS "makerId" FROM desks d LEFT JOIN makers m ON m.desk_id = d.id ORDER BY d.id`
)

export const deskIdByName = (
  name: string
): Effect.Effect<Option.Option<number>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ id: number }>`SELECT id FROM desks WHERE name = ${name}`
    return rows[0] === undefined ? Option.none() : Option.some(Number(rows[0].id))
  })

/** Makes the desk a maker under `makerId`, named after the desk. */
export const createMaker = (
  deskId: number,
  makerId: string,
  name: string
): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const now = yield* Clock.currentTimeMillis
    yield* sql`INSERT INTO makers (maker_id, desk_id, name, created_at) VALUES (${makerId}, ${deskId}, ${name}, ${now})`
  })

/** Lists `counterpartyDeskId` as an OTC counterparty of `deskId`, or updates its block-trade flag. */
export const addCounterparty = (
  deskId: number,
  counterpartyDeskId: number,
  allowsBlockTrade: boolean
): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const now = yield* Clock.currentTimeMillis
    yield* sql`INSERT INTO otc_counterparties (desk_id, counterparty_desk_id, allows_block_trade, created_at)
          VALUES (${deskId}, ${counterpartyDeskId}, ${allowsBlockTrade}, ${now})
          ON CONFLICT (desk_id, counterparty_desk_id) DO UPDATE SET allows_block_trade = EXCLUDED.allows_block_trade`
  })

import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, Option, Schema } from "effect"
import type { SettlementOption } from "../domain/Primitives.js"
import type { ExecutedBlockTrade } from "../services/Venues.js"
import { waitSpan } from "../services/WaitProbe.js"
import { directRun } from "../storage/DirectSql.js"
import { ExecutedBlockTradeJson, numberBooking, VenueLedger, type VenueLedgerService } from "./VenueLedger.js"

/**
 * The ledger in the database (table `venue_block_trades`), so that executions survive restarts:
 * a retry after a restart finds the trade booked under its key. The unique (venue, key) constraint
 * makes booking atomic across fibers and processes; the row's identity numbers the trade.
 * Database failures are defects: the caller cannot tell whether the booking happened, and finds
 * out with `find` (reconciliation by key).
 */

const decodePayload = Schema.decodeUnknownSync(ExecutedBlockTradeJson)

// node-postgres and PGlite both hand jsonb back parsed; a string would only come from a text cast.
const tradeOf = (payload: unknown): ExecutedBlockTrade =>
  decodePayload(typeof payload === "string" ? JSON.parse(payload) : payload)

// One statement: the trade's number, its ids in the payload (as `numberBooking` gives them) and the
// row. A key booked before (a conflict) writes nothing and reads the earlier booking. Sent as text
// (`storage/DirectSql.ts`): it runs on every settled allocation.
const RECORD = `
  WITH n AS (SELECT nextval(pg_get_serial_sequence('venue_block_trades', 'id')) AS id)
  INSERT INTO venue_block_trades (id, venue, idempotency_key, block_trade_id, payload, created_at)
  SELECT n.id, $1, $2, $1 || '-BT-' || n.id,
    $3::jsonb || jsonb_build_object(
      'blockTradeId', $1 || '-BT-' || n.id,
      'legs', (SELECT coalesce(jsonb_agg(l.leg || jsonb_build_object('tradeId',
          $1 || '-T-' || n.id || '-' || l.position) ORDER BY l.position), '[]'::jsonb)
        FROM jsonb_array_elements($4::jsonb) WITH ORDINALITY AS l (leg, position))),
    $5
  FROM n
  ON CONFLICT (venue, idempotency_key) DO NOTHING
  RETURNING id`

export const makeSqlVenueLedger = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const run = directRun(sql)

  const find = (venue: SettlementOption, key: string) =>
    sql<{ readonly payload: unknown }>`
      SELECT payload FROM venue_block_trades WHERE venue = ${venue} AND idempotency_key = ${key}
    `.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (r) => tradeOf(r.payload))),
      Effect.orDie
    )

  const service: VenueLedgerService = {
    find: (venue, key) => waitSpan("VenueLedger.find")(find(venue, key)),
    record: (booking) =>
      Effect.suspend(() => {
        const { legs, ...rest } = booking
        return run<{ readonly id: number | bigint }>(RECORD, [
          booking.venue,
          booking.idempotencyKey,
          JSON.stringify(rest),
          JSON.stringify(legs),
          booking.executedAt
        ])
      }).pipe(
        Effect.flatMap((inserted) => {
          const row = inserted[0]
          if (row !== undefined) return Effect.succeed(numberBooking(booking, row.id))
          return Effect.flatMap(find(booking.venue, booking.idempotencyKey), (earlier) =>
            Option.match(earlier, {
              onNone: () => Effect.dieMessage("venue_block_trades: key conflicted but no row found"),
              onSome: Effect.succeed
            })
          )
        }),
        Effect.orDie,
        waitSpan("VenueLedger.record")
      ),
    list: (venue) =>
      sql<{ readonly payload: unknown }>`
        SELECT payload FROM venue_block_trades WHERE venue = ${venue} ORDER BY id
      `.pipe(
        Effect.map((rows) => rows.map((r) => tradeOf(r.payload))),
        Effect.orDie,
        waitSpan("VenueLedger.list")
      )
  }
  return service
})

export const SqlVenueLedger = {
  /** The ledger in the database; needs a migrated `SqlClient`. */
  layer: Layer.effect(VenueLedger, makeSqlVenueLedger) satisfies Layer.Layer<
    VenueLedger,
    never,
    SqlClient.SqlClient
  >
}

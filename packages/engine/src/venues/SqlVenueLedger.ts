import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, Option, Schema } from "effect"
import type { SettlementOption } from "../domain/Primitives.js"
import type { ExecutedBlockTrade } from "../services/Venues.js"
import { waitSpan } from "../services/WaitProbe.js"
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

export const makeSqlVenueLedger = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const find = (venue: SettlementOption, key: string) =>
    sql<{ readonly payload: unknown }>`
      SELECT payload FROM venue_block_trades WHERE venue = ${venue} AND idempotency_key = ${key}
    `.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (r) => tradeOf(r.payload))),
      Effect.orDie
    )

  const service: VenueLedgerService = {
    find: (venue, key) => waitSpan("VenueLedger.find")(find(venue, key)),
    // One statement: the trade's number, its ids in the payload (as `numberBooking` gives them) and
    // the row. A key booked before (a conflict) writes nothing and reads the earlier booking.
    record: (booking) =>
      Effect.gen(function* () {
        const { legs, ...rest } = booking
        const inserted = yield* sql<{ readonly id: number | bigint }>`
          WITH n AS (SELECT nextval(pg_get_serial_sequence('venue_block_trades', 'id')) AS id)
          INSERT INTO venue_block_trades (id, venue, idempotency_key, block_trade_id, payload, created_at)
          SELECT n.id, ${booking.venue}, ${booking.idempotencyKey}, ${booking.venue} || '-BT-' || n.id,
            ${JSON.stringify(rest)}::jsonb || jsonb_build_object(
              'blockTradeId', ${booking.venue} || '-BT-' || n.id,
              'legs', (SELECT coalesce(jsonb_agg(l.leg || jsonb_build_object('tradeId',
                  ${booking.venue} || '-T-' || n.id || '-' || l.position) ORDER BY l.position), '[]'::jsonb)
                FROM jsonb_array_elements(${JSON.stringify(legs)}::jsonb) WITH ORDINALITY AS l (leg, position))),
            ${booking.executedAt}
          FROM n
          ON CONFLICT (venue, idempotency_key) DO NOTHING
          RETURNING id
        `
        const row = inserted[0]
        if (row !== undefined) return numberBooking(booking, row.id)
        const earlier = yield* find(booking.venue, booking.idempotencyKey)
        return yield* Option.match(earlier, {
          onNone: () => Effect.dieMessage("venue_block_trades: key conflicted but no row found"),
          onSome: Effect.succeed
        })
      }).pipe(Effect.orDie, waitSpan("VenueLedger.record")),
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

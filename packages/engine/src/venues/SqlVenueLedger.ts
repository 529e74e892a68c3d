import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, Option, Schema } from "effect"
import type { SettlementOption } from "../domain/Primitives.js"
import type { ExecutedBlockTrade } from "../services/Venues.js"
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
    find: (venue, key) => find(venue, key).pipe(Effect.withSpan("VenueLedger.find")),
    record: (booking) =>
      Effect.gen(function* () {
        const [next] = yield* sql<{ readonly id: number | bigint }>`
          SELECT nextval(pg_get_serial_sequence('venue_block_trades', 'id')) AS id
        `
        if (next === undefined) return yield* Effect.dieMessage("venue_block_trades: no identity value")
        const trade = numberBooking(booking, next.id)
        const inserted = yield* sql<{ readonly id: unknown }>`
          INSERT INTO venue_block_trades (id, venue, idempotency_key, block_trade_id, payload, created_at)
          VALUES (${next.id}, ${trade.venue}, ${trade.idempotencyKey}, ${trade.blockTradeId},
                  ${JSON.stringify(trade)}::jsonb, ${trade.executedAt})
          ON CONFLICT (venue, idempotency_key) DO NOTHING
          RETURNING id
        `
        if (inserted.length > 0) return trade
        const earlier = yield* find(booking.venue, booking.idempotencyKey)
        return yield* Option.match(earlier, {
          onNone: () => Effect.dieMessage("venue_block_trades: key conflicted but no row found"),
          onSome: Effect.succeed
        })
      }).pipe(Effect.orDie, Effect.withSpan("VenueLedger.record")),
    list: (venue) =>
      sql<{ readonly payload: unknown }>`
        SELECT payload FROM venue_block_trades WHERE venue = ${venue} ORDER BY id
      `.pipe(
        Effect.map((rows) => rows.map((r) => tradeOf(r.payload))),
        Effect.orDie,
        Effect.withSpan("VenueLedger.list")
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

import { Context, Effect, Layer, Option, Schema } from "effect"
import { Direction, SettlementOption } from "../domain/Primitives.js"
import type { ExecutedBlockTrade } from "../services/Venues.js"

/**
 * The simulated venues' book of executed block trades. Recording is the execution: a block trade
 * exists once it is in the ledger, and the ledger records each (venue, idempotency key) at most
 * once, atomically, so concurrent or repeated executions under one key cannot book twice.
 */

/** A block trade as the venue books it, before the ledger numbers it. */
export interface BlockTradeBooking {
  readonly venue: SettlementOption
  readonly idempotencyKey: string
  readonly executedAt: number
  readonly makerClientId: string
  readonly takerClientId: string
  readonly legs: ReadonlyArray<{
    readonly venueName: string
    readonly direction: Direction
    readonly price: string
    readonly amount: string
  }>
}

export interface VenueLedgerService {
  readonly find: (
    venue: SettlementOption,
    idempotencyKey: string
  ) => Effect.Effect<Option.Option<ExecutedBlockTrade>>
  /**
   * Books the trade under its key and returns it with its ids; if the key is already booked,
   * returns the earlier trade unchanged and books nothing.
   */
  readonly record: (booking: BlockTradeBooking) => Effect.Effect<ExecutedBlockTrade>
  /** Every trade booked on `venue`, oldest first. */
  readonly list: (venue: SettlementOption) => Effect.Effect<ReadonlyArray<ExecutedBlockTrade>>
}

/** The venue's ids for the booking numbered `sequence`: block trade `DBT-BT-7`, its legs `DBT-T-7-1`, … */
export const numberBooking = (booking: BlockTradeBooking, sequence: number | bigint): ExecutedBlockTrade => ({
  venue: booking.venue,
  idempotencyKey: booking.idempotencyKey,
  blockTradeId: `${booking.venue}-BT-${sequence}`,
  executedAt: booking.executedAt,
  legs: booking.legs.map((leg, i) => ({ ...leg, tradeId: `${booking.venue}-T-${sequence}-${i + 1}` })),
  makerClientId: booking.makerClientId,
  takerClientId: booking.takerClientId
})

/** The stored form of an executed block trade (the ledger's `payload`). */
export const ExecutedBlockTradeJson = Schema.Struct({
  venue: SettlementOption,
  idempotencyKey: Schema.String,
  blockTradeId: Schema.String,
  executedAt: Schema.Number,
  legs: Schema.Array(
    Schema.Struct({
      venueName: Schema.String,
      direction: Direction,
      price: Schema.String,
      amount: Schema.String,
      tradeId: Schema.String
    })
  ),
  makerClientId: Schema.String,
  takerClientId: Schema.String
})

export const makeMemoryVenueLedger = (): VenueLedgerService => {
  const byKey = new Map<string, ExecutedBlockTrade>()
  const booked: Array<ExecutedBlockTrade> = []
  const keyOf = (venue: SettlementOption, key: string) => `${venue}|${key}`
  return {
    find: (venue, key) => Effect.sync(() => Option.fromNullable(byKey.get(keyOf(venue, key)))),
    // One synchronous step: nothing can interleave between the check and the booking.
    record: (booking) =>
      Effect.sync(() => {
        const key = keyOf(booking.venue, booking.idempotencyKey)
        const earlier = byKey.get(key)
        if (earlier !== undefined) return earlier
        const trade = numberBooking(booking, booked.length + 1)
        byKey.set(key, trade)
        booked.push(trade)
        return trade
      }),
    list: (venue) => Effect.sync(() => booked.filter((t) => t.venue === venue))
  }
}

export class VenueLedger extends Context.Tag("rfq/VenueLedger")<VenueLedger, VenueLedgerService>() {
  /** A ledger in memory: lost on restart; for tests and throw-away runs. */
  static readonly memory: Layer.Layer<VenueLedger> = Layer.sync(VenueLedger, makeMemoryVenueLedger)
}

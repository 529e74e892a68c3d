import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { type RfqEvent, type RfqSnapshot, restoreSnapshot, stateOf, step } from "../../src/rfq/RfqMachine.js"
import type { QuoteRecord, RfqRecord } from "../../src/rfq/RfqRecord.js"
import { RfqStore } from "../../src/rfq/RfqStore.js"
import { looseMarket, makerCaller, pendingTrade, type ReferenceData, takerCaller } from "./records.js"

/**
 * Drives RFQs through the real machine, committing every step through the `RfqStore` in context,
 * the way the engine's actors do: storage tests then compare what the store returns with the
 * machine's own snapshot.
 */

/** Records are JSON data: optional fields are absent rather than `undefined`. */
export const json = <A>(a: A): A => JSON.parse(JSON.stringify(a))

/** An RFQ driven through the real machine, every step committed through the store. */
export interface Driven {
  readonly rfq: RfqRecord
  snapshot: RfqSnapshot
  seq: number
  readonly events: Array<string>
}

export const start = (rfq: RfqRecord) =>
  Effect.gen(function* () {
    const store = yield* RfqStore
    yield* store.insertRfq(rfq, `hash-${rfq.id}`)
    const driven: Driven = {
      rfq,
      snapshot: restoreSnapshot("open", { rfq, quotes: {} }),
      seq: 1,
      events: ["CREATE"]
    }
    return driven
  })

export const send = (d: Driven, event: RfqEvent) =>
  Effect.gen(function* () {
    const store = yield* RfqStore
    const { next, effects, changed } = step(d.snapshot, event)
    assert.isTrue(changed, `the machine took ${event.type}`)
    yield* store.applyStep(d.rfq.id, d.seq + 1, event.type, stateOf(next), effects)
    d.snapshot = next
    d.seq += 1
    d.events.push(event.type)
  })

/** What the store must return for a driven RFQ: the machine's own value, context and seq. */
export const expected = (d: Driven) => ({
  value: stateOf(d.snapshot),
  state: json(d.snapshot.context),
  seq: d.seq
})

export const put = (d: Driven, ref: ReferenceData, quote: QuoteRecord) =>
  send(d, {
    type: "QUOTE.PUT",
    candidate: {
      quote,
      caller: makerCaller(ref.makers.find((m) => m.makerId === quote.makerId)!),
      legMarkets: d.rfq.legs.map(() => looseMarket),
      now: quote.updatedAt
    }
  })

export const accept = (d: Driven, ref: ReferenceData, quote: QuoteRecord, now: number) =>
  Effect.gen(function* () {
    const store = yield* RfqStore
    const tradeId = yield* store.nextTradeId
    const accounts = d.rfq.settlementAccounts[quote.settlementOption] ?? []
    const allocationIds = yield* Effect.forEach(accounts, () => store.nextAllocationId)
    const trade = pendingTrade(d.rfq, quote, tradeId, allocationIds, now)
    yield* send(d, {
      type: "ACCEPT",
      quoteId: quote.id,
      caller: takerCaller(ref.takers.find((t) => t.deskId === d.rfq.takerDeskId) ?? ref.takers[0]),
      now,
      trade
    })
    return trade
  })

import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Option, Queue, TestClock, TestServices } from "effect"
import { decodeRequest } from "../../src/api/Decode.js"
import { ListQuotesQuery } from "../../src/api/Queries.js"
import { RfqStore } from "../../src/rfq/RfqStore.js"
import type { EngineEvent } from "../../src/services/Events.js"
import { createQuote, createSpreadRfq, type RunningEngine } from "../model/RfqSystem.js"
import { rfqTtlMs, seedAndResolve, startEngine, testEpoch } from "../support/engineHarness.js"
import { testDatabases } from "../support/TestDatabases.js"

/**
 * Expiry across a restart. What the engine did on its own is read from storage, not through the
 * engine's reads: a read of an RFQ past its expiry expires it first, which would hide a missing
 * timer.
 */

/** The RFQ's state as stored, read past the engine. */
const storedValue = (running: RunningEngine, rfqId: number) =>
  Effect.map(
    Context.get(running.context as unknown as Context.Context<RfqStore>, RfqStore).load(rfqId),
    (stored) => Option.map(stored, (s) => s.value)
  )

/**
 * Waits for the engine's own event saying the RFQ expired. The real-time bound only turns a timer
 * that never fires into a readable failure instead of a hung test.
 */
const expiryOf = (events: Queue.Dequeue<EngineEvent>, rfqId: number) =>
  Effect.iterate(undefined as EngineEvent | undefined, {
    while: (e) => !(e?.type === "rfq" && e.view.rfq.id === rfqId && e.view.status === "expired"),
    body: () => Queue.take(events)
  }).pipe(
    TestServices.provideWithLive(
      Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => new Error(`rfq ${rfqId} never expired`) })
    )
  )

describe.each(testDatabases)("expiry across a restart on $name", ({ layer }) => {
  it.effect(
    "an expiry passed while the engine was down fires as it starts; open RFQs' timers are armed again",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const first = yield* startEngine(venueAccounts)
        const early = yield* createSpreadRfq(first.engine, callers, "split")
        const quoted = yield* createQuote(first, callers, "maker1", early, {
          direction: "sell",
          amount: 100,
          label: "early"
        })
        yield* TestClock.adjust(rfqTtlMs / 2)
        const late = yield* createSpreadRfq(first.engine, callers, "single")
        yield* createQuote(first, callers, "maker2", late, { direction: "buy", amount: 100 })
        yield* first.stop

        // Down past the first expiry only.
        yield* TestClock.adjust(rfqTtlMs / 2 + 1)
        const second = yield* startEngine(venueAccounts)
        assert.deepStrictEqual(yield* storedValue(second, early), Option.some("expired"), "fired at start")
        assert.deepStrictEqual(yield* storedValue(second, late), Option.some("open"))
        const query = yield* decodeRequest(ListQuotesQuery, { rfqId: early })
        const quotes = (yield* second.engine.listQuotes(callers.maker1, query)).results as Array<any>
        assert.deepStrictEqual(
          quotes.map((q) => [q.rfqQuoteId, q.status]),
          [[quoted, "expired"]]
        )
        // The expired quote's label is free again.
        yield* createQuote(second, callers, "maker1", late, {
          direction: "sell",
          amount: 100,
          label: "early"
        })

        // The second RFQ's timer was armed again by the restart: it fires with no read.
        yield* Effect.scoped(
          Effect.gen(function* () {
            const events = yield* second.engine.events
            yield* TestClock.adjust(rfqTtlMs / 2)
            yield* expiryOf(events, late)
          })
        )
        assert.deepStrictEqual(yield* storedValue(second, late), Option.some("expired"))
        yield* second.stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )
})

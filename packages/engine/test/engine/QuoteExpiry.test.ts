import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Option, TestClock } from "effect"
import { decodeRequest } from "../../src/api/Decode.js"
import { ListQuotesQuery } from "../../src/api/Queries.js"
import { renderEvent } from "../../src/services/Events.js"
import type { RunningEngine } from "../model/RfqSystem.js"
import {
  createQuote,
  createRfq,
  nextEvent,
  quoteExpiredEvent,
  quoteExpirySteps,
  storedStatus,
  updateQuote
} from "../support/expiryTape.js"
import { rfqTtlMs, seedAndResolve, startEngine, testEpoch } from "../support/engineHarness.js"
import { testDatabases } from "../support/TestDatabases.js"

/**
 * Quote expiry (issue 16, item 2) with Effect's TestClock: a quote's `validUntil` fires through the
 * RFQ expiry scheduler exactly once, survives a restart, is checked at accept to the millisecond,
 * and moves with an update. What the engine did on its own is read from storage, past the engine:
 * an engine read would itself expire what is due and hide a timer that never fired.
 */

const failureOf = <A, E>(either: Either.Either<A, E>) => (Either.isLeft(either) ? either.left : undefined)

describe.each(testDatabases)("quote expiry on $name", ({ layer }) => {
  it.effect(
    "a quote turns expired at its validUntil, exactly once: updated events, out of the book, label free",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const running: RunningEngine = yield* startEngine(venueAccounts)
        const rfqId = yield* createRfq(running, callers)
        const validUntil = testEpoch + 10_000
        const quoteId = yield* createQuote(running, callers, "maker1", rfqId, { label: "vu-1", validUntil })
        // Every quote element shows it while it stands.
        const book = (yield* running.engine.takerQuotes(callers.taker, rfqId)) as Array<any>
        assert.strictEqual(book[0].asks[0].validUntil, validUntil)
        const rfq = (yield* running.engine.getRfq(callers.taker, rfqId)) as any
        assert.strictEqual(rfq.quotes[0].validUntil, validUntil)
        const listed = yield* running.engine.listQuotes(
          callers.maker1,
          yield* decodeRequest(ListQuotesQuery, { rfqId })
        )
        assert.strictEqual((listed.results[0] as any).validUntil, validUntil)

        yield* Effect.scoped(
          Effect.gen(function* () {
            const events = yield* running.engine.events
            yield* TestClock.adjust(9_999)
            assert.deepStrictEqual(yield* storedStatus(running, quoteId), Option.some("active"), "not before")
            yield* TestClock.adjust(1)
            const expired = yield* nextEvent(events, quoteExpiredEvent(quoteId), "the quote's expiry")
            assert.strictEqual(expired.type === "quote" && expired.event, "updated")
            // Both quote channels say `updated` with the new state.
            const asMaker = renderEvent(expired, "rfq_quote.maker", callers.maker1) as any
            assert.deepStrictEqual(
              [asMaker.event, asMaker.status, asMaker.validUntil],
              ["updated", "expired", validUntil]
            )
            const asTaker = renderEvent(expired, "rfq_quote.taker", callers.taker) as any
            assert.deepStrictEqual([asTaker.event, asTaker.status], ["updated", "expired"])
            assert.isUndefined(renderEvent(expired, "rfq_quote.maker", callers.maker2))
          })
        )
        assert.deepStrictEqual(yield* storedStatus(running, quoteId), Option.some("expired"))
        // The RFQ stays open; the book no longer holds the quote; its label is free.
        const after = (yield* running.engine.getRfq(callers.taker, rfqId)) as any
        assert.strictEqual(after.status, "open")
        assert.deepStrictEqual(after.quotes, [])
        assert.deepStrictEqual(yield* running.engine.takerQuotes(callers.taker, rfqId), [])
        const refused = failureOf(yield* Effect.either(running.engine.trade(callers.taker, quoteId)))
        assert.strictEqual(refused?.message, "quote has expired")
        // An outsider learns nothing of the quote.
        const outsider = failureOf(yield* Effect.either(running.engine.trade(callers.maker2, quoteId)))
        assert.strictEqual(outsider?.message, "record not found")
        const again = yield* createQuote(running, callers, "maker1", rfqId, { label: "vu-1" })
        assert.isAbove(again, 0)

        // Exactly once: time passing, reads and commands find nothing more to expire.
        yield* TestClock.adjust(60_000)
        yield* running.engine.getRfq(callers.taker, rfqId)
        assert.strictEqual(yield* quoteExpirySteps(rfqId), 1)
        const updated = failureOf(yield* Effect.either(updateQuote(running, callers, "maker1", quoteId)))
        assert.strictEqual(updated?.status, 404)
        yield* running.stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )

  it.effect(
    "accept at the boundary: one millisecond before validUntil trades, at validUntil it is refused",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const running: RunningEngine = yield* startEngine(venueAccounts)
        const early = yield* createRfq(running, callers)
        const late = yield* createRfq(running, callers)
        const validUntil = testEpoch + 5_000
        const first = yield* createQuote(running, callers, "maker1", early, { validUntil })
        const second = yield* createQuote(running, callers, "maker2", late, { validUntil })
        yield* TestClock.adjust(4_999)
        const traded = (yield* running.engine.trade(callers.taker, first)) as any
        assert.strictEqual(traded.rfqId, early)
        yield* TestClock.adjust(1)
        const refused = failureOf(yield* Effect.either(running.engine.trade(callers.taker, second)))
        assert.deepStrictEqual([refused?.status, refused?.message], [400, "quote has expired"])
        // The RFQ itself is still open and takes new quotes.
        assert.strictEqual(((yield* running.engine.getRfq(callers.taker, late)) as any).status, "open")
        assert.strictEqual(yield* quoteExpirySteps(late), 1)
        assert.strictEqual(yield* quoteExpirySteps(early), 0, "a traded quote never expires")
        yield* running.stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )

  it.effect(
    "an update moves validUntil (later, then earlier), keeps it when absent; the rules bound it",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const running: RunningEngine = yield* startEngine(venueAccounts)
        const rfqId = yield* createRfq(running, callers)
        const expiresAt = testEpoch + rfqTtlMs
        const quoteId = yield* createQuote(running, callers, "maker1", rfqId, {
          validUntil: testEpoch + 10_000
        })
        const moved = yield* updateQuote(running, callers, "maker1", quoteId, {
          validUntil: testEpoch + 20_000
        })
        assert.strictEqual(moved.validUntil, testEpoch + 20_000)
        yield* TestClock.adjust(10_000)
        assert.deepStrictEqual(
          yield* storedStatus(running, quoteId),
          Option.some("active"),
          "the old instant passed"
        )
        // Absent: kept.
        const kept = yield* updateQuote(running, callers, "maker1", quoteId)
        assert.strictEqual(kept.validUntil, testEpoch + 20_000)
        // Earlier again: fires at the new instant.
        yield* updateQuote(running, callers, "maker1", quoteId, { validUntil: testEpoch + 15_000 })
        yield* Effect.scoped(
          Effect.gen(function* () {
            const events = yield* running.engine.events
            yield* TestClock.adjust(5_000)
            yield* nextEvent(events, quoteExpiredEvent(quoteId), "the moved expiry")
          })
        )
        assert.deepStrictEqual(yield* storedStatus(running, quoteId), Option.some("expired"))
        yield* TestClock.adjust(10_000)
        assert.strictEqual(yield* quoteExpirySteps(rfqId), 1)

        // Rules: after now, at most expiresAt (equal is fine), on create and update alike.
        const now = testEpoch + 25_000
        const bad = (validUntil: number) =>
          Effect.map(
            Effect.either(createQuote(running, callers, "maker2", rfqId, { validUntil })),
            (e) => failureOf(e)?.reason?.[0]
          )
        assert.strictEqual(yield* bad(now), `validUntil: ${now} must be after now (${now})`)
        assert.strictEqual(yield* bad(now - 1), `validUntil: ${now - 1} must be after now (${now})`)
        assert.strictEqual(
          yield* bad(expiresAt + 1),
          `validUntil: ${expiresAt + 1} must be at most the RFQ's expiresAt (${expiresAt})`
        )
        const atExpiry = yield* createQuote(running, callers, "maker2", rfqId, { validUntil: expiresAt })
        const tooLate = failureOf(
          yield* Effect.either(
            updateQuote(running, callers, "maker2", atExpiry, { validUntil: expiresAt + 1 })
          )
        )
        assert.strictEqual(tooLate?.message, "invalid request")
        // The RFQ's own expiry closes a quote valid until then with it (one expiry, as the RFQ's).
        yield* Effect.scoped(
          Effect.gen(function* () {
            const events = yield* running.engine.events
            yield* TestClock.adjust(expiresAt - now)
            yield* nextEvent(events, quoteExpiredEvent(atExpiry), "the RFQ's expiry")
          })
        )
        assert.deepStrictEqual(yield* storedStatus(running, atExpiry), Option.some("expired"))
        assert.strictEqual(((yield* running.engine.getRfq(callers.taker, rfqId)) as any).status, "expired")
        yield* running.stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )

  it.effect(
    "a restart re-arms validUntil timers and expires, once, what passed while down",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const first: RunningEngine = yield* startEngine(venueAccounts)
        const rfqId = yield* createRfq(first, callers)
        const soon = yield* createQuote(first, callers, "maker1", rfqId, {
          label: "soon",
          validUntil: testEpoch + 7_000
        })
        const later = yield* createQuote(first, callers, "maker2", rfqId, { validUntil: testEpoch + 20_000 })
        yield* first.stop

        // Down past the first instant only.
        yield* TestClock.adjust(10_000)
        const second: RunningEngine = yield* startEngine(venueAccounts)
        assert.deepStrictEqual(yield* storedStatus(second, soon), Option.some("expired"), "expired at start")
        assert.deepStrictEqual(yield* storedStatus(second, later), Option.some("active"))
        const refused = failureOf(yield* Effect.either(second.engine.trade(callers.taker, soon)))
        assert.strictEqual(refused?.message, "quote has expired")
        // Its label is free again.
        yield* createQuote(second, callers, "maker1", rfqId, { label: "soon" })

        // The second quote's timer was armed again by the start: it fires with no read.
        yield* Effect.scoped(
          Effect.gen(function* () {
            const events = yield* second.engine.events
            yield* TestClock.adjust(10_000)
            yield* nextEvent(events, quoteExpiredEvent(later), "the re-armed expiry")
          })
        )
        assert.deepStrictEqual(yield* storedStatus(second, later), Option.some("expired"))
        yield* second.stop
        // Another restart finds nothing more to expire.
        const third: RunningEngine = yield* startEngine(venueAccounts)
        yield* TestClock.adjust(1_000)
        assert.strictEqual(yield* quoteExpirySteps(rfqId), 2)
        yield* third.stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )
})

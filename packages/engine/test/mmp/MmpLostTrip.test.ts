import { assert, describe, it } from "@effect/vitest"
import { BigDecimal, Clock, Context, Effect, TestClock } from "effect"
import { decodeRequest } from "../../src/api/Decode.js"
import { MmpCurrencyRequest } from "../../src/api/MmpRequests.js"
import { MMP_CACHE_TTL_MS } from "../../src/mmp/Mmp.js"
import { MmpNotices } from "../../src/mmp/MmpNotices.js"
import { makeSqlMmpStore } from "../../src/mmp/SqlMmpStore.js"
import { createQuote, createSpreadRfq, dbtLedger, rfqAmount, updateQuote } from "../model/RfqSystem.js"
import { seedAndResolve, startEngine, testEpoch } from "../support/engineHarness.js"
import { testDatabases } from "../support/TestDatabases.js"
import { awaitCancelled, configure, listen, outcome, quoteStatuses } from "./support.js"

/**
 * A trip whose cancellations never ran: the trip is committed (by another host's accept, through
 * the store's own admission) and its notice is lost, or the host dies between the commit and the
 * cancellations. The desk's quotes active at the trip must never trade, not even after the reset:
 * refused under the desk's lock and cancelled at the accept, and closed at the next restore. A
 * quote put after the reset trades.
 */

const ask = { direction: "sell", amount: rfqAmount } as const
const one = BigDecimal.unsafeFromString("1")

/** Another host's accept trips the desk (one fill, a limit of one); its notice never arrives here. */
const tripElsewhere = (deskId: number) =>
  Effect.gen(function* () {
    const store = yield* makeSqlMmpStore
    const at = yield* Clock.currentTimeMillis
    const admission = yield* store.admit({
      deskId,
      baseCurrency: "BTC",
      tradeId: 900_000_000 + Math.floor(Math.random() * 100_000_000),
      rfqId: 900_000_000,
      at,
      quotePutAt: at,
      amount: one,
      delta: one
    })
    assert.strictEqual(
      admission._tag === "Admitted" ? admission.tripped?.limit : admission._tag,
      "tradeCount"
    )
  })

const untilReset = { baseCurrency: "BTC", intervalMs: 60_000, frozenMs: 0, tradeCountLimit: 1 }

describe.each(testDatabases)("mmp: a trip whose cancellations were lost, on $name", ({ layer }) => {
  it.scoped(
    "notice lost: after the reset the stale quote is refused and cancelled; a quote put after the trip trades",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const running = yield* startEngine(venueAccounts)
        const btc = yield* decodeRequest(MmpCurrencyRequest, { baseCurrency: "BTC" })
        yield* configure(running, callers.maker1, untilReset)
        const stale = yield* createSpreadRfq(running.engine, callers, "single")
        const fresh = yield* createSpreadRfq(running.engine, callers, "single")
        const staleQuote = yield* createQuote(running, callers, "maker1", stale, ask)
        const freshQuote = yield* createQuote(running, callers, "maker1", fresh, ask)
        const other = yield* createQuote(running, callers, "maker2", stale, ask)

        yield* TestClock.adjust(10)
        yield* tripElsewhere(callers.maker1.deskId)
        // Nothing cancelled them here: the notice never came.
        assert.deepStrictEqual(yield* quoteStatuses(running, callers.maker1, stale), {
          [staleQuote]: "active"
        })
        yield* TestClock.adjust(MMP_CACHE_TTL_MS)
        assert.strictEqual(
          yield* outcome(updateQuote(running, callers, "maker1", freshQuote, { amount: 50 })),
          "mmp frozen"
        )
        assert.strictEqual(yield* outcome(running.engine.trade(callers.taker, staleQuote)), "mmp frozen")
        assert.deepStrictEqual(yield* quoteStatuses(running, callers.maker1, stale), {
          [staleQuote]: "cancelled"
        })

        // The same after the reset, for a quote that was still active at the trip: refused, cancelled.
        const staleToo = yield* createSpreadRfq(running.engine, callers, "single")
        yield* running.engine.resetMmp(callers.maker1, btc)
        yield* TestClock.adjust(1)
        assert.strictEqual(yield* outcome(running.engine.trade(callers.taker, freshQuote)), "mmp frozen")
        assert.deepStrictEqual(yield* quoteStatuses(running, callers.maker1, fresh), {
          [freshQuote]: "cancelled"
        })
        assert.strictEqual((yield* dbtLedger(running)).length, 0)

        // Quotes put after the reset trade; another desk's quote from before was never barred.
        const again = yield* createQuote(running, callers, "maker1", staleToo, ask)
        yield* TestClock.adjust(1)
        assert.strictEqual(yield* outcome(running.engine.trade(callers.taker, again)), "ok")
        assert.strictEqual(yield* outcome(running.engine.trade(callers.taker, other)), "ok")
        assert.strictEqual((yield* dbtLedger(running)).length, 2)
        yield* running.stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )

  it.scoped(
    "an update after the reset makes a quote from before the trip tradeable again",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const running = yield* startEngine(venueAccounts)
        const btc = yield* decodeRequest(MmpCurrencyRequest, { baseCurrency: "BTC" })
        yield* configure(running, callers.maker1, untilReset)
        const rfq = yield* createSpreadRfq(running.engine, callers, "single")
        const quote = yield* createQuote(running, callers, "maker1", rfq, ask)
        yield* TestClock.adjust(10)
        yield* tripElsewhere(callers.maker1.deskId)
        yield* running.engine.resetMmp(callers.maker1, btc)
        yield* TestClock.adjust(1)
        // Put again after the thaw: the maker stands by this price now.
        yield* updateQuote(running, callers, "maker1", quote, { amount: rfqAmount })
        yield* TestClock.adjust(1)
        assert.strictEqual(yield* outcome(running.engine.trade(callers.taker, quote)), "ok")
        assert.strictEqual((yield* dbtLedger(running)).length, 1)
        yield* running.stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )

  it.scoped(
    "a trip's notice heard late, after a reset: its pass cancels the stale quotes and spares those put since",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const running = yield* startEngine(venueAccounts)
        const btc = yield* decodeRequest(MmpCurrencyRequest, { baseCurrency: "BTC" })
        yield* configure(running, callers.maker1, untilReset)
        const rfqs = [
          yield* createSpreadRfq(running.engine, callers, "single"),
          yield* createSpreadRfq(running.engine, callers, "single")
        ]
        const stale = yield* createQuote(running, callers, "maker1", rfqs[0]!, ask)
        yield* TestClock.adjust(10)
        const trippedAt = yield* Clock.currentTimeMillis
        yield* tripElsewhere(callers.maker1.deskId)
        yield* running.engine.resetMmp(callers.maker1, btc)
        yield* TestClock.adjust(1)
        const since = yield* createQuote(running, callers, "maker1", rfqs[1]!, ask)
        const witness = yield* createQuote(running, callers, "maker2", rfqs[1]!, ask)
        const heard = yield* listen(running)
        const notices = Context.get(running.context as unknown as Context.Context<MmpNotices>, MmpNotices)
        const trip = (deskId: number, at: number) =>
          notices.announce({
            type: "mmp",
            event: "tripped",
            deskId,
            baseCurrency: "BTC",
            at,
            limit: "tradeCount",
            window: { amount: "1", delta: "1", trades: 1 }
          })
        yield* trip(callers.maker1.deskId, trippedAt)
        // Notices are handled one after the other: once the second pass cancelled its quote (a desk
        // without config: the notice's own trip bars it), the first pass is over.
        yield* trip(callers.maker2.deskId, yield* Clock.currentTimeMillis)
        yield* awaitCancelled(heard.events, [stale, witness])
        assert.deepStrictEqual(yield* quoteStatuses(running, callers.maker1, rfqs[0]!), {
          [stale]: "cancelled"
        })
        assert.deepStrictEqual(yield* quoteStatuses(running, callers.maker1, rfqs[1]!), { [since]: "active" })
        assert.strictEqual(yield* outcome(running.engine.trade(callers.taker, since)), "ok")
        yield* running.stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )

  it.scoped(
    "the host dies between the trip's commit and its cancellations: the restore closes the stale quotes, and they never trade after a reset",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        let running = yield* startEngine(venueAccounts)
        const btc = yield* decodeRequest(MmpCurrencyRequest, { baseCurrency: "BTC" })
        yield* configure(running, callers.maker1, untilReset)
        const rfqs = [
          yield* createSpreadRfq(running.engine, callers, "single"),
          yield* createSpreadRfq(running.engine, callers, "single")
        ]
        const stale = [
          yield* createQuote(running, callers, "maker1", rfqs[0]!, ask),
          yield* createQuote(running, callers, "maker1", rfqs[1]!, ask)
        ]
        const other = yield* createQuote(running, callers, "maker2", rfqs[0]!, ask)

        yield* TestClock.adjust(10)
        yield* running.stop
        yield* tripElsewhere(callers.maker1.deskId)
        running = yield* startEngine(venueAccounts)
        assert.deepStrictEqual(yield* quoteStatuses(running, callers.maker1, rfqs[0]!), {
          [stale[0]!]: "cancelled"
        })
        assert.deepStrictEqual(yield* quoteStatuses(running, callers.maker1, rfqs[1]!), {
          [stale[1]!]: "cancelled"
        })
        assert.deepStrictEqual(yield* quoteStatuses(running, callers.maker2, rfqs[0]!), { [other]: "active" })

        yield* running.engine.resetMmp(callers.maker1, btc)
        yield* TestClock.adjust(1)
        for (const quote of stale)
          assert.notStrictEqual(yield* outcome(running.engine.trade(callers.taker, quote)), "ok")
        assert.strictEqual((yield* dbtLedger(running)).length, 0)
        const again = yield* createQuote(running, callers, "maker1", rfqs[1]!, ask)
        yield* TestClock.adjust(1)
        assert.strictEqual(yield* outcome(running.engine.trade(callers.taker, again)), "ok")
        yield* running.stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )
})

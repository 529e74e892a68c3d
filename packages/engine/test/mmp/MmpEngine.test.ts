import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, TestClock } from "effect"
import { decodeRequest } from "../../src/api/Decode.js"
import { MmpConfigRequest, MmpCurrencyRequest } from "../../src/api/MmpRequests.js"
import { MMP_CACHE_TTL_MS } from "../../src/mmp/Mmp.js"
import { createQuote, createSpreadRfq, dbtLedger, rfqAmount, updateQuote } from "../model/RfqSystem.js"
import { seedAndResolve, startEngine, testEpoch } from "../support/engineHarness.js"
import { testDatabases } from "../support/TestDatabases.js"
import { awaitCancelled, configure, listen, nextNotice, outcome, quoteStatuses } from "./support.js"

/**
 * Market-maker protection through the engine's front door: configs and their validation, a trip
 * (the desk's quotes in that currency cancelled with their events, new quotes and updates refused
 * with `mmp frozen`, the trip told on the notices), the thaw by its timer under `TestClock`, a
 * freeze until reset, partial and failed fills, a trip that another host wrote (its notice lost),
 * and a restart that keeps the config, the freeze and its timer.
 */

const ask = { direction: "sell", amount: rfqAmount } as const

describe.each(testDatabases)("market-maker protection in the engine on $name", ({ layer }) => {
  it.scoped(
    "configs: validated, per maker desk, viewers read only, non-makers refused",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const running = yield* startEngine(venueAccounts)
        const { engine } = running
        const decode = (body: unknown) =>
          Effect.map(Effect.either(decodeRequest(MmpConfigRequest, body)), (r) =>
            Either.isLeft(r) ? [r.left.message, ...(r.left.reason ?? [])].join(" | ") : "ok"
          )
        const base = { baseCurrency: "BTC", intervalMs: 1000, frozenMs: 0 }
        assert.match(yield* decode(base), /at least one of amountLimit, deltaLimit, tradeCountLimit/)
        assert.match(
          yield* decode({ ...base, intervalMs: 0, tradeCountLimit: 1 }),
          /intervalMs.*from 1 to 86400000/
        )
        assert.match(yield* decode({ ...base, intervalMs: 1.5, tradeCountLimit: 1 }), /intervalMs/)
        assert.match(
          yield* decode({ ...base, frozenMs: -1, tradeCountLimit: 1 }),
          /frozenMs.*from 0 to 86400000/
        )
        assert.match(yield* decode({ ...base, amountLimit: 0 }), /amountLimit.*greater than 0/)
        assert.match(yield* decode({ ...base, deltaLimit: 0.123456789 }), /deltaLimit.*8 decimal places/)
        assert.match(yield* decode({ ...base, tradeCountLimit: "5" }), /tradeCountLimit.*expected an integer/)
        assert.match(yield* decode({ ...base, baseCurrency: "DOGE", tradeCountLimit: 1 }), /baseCurrency/)
        assert.match(yield* decode({ ...base, baseCurrency: "", tradeCountLimit: 1 }), /^empty value/)

        const set = yield* configure(running, callers.maker1, { ...base, amountLimit: 0.1, deltaLimit: 2.5 })
        assert.deepStrictEqual(set, { ...base, amountLimit: 0.1, deltaLimit: 2.5 })
        yield* configure(running, callers.maker1, {
          ...base,
          baseCurrency: "ETH",
          intervalMs: 5,
          tradeCountLimit: 3
        })
        assert.deepStrictEqual(yield* engine.mmpConfig(callers.maker1), [
          { ...base, amountLimit: 0.1, deltaLimit: 2.5 },
          { baseCurrency: "ETH", intervalMs: 5, frozenMs: 0, tradeCountLimit: 3 }
        ])
        // Replacing keeps one row per currency; another desk sees only its own.
        yield* configure(running, callers.maker1, { ...base, tradeCountLimit: 7 })
        assert.deepStrictEqual((yield* engine.mmpConfig(callers.maker1))[0], { ...base, tradeCountLimit: 7 })
        assert.deepStrictEqual(yield* engine.mmpConfig(callers.maker2), [])
        assert.deepStrictEqual(yield* engine.mmpStatus(callers.maker2), [])

        const viewer = { ...callers.maker1, roles: ["viewer"] as const }
        assert.strictEqual((yield* engine.mmpConfig(viewer)).length, 2)
        assert.strictEqual((yield* engine.mmpStatus(viewer)).length, 2)
        const btc = yield* decodeRequest(MmpCurrencyRequest, { baseCurrency: "BTC" })
        assert.strictEqual(
          yield* outcome(configure(running, viewer, { ...base, tradeCountLimit: 1 })),
          "insufficient permissions"
        )
        assert.strictEqual(yield* outcome(engine.resetMmp(viewer, btc)), "insufficient permissions")
        assert.strictEqual(yield* outcome(engine.deleteMmpConfig(viewer, btc)), "insufficient permissions")
        assert.deepStrictEqual(yield* engine.mmpStatus(callers.taker), [])
        assert.deepStrictEqual(yield* engine.mmpConfig(callers.viewer), [])
        assert.strictEqual(
          yield* outcome(configure(running, callers.taker, { ...base, tradeCountLimit: 1 })),
          "insufficient permissions"
        )

        assert.strictEqual(
          (yield* engine.deleteMmpConfig(callers.maker1, btc)).message,
          "mmp config for BTC deleted"
        )
        assert.strictEqual(yield* outcome(engine.deleteMmpConfig(callers.maker1, btc)), "record not found")
        assert.strictEqual(yield* outcome(engine.resetMmp(callers.maker1, btc)), "record not found")
        assert.deepStrictEqual((yield* engine.mmpConfig(callers.maker1)).length, 1)
        yield* running.stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )

  it.scoped(
    "a trip cancels the desk's quotes in that currency, refuses new quotes and updates, and thaws on its timer",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const running = yield* startEngine(venueAccounts)
        const { engine } = running
        const heard = yield* listen(running)
        yield* configure(running, callers.maker1, {
          baseCurrency: "BTC",
          intervalMs: 60_000,
          frozenMs: 30_000,
          tradeCountLimit: 2
        })
        const rfqs = []
        for (let i = 0; i < 4; i++) rfqs.push(yield* createSpreadRfq(engine, callers, "single"))
        const quotes = []
        for (const rfqId of rfqs) quotes.push(yield* createQuote(running, callers, "maker1", rfqId, ask))
        const other = yield* createQuote(running, callers, "maker2", rfqs[2]!, ask)

        yield* engine.trade(callers.taker, quotes[0]!)
        const [one] = yield* engine.mmpStatus(callers.maker1)
        assert.deepInclude(one as object, { baseCurrency: "BTC", frozen: false })
        assert.strictEqual((one as any).window.trades, 1)
        assert.strictEqual((one as any).window.amount, rfqAmount)
        assert.isAbove((one as any).window.delta, 0)

        const trippedAt = testEpoch
        yield* engine.trade(callers.taker, quotes[1]!)
        const trip = yield* nextNotice(heard.notices, "tripped")
        assert.deepInclude(trip, {
          deskId: callers.maker1.deskId,
          baseCurrency: "BTC",
          limit: "tradeCount",
          frozenUntil: trippedAt + 30_000
        })
        assert.strictEqual(trip.window.trades, 2)
        assert.strictEqual(Number(trip.window.amount), 2 * rfqAmount)
        yield* awaitCancelled(heard.events, [quotes[2]!, quotes[3]!])
        assert.deepStrictEqual(yield* quoteStatuses(running, callers.maker1, rfqs[2]!), {
          [quotes[2]!]: "cancelled"
        })
        assert.deepStrictEqual(yield* quoteStatuses(running, callers.maker2, rfqs[2]!), { [other]: "active" })

        const [frozen] = yield* engine.mmpStatus(callers.maker1)
        assert.deepStrictEqual(frozen, {
          baseCurrency: "BTC",
          frozen: true,
          frozenUntil: trippedAt + 30_000,
          window: { amount: 2 * rfqAmount, delta: (one as any).window.delta * 2, trades: 2 }
        })
        assert.strictEqual(
          yield* outcome(createQuote(running, callers, "maker1", rfqs[3]!, ask)),
          "mmp frozen"
        )
        assert.strictEqual(
          yield* outcome(updateQuote(running, callers, "maker1", quotes[2]!, { amount: 50 })),
          "mmp frozen"
        )
        // A taker whose accept comes after the trip's cancellation hears why, as one the trip
        // itself refused would (docs/api.md, "Accepting a frozen desk's quote").
        const lateAccept = yield* Effect.either(engine.trade(callers.taker, quotes[2]!))
        assert.isTrue(Either.isLeft(lateAccept))
        if (Either.isLeft(lateAccept)) {
          assert.deepStrictEqual(lateAccept.left.toBody(), {
            code: 400,
            message: "mmp frozen",
            reason: [
              `the maker's market-maker protection froze its BTC quotes; quote ${quotes[2]!} was cancelled`
            ]
          })
        }
        // Another desk quotes on.
        assert.strictEqual(yield* outcome(createQuote(running, callers, "maker3", rfqs[3]!, ask)), "ok")

        yield* TestClock.adjust(29_999)
        assert.strictEqual(
          yield* outcome(createQuote(running, callers, "maker1", rfqs[3]!, ask)),
          "mmp frozen"
        )
        yield* TestClock.adjust(1)
        const thaw = yield* nextNotice(heard.notices, "thawed")
        assert.deepInclude(thaw, { deskId: callers.maker1.deskId, baseCurrency: "BTC", by: "time" })
        assert.deepStrictEqual(yield* engine.mmpStatus(callers.maker1), [
          { baseCurrency: "BTC", frozen: false, window: { amount: 0, delta: 0, trades: 0 } }
        ])
        // Thawed, the quote the trip cancelled is simply gone.
        assert.strictEqual(yield* outcome(engine.trade(callers.taker, quotes[3]!)), "record not found")
        const again = yield* createQuote(running, callers, "maker1", rfqs[3]!, ask)
        assert.strictEqual(yield* outcome(engine.trade(callers.taker, again)), "ok")
        assert.strictEqual((yield* dbtLedger(running)).length, 3)
        yield* running.stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )

  it.scoped(
    "a freeze until reset; a partial fill counts its filled amount, a failed one nothing; a trip another host wrote is honoured; a restart keeps it all",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const sql = yield* SqlClient.SqlClient
        const { callers, venueAccounts } = yield* seedAndResolve
        let running = yield* startEngine(venueAccounts)
        const btc = yield* decodeRequest(MmpCurrencyRequest, { baseCurrency: "BTC" })
        yield* configure(running, callers.maker1, {
          baseCurrency: "BTC",
          intervalMs: 600_000,
          frozenMs: 0,
          amountLimit: 160
        })

        // 50 of 100 settles (one of two accounts fails): the window counts 50.
        const partial = yield* createSpreadRfq(running.engine, callers, "partial")
        yield* running.engine.trade(
          callers.taker,
          yield* createQuote(running, callers, "maker1", partial, ask)
        )
        // Every account fails: the trade is refused, and the window counts nothing of it.
        const refused = yield* createSpreadRfq(running.engine, callers, "refused")
        const refusedQuote = yield* createQuote(running, callers, "maker1", refused, ask)
        assert.strictEqual(
          yield* outcome(running.engine.trade(callers.taker, refusedQuote)),
          "invalid request"
        )
        const [counted] = yield* running.engine.mmpStatus(callers.maker1)
        assert.deepInclude((counted as any).window, { amount: 50, trades: 1 })

        // 50 + 100 stays under 160, the next 100 trips: frozen until reset, whatever the time.
        const rfqs = [
          yield* createSpreadRfq(running.engine, callers, "single"),
          yield* createSpreadRfq(running.engine, callers, "single")
        ]
        yield* running.engine.trade(
          callers.taker,
          yield* createQuote(running, callers, "maker1", rfqs[0]!, ask)
        )
        const heard = yield* listen(running)
        yield* running.engine.trade(
          callers.taker,
          yield* createQuote(running, callers, "maker1", rfqs[1]!, ask)
        )
        const trip = yield* nextNotice(heard.notices, "tripped")
        assert.strictEqual(trip.limit, "amount")
        assert.isUndefined(trip.frozenUntil)
        // The refused RFQ's quote came back active after its failed trade: the trip cancels it too.
        yield* awaitCancelled(heard.events, [refusedQuote])

        yield* running.stop
        yield* TestClock.adjust(86_400_000)
        running = yield* startEngine(venueAccounts)
        const [still] = yield* running.engine.mmpStatus(callers.maker1)
        assert.deepInclude(still as object, { frozen: true })
        assert.notProperty(still as object, "frozenUntil")
        const rfq = yield* createSpreadRfq(running.engine, callers, "single")
        assert.strictEqual(yield* outcome(createQuote(running, callers, "maker1", rfq, ask)), "mmp frozen")
        const reset = yield* running.engine.resetMmp(callers.maker1, btc)
        assert.deepStrictEqual(reset, {
          baseCurrency: "BTC",
          frozen: false,
          window: { amount: 0, delta: 0, trades: 0 }
        })
        const quoteId = yield* createQuote(running, callers, "maker1", rfq, ask)

        // Another host's trip whose notice never came: once the cache lapses, quotes are refused,
        // and an accept of a quote still active is refused under the desk's lock and cancels it.
        const before = (yield* dbtLedger(running)).length
        const at = testEpoch + 86_400_000
        yield* sql`UPDATE mmp_configs SET frozen_at = ${at}, frozen_until = ${at + 10_000}
          WHERE desk_id = ${callers.maker1.deskId}`
        yield* TestClock.adjust(MMP_CACHE_TTL_MS)
        assert.strictEqual(
          yield* outcome(updateQuote(running, callers, "maker1", quoteId, { amount: 50 })),
          "mmp frozen"
        )
        assert.strictEqual(yield* outcome(running.engine.trade(callers.taker, quoteId)), "mmp frozen")
        assert.deepStrictEqual(yield* quoteStatuses(running, callers.maker1, rfq), { [quoteId]: "cancelled" })
        assert.strictEqual((yield* dbtLedger(running)).length, before)

        // A restart re-arms the timer of a freeze with an end; past its end the status says thawed.
        yield* running.stop
        running = yield* startEngine(venueAccounts)
        const afterRestart = yield* listen(running)
        assert.deepInclude((yield* running.engine.mmpStatus(callers.maker1))[0] as object, {
          frozen: true,
          frozenUntil: at + 10_000
        })
        yield* TestClock.adjust(10_000)
        assert.deepInclude(yield* nextNotice(afterRestart.notices, "thawed"), { by: "time" })
        assert.deepInclude((yield* running.engine.mmpStatus(callers.maker1))[0] as object, { frozen: false })
        assert.strictEqual(yield* outcome(createQuote(running, callers, "maker1", rfq, ask)), "ok")
        yield* running.stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )
})

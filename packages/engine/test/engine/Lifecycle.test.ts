import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, TestClock } from "effect"
import { decodeRequest } from "../../src/api/Decode.js"
import { CreateRfqRequest } from "../../src/api/RfqRequests.js"
import { VenueLedger } from "../../src/venues/VenueLedger.js"
import {
  type DemoCallers,
  type EngineContext,
  rfqTtlMs,
  seedAndResolve,
  startEngine,
  testEpoch,
  quoteAtMark
} from "../support/engineHarness.js"
import { testDatabases } from "../support/TestDatabases.js"
import type { EngineService } from "../../src/engine/Engine.js"
import { Context } from "effect"

const legs = ["BTC-27DEC30-90000-C", "BTC-27DEC30-110000-C"]

const createSpread = (
  engine: EngineService,
  callers: DemoCallers,
  accounts: ReadonlyArray<readonly [string, number]>,
  extra: Record<string, unknown> = {}
) =>
  Effect.gen(function* () {
    const req = yield* decodeRequest(CreateRfqRequest, {
      id: 0,
      baseCurrency: "BTC",
      amount: 100,
      anonymous: false,
      settlementOptions: ["DBT"],
      settlementAccounts: {
        DBT: accounts.map(([alias, percentage]) => ({
          credentialsId: callers.credentials[`taker:${alias}`],
          percentage
        }))
      },
      makers: { DBT: ["maker-1", "maker-2"] },
      legs: [
        { direction: "buy", instrumentName: legs[0], ratio: 1 },
        { direction: "sell", instrumentName: legs[1], ratio: 1 }
      ],
      ...extra
    })
    return (yield* engine.createRfq(callers.taker, req)).rfqId
  })

const quote = (
  engine: EngineService,
  ctx: EngineContext,
  callers: DemoCallers,
  who: "maker1" | "maker2",
  rfqId: number,
  direction: "buy" | "sell",
  extra: Record<string, unknown> = {}
) =>
  Effect.gen(function* () {
    const req = yield* quoteAtMark(ctx, rfqId, legs, { direction, ...extra })
    return (yield* engine.createQuote(callers[who], req)).rfqQuoteId
  })

describe.each(testDatabases)("engine lifecycle on $name", ({ layer }) => {
  it.effect(
    "create, quote, accept: a split trade fills every account, parties see the trade, others do not",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const { engine, context, stop } = yield* startEngine(venueAccounts)
        const rfqId = yield* createSpread(engine, callers, [
          ["dbt-main", 60],
          ["dbt-alt", 40]
        ])
        const ask = yield* quote(engine, context, callers, "maker1", rfqId, "sell")
        const bid = yield* quote(engine, context, callers, "maker2", rfqId, "buy")

        const book = (yield* engine.takerQuotes(callers.taker, rfqId)) as Array<any>
        assert.strictEqual(book.length, 1)
        assert.deepStrictEqual(
          book[0].asks.map((q: any) => q.rfqQuoteId),
          [ask]
        )
        assert.deepStrictEqual(
          book[0].bids.map((q: any) => q.rfqQuoteId),
          [bid]
        )

        const traded = (yield* engine.trade(callers.taker, ask)) as any
        assert.strictEqual(traded.rfqId, rfqId)
        assert.deepStrictEqual(
          traded.allocations.map((a: any) => [a.amount, a.status]),
          [
            [60, "filled"],
            [40, "filled"]
          ]
        )
        assert.isTrue(traded.trades.every((t: any) => t.direction === "buy"))

        const asTaker = (yield* engine.getRfq(callers.taker, rfqId)) as any
        assert.strictEqual(asTaker.status, "filled")
        assert.strictEqual(asTaker.filledAmount, 100)
        assert.strictEqual(asTaker.tradeDirection, "buy")
        assert.strictEqual(asTaker.tradeAllocations.length, 2)
        const asWinner = (yield* engine.getRfq(callers.maker1, rfqId)) as any
        assert.strictEqual(asWinner.tradeDirection, "sell")
        assert.isUndefined(asWinner.tradeAllocations)
        assert.isUndefined(asWinner.settlementCredentials)
        const asLoser = (yield* engine.getRfq(callers.maker2, rfqId)) as any
        assert.strictEqual(asLoser.status, "filled")
        assert.isUndefined(asLoser.tradeId)
        assert.deepStrictEqual(asLoser.trades, [])
        const stranger = yield* Effect.either(engine.getRfq(callers.maker3, rfqId))
        assert.isTrue(Either.isLeft(stranger) && stranger.left.message === "rfq not found")

        const again = yield* Effect.either(engine.trade(callers.taker, bid))
        assert.isTrue(Either.isLeft(again))
        const ledger = yield* Context.get(context, VenueLedger).list("DBT")
        assert.strictEqual(ledger.length, 2)
        yield* stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )

  it.effect(
    "a failing account gives filledPartial; every account failing refuses the trade and keeps the quote",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const { engine, context, stop } = yield* startEngine(venueAccounts)
        const partial = yield* createSpread(engine, callers, [
          ["dbt-main", 50],
          ["dbt-flaky", 50]
        ])
        const q1 = yield* quote(engine, context, callers, "maker1", partial, "sell")
        const traded = (yield* engine.trade(callers.taker, q1)) as any
        assert.deepStrictEqual(
          traded.allocations.map((a: any) => a.status),
          ["filled", "failed"]
        )
        const view = (yield* engine.getRfq(callers.taker, partial)) as any
        assert.strictEqual(view.status, "filledPartial")
        assert.strictEqual(view.filledAmount, 50)
        assert.strictEqual(view.tradeAmount, 100)

        const refused = yield* createSpread(engine, callers, [["dbt-flaky", 100]])
        const q2 = yield* quote(engine, context, callers, "maker1", refused, "sell")
        const result = yield* Effect.either(engine.trade(callers.taker, q2))
        assert.isTrue(Either.isLeft(result) && result.left.status === 400)
        const still = (yield* engine.getRfq(callers.taker, refused)) as any
        assert.strictEqual(still.status, "open")
        assert.deepStrictEqual(
          still.quotes.map((q: any) => q.rfqQuoteId),
          [q2]
        )
        yield* stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )

  it.effect(
    "restart: open RFQs and quotes survive, an expiry passed while down fires at once",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const first = yield* startEngine(venueAccounts)
        const keep = yield* createSpread(first.engine, callers, [["dbt-main", 100]])
        const q = yield* quote(first.engine, first.context, callers, "maker1", keep, "sell", {
          label: "mine"
        })
        yield* TestClock.adjust(rfqTtlMs / 2)
        const late = yield* createSpread(first.engine, callers, [["dbt-main", 100]])
        yield* first.stop

        const second = yield* startEngine(venueAccounts)
        const restored = (yield* second.engine.getRfq(callers.taker, keep)) as any
        assert.strictEqual(restored.status, "open")
        assert.deepStrictEqual(
          restored.quotes.map((x: any) => x.rfqQuoteId),
          [q]
        )
        const dup = yield* Effect.either(
          quote(second.engine, second.context, callers, "maker1", late, "sell", { label: "mine" })
        )
        assert.isTrue(
          Either.isLeft(dup) && dup.left.message === "a quote with the same clientQuoteId already exists"
        )
        yield* second.stop

        yield* TestClock.adjust(rfqTtlMs / 2 + 1)
        const third = yield* startEngine(venueAccounts)
        yield* Effect.yieldNow()
        const expired = (yield* third.engine.getRfq(callers.taker, keep)) as any
        assert.strictEqual(expired.status, "expired")
        assert.deepStrictEqual(expired.quotes, [])
        const stillOpen = (yield* third.engine.getRfq(callers.taker, late)) as any
        assert.strictEqual(stillOpen.status, "open")
        yield* TestClock.adjust(rfqTtlMs / 2)
        const laterExpired = (yield* third.engine.getRfq(callers.taker, late)) as any
        assert.strictEqual(laterExpired.status, "expired")
        yield* third.stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )

  it.effect(
    "lists RFQs newest first with a keyset cursor: no duplicates, no misses, totals",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const { engine, stop } = yield* startEngine(venueAccounts)
        const created: Array<number> = []
        for (let i = 0; i < 7; i++) {
          created.push(yield* createSpread(engine, callers, [["dbt-main", 100]]))
          // Two RFQs per millisecond: the keyset must break ties on the id.
          if (i % 2 === 1) yield* TestClock.adjust(1)
        }
        const seen: Array<number> = []
        let cursor = 0
        for (let page = 0; page < 5; page++) {
          const result = (yield* engine.listRfqs(callers.taker, {
            limit: 3,
            ...(cursor === 0 ? {} : { cursor })
          })) as any
          assert.strictEqual(result.totalResults, 7)
          seen.push(...result.results.map((r: any) => r.rfqId))
          cursor = result.cursor
          if (cursor === 0) break
        }
        assert.deepStrictEqual(seen, [...created].reverse())
        const asMaker = (yield* engine.listRfqs(callers.maker3, { limit: 100 })) as any
        assert.strictEqual(asMaker.totalResults, 0)
        yield* stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )
})

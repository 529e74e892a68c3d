import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Either, Runtime, TestClock } from "effect"
import * as fc from "fast-check"
import { CreateExchangeCredentialsRequest } from "../../src/api/AccountRequests.js"
import { decodeRequest } from "../../src/api/Decode.js"
import { CreateQuoteRequest, UpdateQuoteRequest } from "../../src/api/QuoteRequests.js"
import { CreateRfqRequest } from "../../src/api/RfqRequests.js"
import type { EngineService } from "../../src/engine/Engine.js"
import { VenueLedger } from "../../src/venues/VenueLedger.js"
import {
  type DemoCallers,
  type EngineContext,
  markPrices,
  seedAndResolve,
  startEngine,
  testEpoch
} from "../support/engineHarness.js"
import { testDatabases } from "../support/TestDatabases.js"

/**
 * Split rule 4 at quote time (issue 12, class 4), against an oracle written here from the contract
 * alone: each account gets ⌊q·pct/100⌋ on the 0.1 step, the remainder goes to the largest share
 * (first on a tie), every leg is share × ratio, and the hedge is ⌊H·share/A⌋ on its step of 10.
 * For random splits, RFQ amounts, hedges and quote amounts the engine must create the RFQ exactly
 * when the oracle says every account meets the minimums at the full amount, take a quote exactly
 * when they do at the quote's amount, and a trade of a quote it took must fill every account with
 * the oracle's amounts, each leg booked on the maker's side.
 */

const call90 = "BTC-27DEC30-90000-C"
const call110 = "BTC-27DEC30-110000-C"
const perpetual = "BTC-PERPETUAL"
const OPTION_MIN_TENTHS = 250n
const HEDGE_MIN = 200_000n
const HEDGE_STEP = 10n
const ALIASES = ["dbt-main", "dbt-alt", "dbt-x1", "dbt-x2"] as const

interface Case {
  /** Integer percentages, one per account, totalling 100. */
  readonly percentages: ReadonlyArray<number>
  readonly rfqTenths: number
  readonly ratio: 1 | 2
  readonly hedge: number | undefined
  readonly quoteTenths: number
  readonly direction: "buy" | "sell"
}

const arbPercentages = fc
  .integer({ min: 1, max: ALIASES.length })
  .chain((n) => fc.uniqueArray(fc.integer({ min: 1, max: 99 }), { minLength: n - 1, maxLength: n - 1 }))
  .map((cuts) => {
    const points = [0, ...cuts.sort((a, b) => a - b), 100]
    return points.slice(1).map((p, i) => p - points[i]!)
  })

const arbCase: fc.Arbitrary<Case> = fc
  .record({
    percentages: arbPercentages,
    rfqTenths: fc.integer({ min: 250, max: 3_000 }),
    ratio: fc.constantFrom(1 as const, 2 as const),
    hedge: fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 2 },
      { arbitrary: fc.integer({ min: 15_000, max: 300_000 }).map((h) => h * 10), weight: 1 }
    ),
    // Whole, large and any partial amounts, so that every outcome is common.
    quoteFraction: fc.oneof(
      fc.constant(1),
      fc.double({ min: 0.5, max: 1, noNaN: true }),
      fc.double({ min: 0, max: 1, noNaN: true })
    ),
    direction: fc.constantFrom("buy" as const, "sell" as const)
  })
  .map(({ quoteFraction, ...c }) => ({
    ...c,
    quoteTenths: Math.max(1, Math.round(c.rfqTenths * quoteFraction))
  }))

/** One case of each outcome, always run first. */
const examples: ReadonlyArray<Case> = [
  // 30 % of 50 is 15: refused at creation.
  { percentages: [70, 30], rfqTenths: 500, ratio: 1, hedge: undefined, quoteTenths: 500, direction: "sell" },
  // A hedge of 10 can never trade: refused at creation.
  { percentages: [100], rfqTenths: 1_000, ratio: 1, hedge: 10, quoteTenths: 1_000, direction: "sell" },
  // 70/30 of 100 quoted at 80: 24 for the 30 % account, refused at quote time.
  {
    percentages: [70, 30],
    rfqTenths: 1_000,
    ratio: 1,
    hedge: undefined,
    quoteTenths: 800,
    direction: "sell"
  },
  // 50/50 of 100 with a hedge of 500,000, quoted at 70: legs of 35 pass, hedges of 175,000 do not.
  { percentages: [50, 50], rfqTenths: 1_000, ratio: 1, hedge: 500_000, quoteTenths: 700, direction: "buy" },
  // Traded in full, hedged, a bid; and a three-way split of a partial ask.
  {
    percentages: [60, 40],
    rfqTenths: 1_000,
    ratio: 2,
    hedge: 1_200_000,
    quoteTenths: 1_000,
    direction: "buy"
  },
  {
    percentages: [34, 33, 33],
    rfqTenths: 2_000,
    ratio: 1,
    hedge: undefined,
    quoteTenths: 900,
    direction: "sell"
  }
]

/** The oracle: each account's share (tenths), legs (tenths) and hedge, and whether all meet the rules. */
const oracle = (c: Case, tradeTenths: bigint) => {
  const floors = c.percentages.map((p) => (tradeTenths * BigInt(p)) / 100n)
  const largest = c.percentages.indexOf(Math.max(...c.percentages))
  const remainder = tradeTenths - floors.reduce((a, b) => a + b, 0n)
  const shares = floors.map((f, i) => (i === largest ? f + remainder : f))
  const accounts = shares.map((share) => ({
    share,
    legs: [share, share * BigInt(c.ratio)],
    hedge:
      c.hedge === undefined
        ? undefined
        : ((BigInt(c.hedge) * share) / (BigInt(c.rfqTenths) * HEDGE_STEP)) * HEDGE_STEP
  }))
  const ok = accounts.every(
    (a) => a.legs.every((l) => l >= OPTION_MIN_TENTHS) && (a.hedge === undefined || a.hedge >= HEDGE_MIN)
  )
  return { accounts, ok }
}

const tenths = (t: number | bigint) => Number(t) / 10
const priceOf = (p: { price: { value: bigint; scale: number } }) =>
  Number(p.price.value) / 10 ** p.price.scale

const addAccounts = (engine: EngineService, callers: DemoCallers) =>
  Effect.forEach(["dbt-x1", "dbt-x2"], (alias) =>
    Effect.flatMap(
      decodeRequest(CreateExchangeCredentialsRequest, {
        alias,
        exchange: "DBT",
        clientId: `split-${alias}`,
        clientSecret: "secret"
      }),
      (req) => engine.exchangeCredentials.create(callers.taker, req)
    )
  ).pipe(
    Effect.map((created) => ({ "dbt-x1": created[0]!.credentialsId, "dbt-x2": created[1]!.credentialsId }))
  )

const runCase = (
  engine: EngineService,
  context: EngineContext,
  callers: DemoCallers,
  ids: Record<string, number>,
  c: Case
) =>
  Effect.gen(function* () {
    const prices = yield* markPrices(context, "DBT", "BTC", [call90, call110, perpetual])
    const hedgePrice = priceOf(prices[2]!)
    const created = yield* decodeRequest(CreateRfqRequest, {
      baseCurrency: "BTC",
      amount: tenths(c.rfqTenths),
      anonymous: false,
      settlementOptions: ["DBT"],
      settlementAccounts: {
        DBT: c.percentages.map((percentage, i) => ({ credentialsId: ids[ALIASES[i]!]!, percentage }))
      },
      makers: { DBT: ["maker-1"] },
      legs: [
        { direction: "buy", instrumentName: call90, ratio: 1 },
        { direction: "sell", instrumentName: call110, ratio: c.ratio }
      ],
      ...(c.hedge === undefined
        ? {}
        : { hedge: { direction: "sell", instrumentName: perpetual, amount: c.hedge, price: hedgePrice } })
    }).pipe(Effect.flatMap((req) => Effect.either(engine.createRfq(callers.taker, req))))
    const atCreation = oracle(c, BigInt(c.rfqTenths))
    assert.strictEqual(Either.isRight(created), atCreation.ok, `creation: ${JSON.stringify(c)}`)
    if (Either.isLeft(created)) {
      assert.strictEqual(created.left.status, 400)
      return "refused at creation" as const
    }
    const rfqId = created.right.rfqId
    const quoted = yield* decodeRequest(CreateQuoteRequest, {
      rfqId,
      direction: c.direction,
      amount: tenths(c.quoteTenths),
      settlementOption: "DBT",
      legs: [
        { instrumentName: call90, price: priceOf(prices[0]!) },
        { instrumentName: call110, price: priceOf(prices[1]!) }
      ],
      ...(c.hedge === undefined ? {} : { hedge: { instrumentName: perpetual, price: hedgePrice } })
    }).pipe(Effect.flatMap((req) => Effect.either(engine.createQuote(callers.maker1, req))))
    const atQuote = oracle(c, BigInt(c.quoteTenths))
    assert.strictEqual(Either.isRight(quoted), atQuote.ok, `quote: ${JSON.stringify(c)}`)
    if (Either.isLeft(quoted)) {
      assert.strictEqual(quoted.left.status, 400)
      assert.isTrue(quoted.left.reason?.some((r) => r.includes("below the venue's minimum")))
      // Nothing in the reason names the taker's credentials.
      for (const id of Object.values(ids))
        assert.notInclude(quoted.left.reason!.join(" "), `credentialsId ${id}`)
      yield* engine.cancelRfq(callers.taker, rfqId)
      return "refused at quote time" as const
    }
    const traded = (yield* engine.trade(callers.taker, quoted.right.rfqQuoteId)) as unknown as {
      allocations: ReadonlyArray<{ status: string; amount: number; reason?: string }>
    }
    assert.deepStrictEqual(
      traded.allocations.map((a) => [a.status, a.amount]),
      atQuote.accounts.map((a) => ["filled", tenths(a.share)]),
      JSON.stringify({ c, traded })
    )
    const booked = (yield* Context.get(context, VenueLedger).list("DBT")).filter((t) =>
      t.idempotencyKey.startsWith(`rfq-${rfqId}-`)
    )
    assert.strictEqual(booked.length, c.percentages.length)
    // A bid buys the structure as listed, an ask sells it: the ledger carries the maker's side.
    const makerSide = (listed: "buy" | "sell") =>
      c.direction === "buy" ? listed : listed === "buy" ? "sell" : "buy"
    const expected = atQuote.accounts
      .map((a) => [
        [makerSide("buy"), String(tenths(a.legs[0]!))],
        [makerSide("sell"), String(tenths(a.legs[1]!))],
        ...(a.hedge === undefined ? [] : [[makerSide("sell"), String(a.hedge)]])
      ])
      .map((legs) => JSON.stringify(legs))
      .sort()
    const actual = booked.map((t) => JSON.stringify(t.legs.map((l) => [l.direction, l.amount]))).sort()
    assert.deepStrictEqual(actual, expected)
    return "traded" as const
  })

describe.each(testDatabases)("split rule 4 at quote time on $name", ({ layer }) => {
  it.effect(
    "the engine takes exactly the quotes whose every allocation meets the venue's rules, and settles them in full",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const { engine, context, stop } = yield* startEngine(venueAccounts)
        const ids: Record<string, number> = {
          "dbt-main": callers.credentials["taker:dbt-main"]!,
          "dbt-alt": callers.credentials["taker:dbt-alt"]!,
          ...(yield* addAccounts(engine, callers))
        }
        const runtime = yield* Effect.runtime<never>()
        const outcomes = new Map<string, number>()
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(arbCase, async (c) => {
              const outcome = await Runtime.runPromise(runtime)(runCase(engine, context, callers, ids, c))
              outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
            }),
            { numRuns: 60, examples: examples.map((c) => [c] as [Case]) }
          )
        )
        // Every branch was taken, or the property looked at less than it claims.
        for (const o of ["refused at creation", "refused at quote time", "traded"]) {
          assert.isAbove(outcomes.get(o) ?? 0, 0, `${o}: ${JSON.stringify([...outcomes])}`)
        }
        yield* stop
      }).pipe(Effect.provide(layer)),
    { timeout: 240_000 }
  )

  it.effect(
    "a 70/30 split of 100: a quote of 80 is refused on create and on update, 90 trades in full",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const { engine, context, stop } = yield* startEngine(venueAccounts)
        const prices = yield* markPrices(context, "DBT", "BTC", [call90])
        const rfq = yield* engine.createRfq(
          callers.taker,
          yield* decodeRequest(CreateRfqRequest, {
            baseCurrency: "BTC",
            amount: 100,
            anonymous: false,
            settlementOptions: ["DBT"],
            settlementAccounts: {
              DBT: [
                { credentialsId: callers.credentials["taker:dbt-main"], percentage: 70 },
                { credentialsId: callers.credentials["taker:dbt-alt"], percentage: 30 }
              ]
            },
            makers: { DBT: ["maker-1"] },
            legs: [{ direction: "buy", instrumentName: call90, ratio: 1 }]
          })
        )
        const legs = [{ instrumentName: call90, price: priceOf(prices[0]!) }]
        const body = { rfqId: rfq.rfqId, direction: "sell", settlementOption: "DBT", legs, label: "q-70-30" }
        const refused = yield* Effect.either(
          engine.createQuote(
            callers.maker1,
            yield* decodeRequest(CreateQuoteRequest, { ...body, amount: 80 })
          )
        )
        assert.isTrue(Either.isLeft(refused))
        if (Either.isLeft(refused)) {
          assert.deepStrictEqual(refused.left.reason, [
            `amount: a quote of 80 on DBT: settlement account 2 of 2 of the RFQ would trade 24 of ${call90} ` +
              "(share 24 × ratio 1), below the venue's minimum block amount 25"
          ])
        }
        const quoteId = (yield* engine.createQuote(
          callers.maker1,
          yield* decodeRequest(CreateQuoteRequest, { ...body, amount: 100 })
        )).rfqQuoteId
        const update = (amount: number) =>
          Effect.flatMap(
            decodeRequest(UpdateQuoteRequest, { label: "q-70-30", amount, settlementOption: "DBT", legs }),
            (req) => Effect.either(engine.updateQuote(callers.maker1, req))
          )
        assert.isTrue(Either.isLeft(yield* update(80)))
        // The refused update changed nothing: the quote still stands at 100.
        const book = (yield* engine.takerQuotes(callers.taker, rfq.rfqId)) as Array<any>
        assert.strictEqual(book[0].asks[0].amount, 100)
        assert.isTrue(Either.isRight(yield* update(90)))
        const traded = (yield* engine.trade(callers.taker, quoteId)) as any
        assert.deepStrictEqual(
          traded.allocations.map((a: any) => [a.amount, a.status]),
          [
            [63, "filled"],
            [27, "filled"]
          ]
        )
        yield* stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )
})

import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, TestClock } from "effect"
import { decodeRequest } from "../../src/api/Decode.js"
import { CreateQuoteRequest, UpdateQuoteRequest } from "../../src/api/QuoteRequests.js"
import { CreateRfqRequest } from "../../src/api/RfqRequests.js"
import { markPrices, seedAndResolve, startEngine, testEpoch } from "../support/engineHarness.js"
import { testDatabases } from "../support/TestDatabases.js"

/**
 * A quote on a hedged RFQ needs the maker's `hedge {instrumentName, price}` (docs/api.md). Issue 12:
 * the engine used to take the taker's hedge price when the maker sent none, so a quote without a
 * hedge was accepted at a price the maker never gave. Create and update share the engine (REST and
 * JSON-RPC both call it), so both are checked here.
 */

const call90 = "BTC-27DEC30-90000-C"
const perpetual = "BTC-PERPETUAL"

const priceOf = (p: { price: { value: bigint; scale: number } }) =>
  Number(p.price.value) / 10 ** p.price.scale

describe.each(testDatabases)("quotes on a hedged RFQ on $name", ({ layer }) => {
  it.effect(
    "a quote without the hedge is refused on create and on update; the maker's own hedge price is kept",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const { engine, context, stop } = yield* startEngine(venueAccounts)
        const prices = yield* markPrices(context, "DBT", "BTC", [call90, perpetual])
        const takerHedgePrice = Math.round(priceOf(prices[1]!) * 2) / 2
        // The maker's hedge price differs from the taker's, so a default would be visible.
        const makerHedgePrice = takerHedgePrice + 5
        const rfq = yield* engine.createRfq(
          callers.taker,
          yield* decodeRequest(CreateRfqRequest, {
            baseCurrency: "BTC",
            amount: 100,
            anonymous: false,
            settlementOptions: ["DBT"],
            makers: { DBT: ["maker-1"] },
            legs: [{ direction: "buy", instrumentName: call90, ratio: 1 }],
            hedge: { direction: "sell", instrumentName: perpetual, amount: 200_000, price: takerHedgePrice }
          })
        )
        const legs = [{ instrumentName: call90, price: priceOf(prices[0]!) }]
        const body = { rfqId: rfq.rfqId, direction: "sell", amount: 100, settlementOption: "DBT", legs }
        const hedgeOf = () =>
          Effect.map(engine.takerQuotes(callers.taker, rfq.rfqId), (book) =>
            (book as ReadonlyArray<any>).flatMap((side) => [...side.asks, ...side.bids]).map((q) => q.hedge)
          )

        const refused = yield* Effect.either(
          engine.createQuote(callers.maker1, yield* decodeRequest(CreateQuoteRequest, body))
        )
        assert.isTrue(Either.isLeft(refused), "a quote without the hedge was accepted")
        if (Either.isLeft(refused)) {
          assert.strictEqual(refused.left.status, 400)
          assert.strictEqual(refused.left.message, "invalid request")
          assert.deepStrictEqual(refused.left.reason, ["hedge: is missing"])
        }
        assert.deepStrictEqual(yield* hedgeOf(), [], "the refused quote was stored")

        yield* engine.createQuote(
          callers.maker1,
          yield* decodeRequest(CreateQuoteRequest, {
            ...body,
            label: "hedged",
            hedge: { instrumentName: perpetual, price: makerHedgePrice }
          })
        )
        const stored = yield* hedgeOf()
        assert.strictEqual(stored.length, 1)
        assert.strictEqual(stored[0].price, makerHedgePrice)

        const update = yield* Effect.either(
          engine.updateQuote(
            callers.maker1,
            yield* decodeRequest(UpdateQuoteRequest, {
              label: "hedged",
              amount: 100,
              settlementOption: "DBT",
              legs
            })
          )
        )
        assert.isTrue(Either.isLeft(update), "an update without the hedge was accepted")
        if (Either.isLeft(update)) assert.deepStrictEqual(update.left.reason, ["hedge: is missing"])
        // The refused update changed nothing.
        const after = yield* hedgeOf()
        assert.strictEqual(after.length, 1)
        assert.strictEqual(after[0].price, makerHedgePrice)
        yield* stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )
})

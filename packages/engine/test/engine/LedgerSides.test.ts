import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, TestClock } from "effect"
import { BulkBlockTradeRequest } from "../../src/api/AccountRequests.js"
import { decodeRequest } from "../../src/api/Decode.js"
import { CreateQuoteRequest } from "../../src/api/QuoteRequests.js"
import { CreateRfqRequest } from "../../src/api/RfqRequests.js"
import type { ExecutedBlockTrade } from "../../src/services/Venues.js"
import { VenueLedger } from "../../src/venues/VenueLedger.js"
import { markPrices, seedAndResolve, startEngine, testEpoch } from "../support/engineHarness.js"
import { testDatabases } from "../support/TestDatabases.js"

/**
 * One side convention on the venue ledger (issue 12, class 5): every block trade, whether it comes
 * from an accepted RFQ quote or from `POST /block-trade/bulk`, books each leg with the maker's side,
 * and the maker's account as `makerClientId`. A maker's ask on a structure that buys a call sells
 * the call; a bulk block trade with maker side `sell` is booked `sell`.
 */

const call90 = "BTC-27DEC30-90000-C"
const call110 = "BTC-27DEC30-110000-C"
const priceOf = (p: { price: { value: bigint; scale: number } }) =>
  Number(p.price.value) / 10 ** p.price.scale

describe.each(testDatabases)("venue ledger sides on $name", ({ layer }) => {
  it.effect(
    "an accepted ask, an accepted bid and a bulk block trade are all booked with the maker's side",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const { engine, context, stop } = yield* startEngine(venueAccounts)
        const sql = yield* SqlClient.SqlClient
        const clientIdOf = (id: number) =>
          Effect.map(
            sql<{
              clientId: string
            }>`SELECT client_id AS "clientId" FROM exchange_credentials WHERE id = ${id}`,
            (rows) => rows[0]!.clientId
          )
        const maker1Desk = callers.maker1.deskId
        const maker1Dbt = callers.credentials[`desk${maker1Desk}:dbt-main`]!
        const makerClient = yield* clientIdOf(maker1Dbt)
        const takerClient = yield* clientIdOf(callers.credentials["taker:dbt-main"]!)
        const prices = yield* markPrices(context, "DBT", "BTC", [call90, call110])
        const ledger = Context.get(context, VenueLedger)
        const bookedFor = (prefix: string) =>
          Effect.map(ledger.list("DBT"), (all) => all.filter((t) => t.idempotencyKey.startsWith(prefix)))
        const sides = (t: ExecutedBlockTrade) => t.legs.map((l) => `${l.direction} ${l.venueName}`)

        const tradeRfq = (
          legs: ReadonlyArray<{ direction: "buy" | "sell"; instrumentName: string }>,
          quoted: "buy" | "sell"
        ) =>
          Effect.gen(function* () {
            const { rfqId } = yield* engine.createRfq(
              callers.taker,
              yield* decodeRequest(CreateRfqRequest, {
                baseCurrency: "BTC",
                amount: 25,
                anonymous: false,
                settlementOptions: ["DBT"],
                makers: { DBT: ["maker-1"] },
                legs: legs.map((l) => ({ ...l, ratio: 1 }))
              })
            )
            const { rfqQuoteId } = yield* engine.createQuote(
              callers.maker1,
              yield* decodeRequest(CreateQuoteRequest, {
                rfqId,
                direction: quoted,
                amount: 25,
                settlementOption: "DBT",
                legs: legs.map((l) => ({
                  instrumentName: l.instrumentName,
                  price: priceOf(prices.find((p) => p.instrumentName === l.instrumentName)!)
                }))
              })
            )
            const traded = (yield* engine.trade(callers.taker, rfqQuoteId)) as any
            const booked = yield* bookedFor(`rfq-${rfqId}-`)
            assert.strictEqual(booked.length, 1)
            assert.strictEqual(booked[0]!.makerClientId, makerClient)
            assert.strictEqual(booked[0]!.takerClientId, takerClient)
            return { traded, booked: booked[0]! }
          })

        // The case: the taker buys a call, maker-1 sells it (an ask): maker-1 sold the call.
        const ask = yield* tradeRfq([{ direction: "buy", instrumentName: call90 }], "sell")
        assert.deepStrictEqual(sides(ask.booked), [`sell ${call90}`])
        assert.strictEqual(ask.traded.trades[0].direction, "buy", "the taker's own side")

        // A bid on a call spread buys it as listed: the maker buys the 90,000 and sells the 110,000.
        const bid = yield* tradeRfq(
          [
            { direction: "buy", instrumentName: call90 },
            { direction: "sell", instrumentName: call110 }
          ],
          "buy"
        )
        assert.deepStrictEqual(sides(bid.booked), [`buy ${call90}`, `sell ${call110}`])

        // A bulk block trade: maker side sell, maker-1's credentials, the taker's own as taker.
        const [result] = (yield* engine.bulkBlockTrades(
          callers.taker,
          yield* decodeRequest(BulkBlockTradeRequest, {
            timestamp: testEpoch,
            blockTrades: [
              {
                nonce: "sides-1",
                makerExchangeCredentials: `${maker1Desk}:dbt-main`,
                takerExchangeCredentials: "dbt-main",
                trades: [
                  { direction: "sell", instrumentName: call90, price: priceOf(prices[0]!), amount: 25 }
                ]
              }
            ]
          })
        )) as Array<any>
        assert.strictEqual(result.exchangeResult.trades[0].direction, "sell")
        const bulk = yield* bookedFor(`bulk-${callers.taker.deskId}-sides-1`)
        assert.strictEqual(bulk.length, 1)
        assert.deepStrictEqual(sides(bulk[0]!), [`sell ${call90}`])
        assert.strictEqual(bulk[0]!.makerClientId, makerClient)
        assert.strictEqual(bulk[0]!.takerClientId, takerClient)

        // The same maker selling the same call the same way reads the same on the ledger.
        assert.deepStrictEqual(
          [ask.booked, bulk[0]!].map((t) => [t.makerClientId, t.takerClientId, ...sides(t)]),
          [
            [makerClient, takerClient, `sell ${call90}`],
            [makerClient, takerClient, `sell ${call90}`]
          ]
        )
        yield* stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )
})

import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Queue, TestClock } from "effect"
import { BulkBlockTradeRequest } from "../../src/api/AccountRequests.js"
import { decodeRequest } from "../../src/api/Decode.js"
import { CreateRfqRequest } from "../../src/api/RfqRequests.js"
import { renderEvent } from "../../src/services/Events.js"
import { VenueLedger } from "../../src/venues/VenueLedger.js"
import { markPrices, seedAndResolve, startEngine, testEpoch, quoteAtMark } from "../support/engineHarness.js"
import { testDatabases } from "../support/TestDatabases.js"

const call = "BTC-27DEC30-90000-C"

describe.each(testDatabases)("engine bulk block trades and events on $name", ({ layer }) => {
  it.effect(
    "bulk block trades execute once per nonce, with own and counterparty credentials",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const { engine, context, stop } = yield* startEngine(venueAccounts)
        const [price] = yield* markPrices(context, "DBT", "BTC", [call])
        const body = (nonce: string, maker: string) => ({
          timestamp: testEpoch,
          blockTrades: [
            {
              nonce,
              makerExchangeCredentials: maker,
              takerExchangeCredentials: "dbt-main",
              trades: [
                {
                  direction: "sell",
                  instrumentName: call,
                  price: Number(price!.price.value) / 10 ** price!.price.scale,
                  amount: 25
                }
              ]
            }
          ]
        })
        const partner = `${callers.maker1.deskId}:dbt-main`
        const first = (yield* engine.bulkBlockTrades(
          callers.taker,
          yield* decodeRequest(BulkBlockTradeRequest, body("n-1", partner))
        )) as Array<any>
        assert.strictEqual(first.length, 1)
        // Our id is an integer; the venue's own id stays in exchangeResult (issue 12, class 9).
        assert.isTrue(Number.isSafeInteger(first[0].blockTradeId))
        assert.strictEqual(first[0].exchangeResult.exchange, "DBT")
        assert.isString(first[0].exchangeResult.exchangeBlockTradeId)
        assert.strictEqual(first[0].exchangeResult.trades[0].amount, 25)
        const replay = (yield* engine.bulkBlockTrades(
          callers.taker,
          yield* decodeRequest(BulkBlockTradeRequest, body("n-1", partner))
        )) as Array<any>
        assert.isUndefined(replay[0].blockTradeId)
        assert.match(replay[0].exchangeError.reason[0], /already used/)
        const unknown = (yield* engine.bulkBlockTrades(
          callers.taker,
          yield* decodeRequest(BulkBlockTradeRequest, body("n-2", "no-such-alias"))
        )) as Array<any>
        assert.strictEqual(unknown[0].exchangeError.message, "credentials not found")
        const ledger = yield* Context.get(context, VenueLedger).list("DBT")
        assert.strictEqual(ledger.length, 1)
        yield* stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )

  it.effect(
    "events arrive in order per RFQ and render for each recipient as REST would show it",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          yield* TestClock.setTime(testEpoch)
          const { callers, venueAccounts } = yield* seedAndResolve
          const { engine, context, stop } = yield* startEngine(venueAccounts)
          const events = yield* engine.events
          const req = yield* decodeRequest(CreateRfqRequest, {
            baseCurrency: "BTC",
            amount: 50,
            anonymous: false,
            settlementOptions: ["DBT"],
            makers: { DBT: ["maker-1", "maker-2"] },
            legs: [{ direction: "buy", instrumentName: call, ratio: 1 }],
            label: "taker-only"
          })
          const { rfqId } = yield* engine.createRfq(callers.taker, req)
          yield* engine.createQuote(
            callers.maker1,
            yield* quoteAtMark(context, rfqId, [call], { amount: 50 })
          )
          yield* engine.cancelRfq(callers.taker, rfqId)
          const received = yield* Queue.takeAll(events)
          const mine = [...received].filter((e) => e.view.rfq.id === rfqId)
          assert.deepStrictEqual(
            mine.map((e) => `${e.type}.${e.event}`),
            ["rfq.created", "quote.created", "quote.deleted", "rfq.updated"]
          )
          const seqs = mine.map((e) => e.seq)
          assert.deepStrictEqual(
            seqs,
            [...seqs].sort((a, b) => a - b)
          )
          const created = mine[0]!
          assert.strictEqual((renderEvent(created, "rfq.taker", callers.taker) as any).label, "taker-only")
          assert.isUndefined((renderEvent(created, "rfq.maker", callers.maker1) as any).label)
          assert.isUndefined(renderEvent(created, "rfq.maker", callers.maker3))
          assert.isUndefined(renderEvent(created, "rfq.maker", callers.taker))
          const quoted = mine[1]!
          assert.strictEqual((renderEvent(quoted, "rfq_quote.maker", callers.maker1) as any).event, "created")
          assert.isUndefined(renderEvent(quoted, "rfq_quote.maker", callers.maker2))
          assert.strictEqual(
            (renderEvent(quoted, "rfq_quote.taker", callers.taker) as any).makers[0],
            "maker-1"
          )
          assert.isUndefined(renderEvent(quoted, "rfq_quote.taker", callers.maker1))
          yield* stop
        })
      ).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )
})

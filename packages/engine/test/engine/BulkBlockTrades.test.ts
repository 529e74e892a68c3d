import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, TestClock } from "effect"
import { BulkBlockTradeRequest } from "../../src/api/AccountRequests.js"
import { decodeRequest } from "../../src/api/Decode.js"
import type { EngineService } from "../../src/engine/Engine.js"
import type { Caller } from "../../src/rfq/RfqRecord.js"
import { VenueLedger } from "../../src/venues/VenueLedger.js"
import { markPrices, seedAndResolve, startEngine, testEpoch } from "../support/engineHarness.js"
import { testDatabases } from "../support/TestDatabases.js"

/**
 * `POST /block-trade/bulk` beyond the happy path: our integer block trade ids (issue 12, class 9)
 * survive a restart and are never reused, a replayed nonce is refused before and after a restart
 * and never books twice, a counterparty that does not allow block trades lends no credentials, and
 * one request with mixed outcomes answers each block trade on its own.
 */

const call = "BTC-27DEC30-90000-C"

interface BulkAnswer {
  readonly nonce: string
  readonly blockTradeId?: number
  readonly exchangeResult?: { readonly exchangeBlockTradeId: string; readonly trades: ReadonlyArray<unknown> }
  readonly exchangeError?: { readonly message: string; readonly reason?: ReadonlyArray<string> }
}

const bulk = (
  engine: EngineService,
  caller: Caller,
  price: number,
  trades: ReadonlyArray<{ nonce: string; maker: string; taker?: string; instrumentName?: string }>
) =>
  Effect.gen(function* () {
    const req = yield* decodeRequest(BulkBlockTradeRequest, {
      timestamp: testEpoch,
      blockTrades: trades.map((t) => ({
        nonce: t.nonce,
        makerExchangeCredentials: t.maker,
        takerExchangeCredentials: t.taker ?? "dbt-main",
        trades: [{ direction: "sell", instrumentName: t.instrumentName ?? call, price, amount: 25 }]
      }))
    })
    return (yield* engine.bulkBlockTrades(caller, req)) as unknown as ReadonlyArray<BulkAnswer>
  })

describe.each(testDatabases)("bulk block trades on $name", ({ layer }) => {
  it.effect(
    "integer ids, replays refused across a restart, counterparty consent, mixed outcomes",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const sql = yield* SqlClient.SqlClient
        const first = yield* startEngine(venueAccounts)
        const [mark] = yield* markPrices(first.context, "DBT", "BTC", [call])
        const price = Number(mark!.price.value) / 10 ** mark!.price.scale
        const partner = `${callers.maker1.deskId}:dbt-main`
        const booked = (context: typeof first.context, nonce: string, deskId = callers.taker.deskId) =>
          Effect.map(Context.get(context, VenueLedger).list("DBT"), (all) =>
            all.filter((t) => t.idempotencyKey === `bulk-${deskId}-${nonce}`)
          )

        // Mixed outcomes in one request: executed, unknown alias, the venue refusing, an unknown
        // instrument, executed again; each answered in order, only the good ones booked.
        const mixed = yield* bulk(first.engine, callers.taker, price, [
          { nonce: "m-ok-1", maker: partner },
          { nonce: "m-alias", maker: "no-such-alias" },
          { nonce: "m-flaky", maker: partner, taker: "dbt-flaky" },
          { nonce: "m-instrument", maker: partner, instrumentName: "BTC-27DEC30-1-C" },
          { nonce: "m-ok-2", maker: "dbt-alt" }
        ])
        assert.deepStrictEqual(
          mixed.map((a) => [a.nonce, a.exchangeError?.message ?? "executed"]),
          [
            ["m-ok-1", "executed"],
            ["m-alias", "credentials not found"],
            ["m-flaky", "the venue refused the block trade"],
            ["m-instrument", "instrument not found for leg"],
            ["m-ok-2", "executed"]
          ]
        )
        for (const a of mixed) assert.strictEqual(a.blockTradeId === undefined, a.exchangeError !== undefined)
        for (const nonce of ["m-ok-1", "m-ok-2"]) assert.lengthOf(yield* booked(first.context, nonce), 1)
        for (const nonce of ["m-alias", "m-flaky", "m-instrument"]) {
          assert.lengthOf(yield* booked(first.context, nonce), 0)
        }
        const ids = mixed.flatMap((a) => (a.blockTradeId === undefined ? [] : [a.blockTradeId]))
        assert.isTrue(ids.every(Number.isSafeInteger))
        assert.strictEqual(new Set(ids).size, 2)
        // Our id is ours; the venue's id is in exchangeResult and names the booked trade.
        const venueIds = mixed.flatMap((a) =>
          a.exchangeResult === undefined ? [] : [a.exchangeResult.exchangeBlockTradeId]
        )
        assert.deepStrictEqual(venueIds, [
          (yield* booked(first.context, "m-ok-1"))[0]!.blockTradeId,
          (yield* booked(first.context, "m-ok-2"))[0]!.blockTradeId
        ])
        // A nonce refused before the venue was called is still free; one the venue refused is spent.
        const retried = yield* bulk(first.engine, callers.taker, price, [
          { nonce: "m-alias", maker: partner },
          { nonce: "m-flaky", maker: partner }
        ])
        assert.isDefined(retried[0]!.blockTradeId)
        assert.match(retried[1]!.exchangeError!.reason![0]!, /already used/)
        ids.push(retried[0]!.blockTradeId!)

        // A counterparty that withdrew its consent lends no credentials: answered like an unknown alias.
        yield* sql`UPDATE otc_counterparties SET allows_block_trade = false
          WHERE desk_id = ${callers.maker1.deskId} AND counterparty_desk_id = ${callers.taker.deskId}`
        const withdrawn = yield* bulk(first.engine, callers.taker, price, [{ nonce: "c-1", maker: partner }])
        assert.strictEqual(withdrawn[0]!.exchangeError?.message, "credentials not found")
        assert.lengthOf(yield* booked(first.context, "c-1"), 0)
        // A desk that is no counterparty at all, or a made-up desk id: the same answer.
        yield* sql`DELETE FROM otc_counterparties
          WHERE desk_id = ${callers.maker3.deskId} AND counterparty_desk_id = ${callers.taker.deskId}`
        const strangers = yield* bulk(first.engine, callers.maker3, price, [
          { nonce: "c-2", maker: `${callers.taker.deskId}:dbt-main`, taker: "dbt-main" },
          { nonce: "c-3", maker: "999999:dbt-main", taker: "dbt-main" }
        ])
        assert.deepStrictEqual(
          strangers.map((a) => a.exchangeError?.message),
          ["credentials not found", "credentials not found"]
        )
        yield* first.stop

        // After a restart on the same data: the replay is still refused and books nothing new,
        // and new block trades get new ids.
        const second = yield* startEngine(venueAccounts)
        const replay = yield* bulk(second.engine, callers.taker, price, [
          { nonce: "m-ok-1", maker: partner.replace(/^\d+/, String(callers.maker2.deskId)) }
        ])
        assert.isUndefined(replay[0]!.blockTradeId)
        assert.match(replay[0]!.exchangeError!.reason![0]!, /already used/)
        assert.lengthOf(yield* booked(second.context, "m-ok-1"), 1)
        const fresh = yield* bulk(second.engine, callers.taker, price, [
          { nonce: "after-restart", maker: "dbt-alt" }
        ])
        assert.isTrue(Number.isSafeInteger(fresh[0]!.blockTradeId))
        assert.notInclude(ids, fresh[0]!.blockTradeId)
        // Another desk may use the same nonce; its id is its own.
        const otherDesk = yield* bulk(second.engine, callers.maker2, price, [
          { nonce: "m-ok-1", maker: "dbt-main", taker: `${callers.maker1.deskId}:dbt-main` }
        ])
        assert.isDefined(otherDesk[0]!.blockTradeId)
        assert.notInclude([...ids, fresh[0]!.blockTradeId], otherDesk[0]!.blockTradeId)
        yield* second.stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )
})

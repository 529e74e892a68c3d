import { expect } from "vitest"
import { ApiClient } from "../ApiClient.js"
import { createRfq, farOption, getRfq, placeQuote, quoteBody, rfqBody } from "../Fixtures.js"
import { openRpcSession } from "../RpcSession.js"
import { group, scenario } from "../Scenario.js"
import { expectError, expectOk } from "../Shapes.js"
import type { World } from "../World.js"
import type { HostedContext } from "./HostControl.js"

/**
 * Statements of docs/ that promise something "forever" or "on shutdown", checked across a restart
 * (SIGTERM, then a new start on the same data):
 *
 * - api.md: a create id is "kept forever": after the restart the same key and body answer the same
 *   rfqId, and another body under it is still refused;
 * - engine.md / api.md: a quote label is unique among the desk's active quotes: an active quote's
 *   label is still taken after the restart;
 * - api.md: a bulk block-trade nonce "is unique per desk forever (a replay is refused, never
 *   executed twice)";
 * - websocket.md: a graceful shutdown closes sessions with 1001 `server shutting down`, and
 *   cancel-on-disconnect "also fires on shutdown": the protected maker's quote is cancelled.
 */

interface BulkAnswer {
  readonly nonce: string
  readonly blockTradeId?: unknown
  readonly exchangeError?: unknown
}

const bulk = async (w: World, nonce: string): Promise<BulkAnswer> => {
  const answer = expectOk<Array<BulkAnswer>>(
    await w.api.post("/v1/block-trade/bulk", {
      token: w.token("taker"),
      json: {
        timestamp: Date.now(),
        blockTrades: [
          {
            nonce,
            makerExchangeCredentials: "dbt-alt",
            takerExchangeCredentials: "dbt-main",
            trades: [{ direction: "sell", instrumentName: farOption(90000), price: 0.6, amount: 25 }]
          }
        ]
      }
    }),
    "BulkBlockTradeResponse"
  )
  expect(answer).toHaveLength(1)
  return answer[0]!
}

export const restartStatements = group<HostedContext>("statements kept across a restart", [
  scenario(
    "create ids, active quote labels and bulk nonces outlive a restart; shutdown closes sessions with 1001 and cancels protected quotes",
    async (context) => {
      const { host } = context
      // The host may have been restarted before (a new port): talk to the current one.
      const world: World = { ...context.world, api: new ApiClient(host.url()) }
      const requestId = world.nextRequestId()
      const body = rfqBody(world, "taker", { label: `kept-${world.tag}` })
      const rfqId = await createRfq(world, "taker", body, requestId)
      const label = `kept-${world.tag}`
      await placeQuote(world, "maker1", rfqId, { direction: "sell", amount: 100, label })
      const nonce = `kept-${world.tag}`
      const first = await bulk(world, nonce)
      expect(first).toHaveProperty("blockTradeId")
      expect(first).not.toHaveProperty("exchangeError")

      // maker-2 quotes over a session protected by cancel-on-disconnect.
      const protectedRfq = await createRfq(world, "taker", rfqBody(world, "taker"))
      const session = await openRpcSession(world, "maker2")
      let protectedQuote = 0
      try {
        expect(await session.result("v1/cancel-on-disconnect", { enabled: true })).toEqual({ enabled: true })
        const quote = await quoteBody(world, "maker2", protectedRfq, { direction: "buy", amount: 100 })
        protectedQuote = (await session.result<{ rfqQuoteId: number }>("v1/quote/create", quote)).rfqQuoteId
        await host.restart()
        expect(await session.connection.closed).toEqual({ code: 1001, reason: "server shutting down" })
      } finally {
        session.close()
      }

      const after: World = { ...world, api: new ApiClient(host.url()) }
      expect(await createRfq(after, "taker", body, requestId)).toBe(rfqId)
      expectError(
        await after.api.post(`/v1/rfq/${requestId}`, {
          token: after.token("taker"),
          json: { ...body, amount: 50 }
        }),
        { status: 400, message: "invalid request" }
      )

      const other = await createRfq(after, "taker", rfqBody(after, "taker"))
      const again = await quoteBody(after, "maker1", other, { direction: "sell", amount: 100, label })
      expectError(await after.api.post("/v1/rfq/quote", { token: after.token("maker1"), json: again }), {
        status: 400,
        message: "a quote with the same clientQuoteId already exists"
      })

      const replay = await bulk(after, nonce)
      expect(replay).toHaveProperty("exchangeError")
      expect(replay).not.toHaveProperty("blockTradeId")

      const quotes = expectOk<{ results: Array<{ rfqQuoteId: number; status: string }> }>(
        await after.api.get("/v1/rfq/quotes", {
          token: after.token("maker2"),
          query: { rfqId: protectedRfq }
        }),
        "QuotePage"
      )
      expect(quotes.results.map((q) => [q.rfqQuoteId, q.status])).toEqual([[protectedQuote, "cancelled"]])
      expect((await getRfq(after, "taker", protectedRfq)).status).toBe("open")
    }
  )
])

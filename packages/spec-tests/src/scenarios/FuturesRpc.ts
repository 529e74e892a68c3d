import { expect } from "vitest"
import { quoteBody } from "../Fixtures.js"
import { expectRpcError } from "../RpcExpect.js"
import { withRpcSession } from "../RpcSession.js"
import { group, scenario } from "../Scenario.js"
import { expectOk } from "../Shapes.js"
import { futuresBody, PERPETUAL } from "./Futures.js"

/**
 * A perpetual RFQ from creation to trade over JSON-RPC sessions (taker and two makers), with the
 * futures amount rules answered as JSON-RPC errors: the same rules as over REST (Futures.ts).
 */

export const futuresRpc = group("futures over JSON-RPC", [
  scenario(
    "a perpetual over JSON-RPC: no expiry on its leg, quotes on DBT and BULL, the step refused, the BULL bid traded",
    async (w) => {
      await withRpcSession(w, "taker", async (taker) => {
        const below = await taker.call("v1/rfq/create", { id: 0, ...futuresBody(w, PERPETUAL, 190_000) })
        expectRpcError(below, {
          code: -32602,
          message: "invalid request",
          status: 400,
          reasonIncludes: ["200000"]
        })
        const { rfqId } = await taker.result<{ rfqId: number }>("v1/rfq/create", {
          id: w.nextRequestId(),
          ...futuresBody(w, PERPETUAL, 400_000, {
            legs: [{ direction: "sell", instrumentName: PERPETUAL, ratio: 1 }]
          })
        })
        const rfq = await taker.result<Record<string, any>>("v1/rfq/get", { id: rfqId })
        expect(rfq).toMatchObject({ strategy: "Perp", description: "BTC Perp", quoteCurrency: "USDC" })
        // docs/api.md and the OpenAPI document: a perpetual has no expiry.
        expect(rfq.legs).toHaveLength(1)
        expect(rfq.legs[0]).toMatchObject({ instrumentName: PERPETUAL, direction: "sell", amount: 400_000 })
        expect(rfq.legs[0]).not.toHaveProperty("expiry")

        const ask = await quoteBody(w, "maker1", rfqId, { direction: "sell", amount: 400_000 })
        const bid = await quoteBody(w, "maker2", rfqId, {
          direction: "buy",
          amount: 300_000,
          settlementOption: "BULL"
        })
        let askId = 0
        let bidId = 0
        await withRpcSession(w, "maker1", async (maker) => {
          expectRpcError(await maker.call("v1/quote/create", { ...ask, amount: 399_995 }), {
            code: -32602,
            message: "invalid request",
            status: 400,
            reasonIncludes: ["step 10"]
          })
          askId = (await maker.result<{ rfqQuoteId: number }>("v1/quote/create", ask)).rfqQuoteId
        })
        await withRpcSession(w, "maker2", async (maker) => {
          bidId = (await maker.result<{ rfqQuoteId: number }>("v1/quote/create", bid)).rfqQuoteId
        })
        const book = await taker.result<Array<{ settlementOption: string; quoteCurrency: string }>>(
          "v1/rfq/quotes",
          { id: rfqId }
        )
        expect(book.map((b) => [b.settlementOption, b.quoteCurrency]).sort()).toEqual([
          ["BULL", "USDC"],
          ["DBT", "USDC"]
        ])

        const answer = await taker.result<{ trades: Array<Record<string, any>> }>("v1/rfq/trade", {
          rfqQuoteId: bidId
        })
        // The taker sells the structure it asked for (the maker's quote was a bid).
        expect(answer.trades).toMatchObject([{ direction: "sell", amount: 300_000 }])
        expect(answer.trades[0]!.exchangeTradeId).toMatch(/^BULL-/)
        expect(await taker.result("v1/rfq/get", { id: rfqId })).toMatchObject({
          status: "filled",
          tradeDirection: "sell",
          tradeAmount: 300_000,
          filledAmount: 300_000
        })
        // Accepting one quote closed the other.
        const quotes = expectOk<{ results: Array<{ rfqQuoteId: number; status: string }> }>(
          await w.api.get("/v1/rfq/quotes", { token: w.token("maker1"), query: { rfqId } }),
          "QuotePage"
        )
        expect(quotes.results.map((q) => [q.rfqQuoteId, q.status])).toEqual([[askId, "cancelled"]])
      })
    }
  )
])

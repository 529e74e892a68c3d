import { expect } from "vitest"
import { createRfq, getRfq, placeQuote, quoteBody, rfqBody, split, trade } from "../Fixtures.js"
import { group, scenario } from "../Scenario.js"
import { expectError, expectOk } from "../Shapes.js"

/** Accepting a quote: one block trade per settlement account, ending filled, filledPartial or refused. */

interface Allocation {
  credentialsId: number
  percentage: number
  amount: number
  status: string
  exchangeTradeId?: string
  reason?: string
}

export const settlement = group("settlement", [
  scenario(
    "a split 60/40 over dbt-main and dbt-alt ends filled with one block trade per account",
    async (w) => {
      const rfqId = await createRfq(
        w,
        "taker",
        rfqBody(w, "taker", {
          settlementAccounts: split(w, [
            ["dbt-main", 60],
            ["dbt-alt", 40]
          ])
        })
      )
      const quoteId = await placeQuote(w, "maker1", rfqId, { direction: "sell", amount: 100 })
      const answer = await trade(w, "taker", quoteId)
      expect(answer.rfqId).toBe(rfqId)
      expect(answer.allocations).toMatchObject([
        { credentialsId: w.credentialsId("taker", "dbt-main"), percentage: 60, amount: 60, status: "filled" },
        { credentialsId: w.credentialsId("taker", "dbt-alt"), percentage: 40, amount: 40, status: "filled" }
      ])
      expect(answer.trades.map((t) => [t.direction, t.amount])).toEqual([
        ["buy", 60],
        ["buy", 40]
      ])
      const ids = answer.trades.map((t) => t.exchangeTradeId)
      expect(new Set(ids).size).toBe(2)
      expect(answer.allocations!.map((a) => a.exchangeTradeId)).toEqual(ids)

      const rfq = await getRfq(w, "taker", rfqId)
      expect(rfq).toMatchObject({
        status: "filled",
        tradeAmount: 100,
        filledAmount: 100,
        tradeId: answer.rfqTradeId
      })
      expect(rfq.tradeAllocations).toEqual(answer.allocations)
      // Accepting ended the RFQ: the quote is filled and cannot be accepted again.
      const quotes = expectOk<{ results: Array<{ rfqQuoteId: number; status: string }> }>(
        await w.api.get("/v1/rfq/quotes", { token: w.token("maker1"), query: { rfqId } }),
        "QuotePage"
      )
      expect(quotes.results.find((q) => q.rfqQuoteId === quoteId)?.status).toBe("filled")
      const again = await w.api.post("/v1/rfq/trade", {
        token: w.token("taker"),
        json: { rfqQuoteId: quoteId }
      })
      expect(again.status).toBeGreaterThanOrEqual(400)
      expect(again.status).toBeLessThan(500)
      expectOk(again, "ErrorBody", again.status)
    }
  ),

  scenario(
    "a split 50/50 over dbt-flaky and dbt-main ends filledPartial: filledAmount and a failed allocation with a reason",
    async (w) => {
      const rfqId = await createRfq(
        w,
        "taker",
        rfqBody(w, "taker", {
          settlementAccounts: split(w, [
            ["dbt-flaky", 50],
            ["dbt-main", 50]
          ])
        })
      )
      const quoteId = await placeQuote(w, "maker2", rfqId, { direction: "buy", amount: 100 })
      const answer = await trade(w, "taker", quoteId)
      const allocations = answer.allocations as ReadonlyArray<Allocation>
      expect(allocations).toHaveLength(2)
      const [flaky, main] = allocations
      expect(flaky).toMatchObject({
        credentialsId: w.credentialsId("taker", "dbt-flaky"),
        amount: 50,
        status: "failed"
      })
      expect(flaky!.reason).toEqual(expect.any(String))
      expect(flaky).not.toHaveProperty("exchangeTradeId")
      expect(main).toMatchObject({
        credentialsId: w.credentialsId("taker", "dbt-main"),
        amount: 50,
        status: "filled"
      })
      // Only the settled account has a trade; the taker sold (the maker's quote was a bid).
      expect(answer.trades.map((t) => [t.direction, t.amount, t.exchangeTradeId])).toEqual([
        ["sell", 50, main!.exchangeTradeId]
      ])

      const rfq = await getRfq(w, "taker", rfqId)
      expect(rfq).toMatchObject({
        status: "filledPartial",
        tradeAmount: 100,
        filledAmount: 50,
        tradeDirection: "sell"
      })
      expect(rfq.tradeAllocations).toEqual(allocations)
      const maker = await getRfq(w, "maker2", rfqId)
      expect(maker).toMatchObject({ status: "filledPartial", tradeDirection: "buy", filledAmount: 50 })
      expect(maker).not.toHaveProperty("tradeAllocations")
    }
  ),

  scenario(
    "all of it on dbt-flaky: the trade is refused with 400, the RFQ stays open and the quote active",
    async (w) => {
      const rfqId = await createRfq(
        w,
        "taker",
        rfqBody(w, "taker", { settlementAccounts: split(w, [["dbt-flaky", 100]]) })
      )
      const quoteId = await placeQuote(w, "maker1", rfqId, { direction: "sell", amount: 100 })
      expectError(
        await w.api.post("/v1/rfq/trade", { token: w.token("taker"), json: { rfqQuoteId: quoteId } }),
        {
          status: 400,
          message: "invalid request",
          reasonIncludes: [String(w.credentialsId("taker", "dbt-flaky"))]
        }
      )
      const rfq = await getRfq(w, "taker", rfqId)
      expect(rfq.status).toBe("open")
      for (const field of ["tradeId", "tradeDirection", "filledAmount", "tradeAllocations"])
        expect(rfq).not.toHaveProperty(field)
      const book = expectOk<Array<{ asks: Array<{ rfqQuoteId: number }> }>>(
        await w.api.get(`/v1/rfq/${rfqId}/quote`, { token: w.token("taker") }),
        "TakerQuotesResponse"
      )
      expect(book[0]?.asks.map((q) => q.rfqQuoteId)).toEqual([quoteId])
      const quotes = expectOk<{ results: Array<{ rfqQuoteId: number; status: string }> }>(
        await w.api.get("/v1/rfq/quotes", { token: w.token("maker1"), query: { rfqId } }),
        "QuotePage"
      )
      expect(quotes.results.find((q) => q.rfqQuoteId === quoteId)?.status).toBe("active")
    }
  ),

  scenario("single-account settlement answers trades without allocations", async (w) => {
    const rfqId = await createRfq(w, "taker", rfqBody(w, "taker"))
    const quoteId = await placeQuote(w, "maker1", rfqId, { direction: "sell", amount: 40 })
    const answer = await trade(w, "taker", quoteId)
    expect(answer).not.toHaveProperty("allocations")
    expect(answer.trades).toMatchObject([{ direction: "buy", amount: 40 }])
    const rfq = await getRfq(w, "taker", rfqId)
    // One trade ends the RFQ: the traded amount is the accepted quote's.
    expect(rfq).toMatchObject({ status: "filled", amount: 100, tradeAmount: 40, filledAmount: 40 })
  }),

  scenario("a BULL quote on a USDC RFQ settles on bull-main", async (w) => {
    const rfqId = await createRfq(
      w,
      "taker",
      rfqBody(w, "taker", {
        quoteCurrency: "USDC",
        settlementOptions: ["DBT", "BULL"],
        settlementCredentials: {
          DBT: w.credentialsId("taker", "dbt-main"),
          BULL: w.credentialsId("taker", "bull-main")
        },
        makers: { DBT: ["maker-1"], BULL: ["maker-2"] }
      })
    )
    const body = await quoteBody(w, "maker2", rfqId, {
      direction: "sell",
      amount: 100,
      settlementOption: "BULL"
    })
    const quoteId = expectOk<{ rfqQuoteId: number }>(
      await w.api.post("/v1/rfq/quote", { token: w.token("maker2"), json: body }),
      "CreateQuoteResponse"
    ).rfqQuoteId
    // maker-2 is not invited on DBT.
    expectError(
      await w.api.post("/v1/rfq/quote", {
        token: w.token("maker2"),
        json: { ...body, settlementOption: "DBT" }
      }),
      {
        status: 400,
        message: "invalid request"
      }
    )
    const book = expectOk<Array<{ settlementOption: string; quoteCurrency: string }>>(
      await w.api.get(`/v1/rfq/${rfqId}/quote`, { token: w.token("taker") }),
      "TakerQuotesResponse"
    )
    expect(book.map((b) => [b.settlementOption, b.quoteCurrency])).toEqual([["BULL", "USDC"]])
    const answer = await trade(w, "taker", quoteId)
    expect(answer.trades).toMatchObject([{ direction: "buy", amount: 100 }])
    expect((await getRfq(w, "taker", rfqId)).status).toBe("filled")
  })
])

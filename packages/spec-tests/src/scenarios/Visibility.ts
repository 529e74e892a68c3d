import { expect } from "vitest"
import { createRfq, getRfq, placeQuote, rfqBody, split, trade } from "../Fixtures.js"
import { group, scenario } from "../Scenario.js"
import { expectError, expectOk } from "../Shapes.js"
import type { World } from "../World.js"

/** Who sees what: roles, and each field's visibility per caller (spec Resources, contract Lists). */

const TAKER_ONLY_SINGLE = ["settlementCredentials", "tradeAllocations"] as const
const TRADE_FIELDS = [
  "tradeDirection",
  "tradePrice",
  "tradeAmount",
  "tradeCreatedAt",
  "tradeId",
  "filledAmount"
] as const

const listed = async (w: World, party: "taker" | "maker1" | "maker2" | "maker3", rfqId: number) => {
  const rfq = await getRfq(w, "taker", rfqId)
  const page = expectOk<{ results: Array<Record<string, unknown>> }>(
    await w.api.get("/v1/rfq", {
      token: w.token(party),
      query: { startTime: rfq.createdAt - 1, endTime: rfq.createdAt + 1, limit: 1000 }
    }),
    "RfqPage"
  )
  return page.results.find((r) => r.rfqId === rfqId)
}

export const visibility = group("roles and visibility", [
  scenario(
    "a viewer reads but gets 403 insufficient permissions on every write and on the account endpoints",
    async (w) => {
      const rfqId = await createRfq(w, "taker", rfqBody(w, "taker", { label: `viewer-${w.tag}` }))
      const viewer = w.token("viewer")
      // Reads outside the account endpoints are open to a viewer (same desk as the taker).
      const seen = expectOk(await w.api.get(`/v1/rfq/${rfqId}`, { token: viewer }), "Rfq")
      expect(seen).toMatchObject({ rfqId, role: "taker", label: `viewer-${w.tag}` })
      expectOk(await w.api.get("/v1/rfq", { token: viewer }), "RfqPage")
      expectOk(await w.api.get(`/v1/rfq/${rfqId}/quote`, { token: viewer }), "TakerQuotesResponse")
      expectOk(await w.api.get("/v1/exchange/maker", { token: viewer }), "MakerList")
      expectOk(
        await w.api.get("/v1/exchange/instruments", {
          token: viewer,
          query: { exchange: "DBT", baseCurrency: "BTC" }
        }),
        "InstrumentListings"
      )

      const denied: ReadonlyArray<readonly [string, string, unknown?]> = [
        ["POST", "/v1/rfq/0", rfqBody(w, "taker")],
        ["DELETE", `/v1/rfq/${rfqId}`],
        ["POST", "/v1/rfq/cancel", { rfqId }],
        ["POST", "/v1/rfq/trade", { rfqQuoteId: 1 }],
        ["POST", "/v1/rfq/quote", { rfqId }],
        ["PUT", "/v1/rfq/quote", { rfqQuoteId: 1 }],
        ["DELETE", "/v1/rfq/quote", { rfqQuoteId: 1 }],
        ["POST", "/v1/rfq/quote/cancel-all", {}],
        ["POST", "/v1/block-trade/bulk", {}],
        ["GET", "/v1/account/exchange-credentials"],
        ["GET", `/v1/account/exchange-credentials/${w.credentialsId("taker", "dbt-main")}`],
        ["POST", "/v1/account/exchange-credentials", {}],
        ["DELETE", `/v1/account/exchange-credentials/${w.credentialsId("taker", "dbt-main")}`],
        ["GET", "/v1/account/otc-counterparty"]
      ]
      for (const [method, path, json] of denied) {
        const response = await w.api.request(method, path, {
          token: viewer,
          ...(json === undefined ? {} : { json })
        })
        expectError(response, { status: 403, message: "insufficient permissions" })
      }
      // Nothing the viewer attempted happened.
      expect((await getRfq(w, "taker", rfqId)).status).toBe("open")
      expectOk(
        await w.api.get("/v1/account/exchange-credentials", { token: w.token("taker") }),
        "ExchangeCredentialsList"
      )
    }
  ),

  scenario(
    "the taker sees label and settlementCredentials on a single fetch; a list item carries neither settlement field",
    async (w) => {
      const label = `visible-${w.tag}`
      const rfqId = await createRfq(
        w,
        "taker",
        rfqBody(w, "taker", {
          label,
          settlementAccounts: split(w, [
            ["dbt-main", 60],
            ["dbt-alt", 40]
          ])
        })
      )
      const single = await getRfq(w, "taker", rfqId)
      expect(single).toMatchObject({ rfqId, role: "taker", label, status: "open" })
      expect(single.settlementCredentials).toEqual([
        { settlementOption: "DBT", credentialsId: w.credentialsId("taker", "dbt-main"), percentage: 60 },
        { settlementOption: "DBT", credentialsId: w.credentialsId("taker", "dbt-alt"), percentage: 40 }
      ])
      for (const field of ["tradeAllocations", ...TRADE_FIELDS]) expect(single).not.toHaveProperty(field)

      const item = await listed(w, "taker", rfqId)
      expect(item).toMatchObject({ rfqId, role: "taker", label })
      for (const field of TAKER_ONLY_SINGLE) expect(item).not.toHaveProperty(field)
    }
  ),

  scenario(
    "an invited maker sees the RFQ as maker without label, settlement accounts or other desks' quotes",
    async (w) => {
      const rfqId = await createRfq(w, "taker", rfqBody(w, "taker", { label: `secret-${w.tag}` }))
      const q1 = await placeQuote(w, "maker1", rfqId, { direction: "sell", amount: 100 })
      const q2 = await placeQuote(w, "maker2", rfqId, { direction: "buy", amount: 50 })
      for (const [maker, own] of [
        ["maker1", q1],
        ["maker2", q2]
      ] as const) {
        const seen = await getRfq(w, maker, rfqId)
        expect(seen.role).toBe("maker")
        for (const field of ["label", ...TAKER_ONLY_SINGLE, ...TRADE_FIELDS])
          expect(seen).not.toHaveProperty(field)
        expect((seen.quotes as Array<{ rfqQuoteId: number }>).map((q) => q.rfqQuoteId)).toEqual([own])
        const item = await listed(w, maker, rfqId)
        expect(item).toMatchObject({ rfqId, role: "maker" })
        expect(item).not.toHaveProperty("label")
        // The quote book is the taker's.
        expectError(await w.api.get(`/v1/rfq/${rfqId}/quote`, { token: w.token(maker) }), {
          status: 404,
          message: "rfq not found"
        })
      }
      const taker = await getRfq(w, "taker", rfqId)
      expect((taker.quotes as Array<{ rfqQuoteId: number }>).map((q) => q.rfqQuoteId).sort()).toEqual(
        [q1, q2].sort()
      )
    }
  ),

  scenario(
    "an uninvited maker gets 404 rfq not found everywhere and never sees the RFQ listed",
    async (w) => {
      const rfqId = await createRfq(w, "taker", rfqBody(w, "taker"))
      const outsider = w.token("maker3")
      const notFound = { status: 404, message: "rfq not found" } as const
      expectError(await w.api.get(`/v1/rfq/${rfqId}`, { token: outsider }), notFound)
      expectError(await w.api.get(`/v1/rfq/${rfqId}/quote`, { token: outsider }), notFound)
      expectError(
        await w.api.post("/v1/rfq/quote", {
          token: outsider,
          json: {
            rfqId,
            direction: "sell",
            amount: 100,
            settlementOption: "DBT",
            legs: [
              { instrumentName: "BTC-27DEC30-90000-C", price: 0.5 },
              { instrumentName: "BTC-27DEC30-110000-C", price: 0.4 }
            ]
          }
        }),
        notFound
      )
      expectError(
        await w.api.post("/v1/rfq/leg-prices", {
          token: outsider,
          json: {
            rfqId,
            price: 0.05,
            legs: [{ direction: "buy", instrumentName: "BTC-27DEC30-90000-C", ratio: 1 }]
          }
        }),
        notFound
      )
      expectError(await w.api.post("/v1/rfq/cancel", { token: outsider, json: { rfqId } }), notFound)
      expectError(await w.api.delete(`/v1/rfq/${rfqId}`, { token: outsider }), notFound)
      expect(await listed(w, "maker3", rfqId)).toBeUndefined()
    }
  ),

  scenario("an RFQ that does not exist is 404 rfq not found", async (w) => {
    for (const path of ["/v1/rfq/9007199254740991", "/v1/rfq/9007199254740991/quote"]) {
      expectError(await w.api.get(path, { token: w.token("taker") }), {
        status: 404,
        message: "rfq not found"
      })
    }
  }),

  scenario(
    "trade fields go to the trade's parties only, each with its own direction; allocations to the taker's single fetch",
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
      const winner = await placeQuote(w, "maker1", rfqId, { direction: "sell", amount: 100 })
      await placeQuote(w, "maker2", rfqId, { direction: "sell", amount: 100 })
      const answer = await trade(w, "taker", winner)

      const taker = await getRfq(w, "taker", rfqId)
      expect(taker).toMatchObject({
        status: "filled",
        tradeDirection: "buy",
        tradeAmount: 100,
        filledAmount: 100,
        tradeId: answer.rfqTradeId
      })
      expect(taker.tradeAllocations).toHaveLength(2)
      expect((taker.trades as Array<{ direction: string }>).map((t) => t.direction)).toEqual(["buy", "buy"])

      const maker = await getRfq(w, "maker1", rfqId)
      expect(maker).toMatchObject({
        status: "filled",
        tradeDirection: "sell",
        tradeAmount: 100,
        tradeId: answer.rfqTradeId
      })
      expect(maker.tradePrice).toBe(taker.tradePrice)
      expect((maker.trades as Array<{ direction: string }>).map((t) => t.direction)).toEqual(["sell", "sell"])
      for (const field of ["label", ...TAKER_ONLY_SINGLE]) expect(maker).not.toHaveProperty(field)

      // maker-2 was invited and quoted but is not a party of the trade.
      const loser = await getRfq(w, "maker2", rfqId)
      expect(loser.status).toBe("filled")
      for (const field of [...TRADE_FIELDS, ...TAKER_ONLY_SINGLE]) expect(loser).not.toHaveProperty(field)
      expect(loser.trades ?? []).toEqual([])

      const item = await listed(w, "taker", rfqId)
      expect(item).toMatchObject({ tradeDirection: "buy", tradeId: answer.rfqTradeId })
      for (const field of TAKER_ONLY_SINGLE) expect(item).not.toHaveProperty(field)
      const loserItem = await listed(w, "maker2", rfqId)
      for (const field of TRADE_FIELDS) expect(loserItem).not.toHaveProperty(field)
    }
  )
])

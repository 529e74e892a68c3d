import { expect } from "vitest"
import { createRfq, getRfq, quoteBody, type RfqBody, trade } from "../Fixtures.js"
import { group, scenario } from "../Scenario.js"
import { expectError, expectOk } from "../Shapes.js"
import type { World } from "../World.js"

/**
 * Future, future-spread and perpetual RFQs from creation to trade, on DBT and on BULL (contract:
 * futures and perpetuals trade in USD with an amount step of 10 and a minimum block of 200,000 for
 * BTC, 100,000 for ETH; docs/instruments.md: a futures RFQ without a quote currency is quoted in
 * USDC, on the linear contracts of both venues). Far quarterly names always resolve, so nothing
 * depends on today's listing; the listing itself is checked for the same parameters. The
 * perpetual goes through the same steps over JSON-RPC in FuturesRpc.ts.
 */

const FUTURE = "BTC-27DEC30"
const SPREAD_TO_PERP = "BTC-FS-27DEC30_PERP"
const CALENDAR_SPREAD = "BTC-FS-27DEC30_28MAR31"
export const PERPETUAL = "BTC-PERPETUAL"

export const futuresBody = (
  w: World,
  instrumentName: string,
  amount: number,
  overrides: RfqBody = {}
): RfqBody => ({
  baseCurrency: "BTC",
  amount,
  anonymous: false,
  label: `futures-${w.tag}`,
  settlementOptions: ["DBT", "BULL"],
  settlementCredentials: {
    DBT: w.credentialsId("taker", "dbt-main"),
    BULL: w.credentialsId("taker", "bull-main")
  },
  makers: { DBT: ["maker-1"], BULL: ["maker-2"] },
  legs: [{ direction: "buy", instrumentName, ratio: 1 }],
  ...overrides
})

const postRfq = (w: World, body: RfqBody) => w.api.post("/v1/rfq/0", { token: w.token("taker"), json: body })

const postQuote = (w: World, maker: "maker1" | "maker2", body: unknown) =>
  w.api.post("/v1/rfq/quote", { token: w.token(maker), json: body })

interface Listing {
  instrumentName: string
  kind: string
  quoteCurrency: string
  amountStep: number
  minBlockAmount: number
  tickSize: number
}

export const futures = group("futures and perpetuals end to end", [
  scenario(
    "the listings of both venues carry the futures parameters: step 10, minimum 200,000 (BTC) and 100,000 (ETH)",
    async (w) => {
      for (const exchange of ["DBT", "BULL"]) {
        for (const [baseCurrency, minimum] of [
          ["BTC", 200_000],
          ["ETH", 100_000]
        ] as const) {
          const listed = expectOk<Array<Listing>>(
            await w.api.get("/v1/exchange/instruments", {
              token: w.token("taker"),
              query: { exchange, baseCurrency, kind: "future" }
            }),
            "InstrumentListings"
          )
          expect(new Set(listed.map((i) => i.kind))).toEqual(
            new Set(["future", "perpetual", "future_spread"])
          )
          expect(listed.map((i) => i.instrumentName)).toContain(`${baseCurrency}-PERPETUAL`)
          for (const i of listed) {
            expect(i, `${exchange} ${i.instrumentName}`).toMatchObject({
              amountStep: 10,
              minBlockAmount: minimum
            })
          }
          // BULL lists only linear contracts.
          if (exchange === "BULL")
            expect(new Set(listed.map((i) => i.quoteCurrency))).toEqual(new Set(["USDC"]))
        }
      }
    }
  ),

  scenario(
    "a BTC future: below 200,000 and off the step of 10 are refused at creation; quoted in USDC on both venues; quote amounts off the step or below the minimum refused; traded on DBT",
    async (w) => {
      const below = await postRfq(w, futuresBody(w, FUTURE, 199_990))
      expectError(below, { status: 400, message: "invalid request", reasonIncludes: ["200000"] })
      const offStep = await postRfq(w, futuresBody(w, FUTURE, 200_005))
      expectError(offStep, { status: 400, message: "invalid request", reasonIncludes: ["multiple of"] })
      expect((offStep.body as { reason: Array<string> }).reason.join(" ")).toMatch(/multiple of .*\b10\b/)

      const rfqId = await createRfq(w, "taker", futuresBody(w, FUTURE, 300_000))
      const rfq = await getRfq(w, "taker", rfqId)
      expect(rfq).toMatchObject({
        kind: "future",
        strategy: "Future",
        description: "BTC 27DEC30 Future",
        quoteCurrency: "USDC",
        quoteCurrencies: { DBT: "USDC", BULL: "USDC" },
        amount: 300_000
      })
      expect(rfq.legs).toMatchObject([
        { instrumentName: FUTURE, expiry: "27DEC30", amount: 300_000, ratio: 1 }
      ])

      const body = await quoteBody(w, "maker1", rfqId, { direction: "sell", amount: 250_000 })
      // Off the step, below the minimum, above the RFQ amount.
      for (const [amount, reason] of [
        [250_005, "step 10"],
        [150_000, "minimum"],
        [300_010, "exceeds the RFQ amount"]
      ] as const) {
        const refused = await postQuote(w, "maker1", { ...body, amount })
        expectError(refused, { status: 400, message: "invalid request", reasonIncludes: [reason] })
      }
      const quoteId = expectOk<{ rfqQuoteId: number }>(
        await postQuote(w, "maker1", body),
        "CreateQuoteResponse"
      ).rfqQuoteId

      const answer = await trade(w, "taker", quoteId)
      expect(answer).not.toHaveProperty("allocations")
      expect(answer.trades).toHaveLength(1)
      expect(answer.trades[0]).toMatchObject({ direction: "buy", amount: 250_000 })
      expect(answer.trades[0]!.exchangeTradeId).toMatch(/^DBT-/)
      const price = answer.trades[0]!.price
      expect(price).toBe(body.legs[0]!.price)

      expect(await getRfq(w, "taker", rfqId)).toMatchObject({
        status: "filled",
        tradeDirection: "buy",
        tradePrice: price,
        tradeAmount: 250_000,
        filledAmount: 250_000,
        trades: answer.trades
      })
      const maker = await getRfq(w, "maker1", rfqId)
      expect(maker).toMatchObject({
        status: "filled",
        tradeDirection: "sell",
        tradeAmount: 250_000,
        filledAmount: 250_000
      })
      expect(maker.trades).toMatchObject([{ direction: "sell", amount: 250_000, price }])
    }
  ),

  scenario(
    "a future spread to the perpetual, bid on BULL: the taker sells, settled on BULL at the spread's price",
    async (w) => {
      const rfqId = await createRfq(w, "taker", futuresBody(w, SPREAD_TO_PERP, 200_000))
      const rfq = await getRfq(w, "taker", rfqId)
      expect(rfq).toMatchObject({
        kind: "future",
        strategy: "Fut Spd",
        description: "BTC 27DEC30/PERP Fut Spd",
        quoteCurrency: "USDC",
        quoteCurrencies: { DBT: "USDC", BULL: "USDC" }
      })
      // A spread expires with its near leg.
      expect(rfq.legs).toMatchObject([{ instrumentName: SPREAD_TO_PERP, expiry: "27DEC30", amount: 200_000 }])

      const body = await quoteBody(w, "maker2", rfqId, {
        direction: "buy",
        amount: 200_000,
        settlementOption: "BULL"
      })
      // maker-2 is invited on BULL only.
      expectError(await postQuote(w, "maker2", { ...body, settlementOption: "DBT" }), {
        status: 400,
        message: "invalid request"
      })
      const quoteId = expectOk<{ rfqQuoteId: number }>(
        await postQuote(w, "maker2", body),
        "CreateQuoteResponse"
      ).rfqQuoteId
      const answer = await trade(w, "taker", quoteId)
      expect(answer.trades).toMatchObject([
        { direction: "sell", amount: 200_000, price: body.legs[0]!.price }
      ])
      expect(answer.trades[0]!.exchangeTradeId).toMatch(/^BULL-/)
      expect(await getRfq(w, "taker", rfqId)).toMatchObject({
        status: "filled",
        tradeDirection: "sell",
        tradeAmount: 200_000,
        filledAmount: 200_000
      })
    }
  ),

  scenario(
    "a calendar future spread quoted in BTC settles on DBT's inverse contract; an ETH future needs 100,000",
    async (w) => {
      const rfqId = await createRfq(
        w,
        "taker",
        futuresBody(w, CALENDAR_SPREAD, 200_000, {
          quoteCurrency: "BTC",
          settlementOptions: ["DBT"],
          settlementCredentials: { DBT: w.credentialsId("taker", "dbt-main") },
          makers: { DBT: ["maker-1"] }
        })
      )
      const rfq = await getRfq(w, "taker", rfqId)
      expect(rfq).toMatchObject({
        strategy: "Fut Spd",
        description: "BTC 27DEC30/28MAR31 Fut Spd",
        quoteCurrency: "BTC",
        quoteCurrencies: { DBT: "BTC" }
      })
      expect(rfq.legs).toMatchObject([{ instrumentName: CALENDAR_SPREAD, expiry: "27DEC30" }])
      const body = await quoteBody(w, "maker1", rfqId, { direction: "sell", amount: 200_000 })
      const quoteId = expectOk<{ rfqQuoteId: number }>(
        await postQuote(w, "maker1", body),
        "CreateQuoteResponse"
      ).rfqQuoteId
      const answer = await trade(w, "taker", quoteId)
      expect(answer.trades).toMatchObject([{ direction: "buy", amount: 200_000 }])
      expect(answer.trades[0]!.exchangeTradeId).toMatch(/^DBT-/)

      const eth = (amount: number) =>
        futuresBody(w, "ETH-27DEC30", amount, {
          baseCurrency: "ETH",
          settlementOptions: ["DBT"],
          settlementCredentials: { DBT: w.credentialsId("taker", "dbt-main") },
          makers: { DBT: ["maker-1"] }
        })
      expectError(await postRfq(w, eth(99_990)), {
        status: 400,
        message: "invalid request",
        reasonIncludes: ["100000"]
      })
      expect((await getRfq(w, "taker", await createRfq(w, "taker", eth(100_000)))).legs).toMatchObject([
        { instrumentName: "ETH-27DEC30", amount: 100_000 }
      ])
    }
  )
])

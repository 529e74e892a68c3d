import { expect } from "vitest"
import { createRfq, getRfq, legPricesAtMark, rfqBody, sleep } from "../Fixtures.js"
import { group, scenario } from "../Scenario.js"
import { expectError, expectOk } from "../Shapes.js"
import type { World } from "../World.js"

/**
 * RFQs past their lifetime, on a host started with a short `RFQ_TTL_SECONDS`: the RFQ reads
 * `expired`, its quotes expire with it, and quoting, trading or cancelling it is `RFQ has expired`.
 */

/** Waits (polling, no assertion on time) until the RFQ reads as expired. */
const untilExpired = async (w: World, rfqId: number) => {
  const rfq = await getRfq(w, "taker", rfqId)
  await sleep(Math.max(0, rfq.expiresAt - Date.now()))
  for (let attempt = 0; attempt < 100; attempt++) {
    const seen = await getRfq(w, "taker", rfqId)
    if (seen.status === "expired") return seen
    await sleep(200)
  }
  throw new Error(`RFQ ${rfqId} never read as expired`)
}

export const expiry = (ttlSeconds: number) =>
  group("expiry", [
    scenario(
      "an RFQ expires after RFQ_TTL_SECONDS with its quotes; quote, trade and cancel are refused with RFQ has expired",
      async (w) => {
        const probe = await createRfq(w, "taker", rfqBody(w, "taker"))
        // Leg prices are taken once beforehand, so the quote below is one request after the RFQ.
        const legs = await legPricesAtMark(w, "maker1", await getRfq(w, "maker1", probe), "DBT")
        const rfqId = await createRfq(w, "taker", rfqBody(w, "taker"))
        const quote = { rfqId, direction: "sell", amount: 100, settlementOption: "DBT", legs }
        const quoteId = expectOk<{ rfqQuoteId: number }>(
          await w.api.post("/v1/rfq/quote", { token: w.token("maker1"), json: quote }),
          "CreateQuoteResponse"
        ).rfqQuoteId

        const expired = await untilExpired(w, rfqId)
        expect(expired.expiresAt - expired.createdAt).toBe(ttlSeconds * 1000)
        expect(expired.quotes ?? []).toEqual([])
        for (const field of ["tradeId", "tradeDirection", "filledAmount"])
          expect(expired).not.toHaveProperty(field)

        const hasExpired = { status: 400, message: "RFQ has expired" } as const
        expectError(await w.api.post("/v1/rfq/quote", { token: w.token("maker2"), json: quote }), hasExpired)
        expectError(
          await w.api.post("/v1/rfq/cancel", { token: w.token("taker"), json: { rfqId } }),
          hasExpired
        )
        // Accepting a quote of an expired RFQ: the reason it cannot trade is the RFQ's expiry.
        expectError(
          await w.api.post("/v1/rfq/trade", { token: w.token("taker"), json: { rfqQuoteId: quoteId } }),
          hasExpired
        )
        expectError(await w.api.delete(`/v1/rfq/${rfqId}`, { token: w.token("taker") }), {
          status: 400,
          message: "can only delete a draft or cancelled RFQ"
        })

        const makerQuotes = expectOk<{ results: Array<{ rfqQuoteId: number; status: string }> }>(
          await w.api.get("/v1/rfq/quotes", { token: w.token("maker1"), query: { rfqId } }),
          "QuotePage"
        )
        expect(makerQuotes.results.map((q) => [q.rfqQuoteId, q.status])).toEqual([[quoteId, "expired"]])
        expect(
          expectOk(
            await w.api.get(`/v1/rfq/${rfqId}/quote`, { token: w.token("taker") }),
            "TakerQuotesResponse"
          )
        ).toEqual([])
        // The maker reads it as expired too.
        expect((await getRfq(w, "maker1", rfqId)).status).toBe("expired")
      }
    ),

    scenario("the list filter expired finds expired RFQs and open no longer does", async (w) => {
      const rfqId = await createRfq(w, "taker", rfqBody(w, "taker"))
      const createdAt = (await getRfq(w, "taker", rfqId)).createdAt
      await untilExpired(w, rfqId)
      const list = async (status: string) =>
        expectOk<{ results: Array<{ rfqId: number; status: string }> }>(
          await w.api.get("/v1/rfq", {
            token: w.token("taker"),
            query: { status, startTime: createdAt - 1 }
          }),
          "RfqPage"
        ).results.map((r) => [r.rfqId, r.status])
      expect(await list("expired")).toEqual([[rfqId, "expired"]])
      expect(await list("open")).toEqual([])
      expect(await list("open,expired")).toEqual([[rfqId, "expired"]])
    })
  ])

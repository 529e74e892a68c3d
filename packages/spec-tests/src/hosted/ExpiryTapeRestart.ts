import { expect } from "vitest"
import { ApiClient } from "../ApiClient.js"
import { createRfq, getRfq, quoteBody, rfqBody, sleep, trade } from "../Fixtures.js"
import { group, scenario } from "../Scenario.js"
import { expectError, expectOk } from "../Shapes.js"
import type { World } from "../World.js"
import type { HostedContext } from "./HostControl.js"

/**
 * Issue 16 across a restart: a quote's `validUntil` timer armed before the restart fires after it
 * (once; a quote whose instant passed while the host was down is expired as it starts), and the
 * tape keeps every print. Waits poll without asserting on time.
 */

const quoteStatus = async (api: ApiClient, w: World, rfqId: number, quoteId: number) =>
  expectOk<{ results: Array<{ rfqQuoteId: number; status: string }> }>(
    await api.get("/v1/rfq/quotes", { token: w.token("maker1"), query: { rfqId } }),
    "QuotePage"
  ).results.find((q) => q.rfqQuoteId === quoteId)?.status

export const expiryTapeRestart = group<HostedContext>("quote expiry and the tape across a restart", [
  scenario(
    "validUntil timers survive a restart, and the tape keeps its prints",
    async ({ world: given, host }) => {
      // An earlier restart in this group may have moved the host: its address now, not the world's.
      const w: World = { ...given, api: new ApiClient(host.url()) }
      const rfqId = await createRfq(w, "taker", rfqBody(w, "taker"))
      const createdAt = (await getRfq(w, "taker", rfqId)).createdAt
      const localAt = Date.now()
      const now = () => createdAt + (Date.now() - localAt)
      const place = async (maker: "maker1", validUntil: number, label: string) =>
        expectOk<{ rfqQuoteId: number }>(
          await w.api.post("/v1/rfq/quote", {
            token: w.token(maker),
            json: {
              ...(await quoteBody(w, maker, rfqId, { direction: "sell", amount: 100, label })),
              validUntil
            }
          }),
          "CreateQuoteResponse"
        ).rfqQuoteId
      // One that passes while the host is down, one that fires well after it is back.
      const soon = await place("maker1", now() + 1_500, `soon-${w.tag}`)
      const laterAt = now() + 20_000
      const later = await place("maker1", laterAt, `later-${w.tag}`)
      const printed = await createRfq(w, "taker", rfqBody(w, "taker"))
      const printQuote = expectOk<{ rfqQuoteId: number }>(
        await w.api.post("/v1/rfq/quote", {
          token: w.token("maker2"),
          json: await quoteBody(w, "maker2", printed, { direction: "sell", amount: 100 })
        }),
        "CreateQuoteResponse"
      ).rfqQuoteId
      const traded = await trade(w, "taker", printQuote)
      const tapeOf = async (api: ApiClient) =>
        expectOk<{ results: Array<{ tradeId: number }> }>(
          await api.get("/v1/trades/public", {
            token: w.token("viewer"),
            query: { startTime: createdAt - 1 }
          }),
          "PublicTradePage"
        ).results.find((r) => r.tradeId === traded.rfqTradeId)
      const before = await tapeOf(w.api)
      expect(before).toBeDefined()

      await sleep(1_600)
      await host.restart()
      const api = new ApiClient(host.url())
      expect(await quoteStatus(api, w, rfqId, soon)).toBe("expired")
      expectError(await api.post("/v1/rfq/trade", { token: w.token("taker"), json: { rfqQuoteId: soon } }), {
        status: 400,
        message: "quote has expired"
      })
      expect(await tapeOf(api)).toEqual(before)
      if (now() < laterAt) expect(await quoteStatus(api, w, rfqId, later)).toBe("active")
      await sleep(Math.max(0, laterAt - now()))
      for (let attempt = 0; (await quoteStatus(api, w, rfqId, later)) !== "expired"; attempt++) {
        if (attempt > 150) throw new Error("the re-armed validUntil never fired")
        await sleep(100)
      }
      expectError(await api.post("/v1/rfq/trade", { token: w.token("taker"), json: { rfqQuoteId: later } }), {
        status: 400,
        message: "quote has expired"
      })
      expect((await getRfq({ ...w, api }, "taker", rfqId)).status).toBe("open")
    }
  )
])

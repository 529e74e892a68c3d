import { expect } from "vitest"
import { ApiClient } from "../ApiClient.js"
import { oauthToken } from "../scenarios/Authentication.js"
import { createRfq, placeQuote, rfqBody } from "../Fixtures.js"
import { group, scenario } from "../Scenario.js"
import { expectOk } from "../Shapes.js"
import { demoClients, secretOf, traders, type World } from "../World.js"
import type { HostedContext } from "./HostControl.js"

/**
 * Restart on the same data loses nothing: every RFQ (with its quotes, trade and allocations),
 * every quote, credentials and counterparties read the same before and after a SIGTERM and a new
 * start; tokens issued before still work, and a refresh token issued before can be used after.
 */

const everyPage = async (api: ApiClient, token: string, path: string) => {
  const items: Array<unknown> = []
  let cursor = 0
  for (let guard = 0; guard < 1000; guard++) {
    const page = expectOk<{ cursor: number; results: Array<unknown> }>(
      await api.get(path, { token, query: { limit: 1000, ...(cursor === 0 ? {} : { cursor }) } }),
      path === "/v1/rfq" ? "RfqPage" : "QuotePage"
    )
    items.push(...page.results)
    if (page.cursor === 0) return items
    cursor = page.cursor
  }
  throw new Error("the cursor never reached 0")
}

/** Everything a desk can read, as the service answers it. */
const snapshot = async (api: ApiClient, w: World) => {
  const out: Record<string, unknown> = {}
  for (const party of traders) {
    const token = w.token(party)
    const rfqs = (await everyPage(api, token, "/v1/rfq")) as Array<{ rfqId: number; role: string }>
    out[`${party} rfqs`] = rfqs
    for (const rfq of rfqs) {
      out[`${party} rfq ${rfq.rfqId}`] = expectOk(await api.get(`/v1/rfq/${rfq.rfqId}`, { token }), "Rfq")
      if (rfq.role === "taker") {
        out[`${party} book ${rfq.rfqId}`] = expectOk(
          await api.get(`/v1/rfq/${rfq.rfqId}/quote`, { token }),
          "TakerQuotesResponse"
        )
      }
    }
    out[`${party} quotes`] = await everyPage(api, token, "/v1/rfq/quotes")
    const credentials = expectOk<Array<{ credentialsId: number }>>(
      await api.get("/v1/account/exchange-credentials", { token }),
      "ExchangeCredentialsList"
    )
    out[`${party} credentials`] = credentials
    for (const c of credentials) {
      out[`${party} credentials ${c.credentialsId}`] = expectOk(
        await api.get(`/v1/account/exchange-credentials/${c.credentialsId}`, { token }),
        "ExchangeCredentialsDetail"
      )
    }
    out[`${party} counterparties`] = expectOk(
      await api.get("/v1/account/otc-counterparty", { token }),
      "OtcCounterpartyList"
    )
  }
  out.makers = expectOk(await api.get("/v1/exchange/maker", { token: w.token("taker") }), "MakerList")
  return out
}

export const restart = group<HostedContext>("restart", [
  scenario(
    "a restart on the same data loses nothing and old tokens keep working",
    async ({ world, host }) => {
      // Something of every kind exists: the suite ran before this, and this adds an open RFQ with an
      // active quote and extra credentials.
      const open = await createRfq(world, "taker", rfqBody(world, "taker"))
      await placeQuote(world, "maker1", open, {
        direction: "sell",
        amount: 100,
        label: `restart-${world.tag}`
      })
      expectOk(
        await world.api.post("/v1/account/exchange-credentials", {
          token: world.token("maker2"),
          json: { alias: `restart-${world.tag}`, exchange: "BULL", clientId: "id", clientSecret: "secret" }
        }),
        "CreateExchangeCredentialsResponse"
      )
      const refreshable = await oauthToken(world.api, demoClients.maker3)

      const before = await snapshot(world.api, world)
      expect((before["taker rfqs"] as Array<unknown>).length).toBeGreaterThan(0)
      expect((before["maker1 quotes"] as Array<unknown>).length).toBeGreaterThan(0)

      await host.restart()
      const api = new ApiClient(host.url())
      const after = await snapshot(api, world)
      expect(after).toEqual(before)

      // The refresh token issued before the restart rotates after it.
      const refreshed = await api.post("/oauth/token", {
        raw: new URLSearchParams({
          grant_type: "refresh_token",
          refresh_token: refreshable.refresh_token,
          client_id: demoClients.maker3,
          client_secret: secretOf(demoClients.maker3)
        }).toString(),
        headers: { "content-type": "application/x-www-form-urlencoded" }
      })
      expectOk(refreshed, "OAuthTokenResponse")

      // The restored RFQ still trades, with a block trade id never used before.
      const quotes = expectOk<Array<{ asks: Array<{ rfqQuoteId: number }> }>>(
        await api.get(`/v1/rfq/${open}/quote`, { token: world.token("taker") }),
        "TakerQuotesResponse"
      )
      const quoteId = quotes[0]!.asks[0]!.rfqQuoteId
      const traded = expectOk<{ trades: Array<{ exchangeTradeId: string }> }>(
        await api.post("/v1/rfq/trade", { token: world.token("taker"), json: { rfqQuoteId: quoteId } }),
        "TradeResponse"
      )
      const earlier = new Set(
        Object.entries(before)
          .filter(([key]) => key.startsWith("taker rfq "))
          .flatMap(([, rfq]) =>
            ((rfq as { trades?: Array<{ exchangeTradeId: string }> }).trades ?? []).map(
              (t) => t.exchangeTradeId
            )
          )
      )
      expect(earlier.size).toBeGreaterThan(0)
      for (const t of traded.trades) expect(earlier.has(t.exchangeTradeId)).toBe(false)
    }
  )
])

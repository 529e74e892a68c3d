import { expect } from "vitest"
import { ApiClient, type ApiResponse } from "../ApiClient.js"
import { sleep } from "../Fixtures.js"
import { group, scenario } from "../Scenario.js"
import { expectError, expectOk } from "../Shapes.js"
import { demoClients, secretOf } from "../World.js"

/**
 * Rate limits on a host started with a small `RATE_LIMIT_PER_MINUTE`: per user once authenticated,
 * per client IP before (the token endpoints included), the headers on every response, 429 with the
 * standard body past the limit, and `X-Forwarded-For` buys nothing.
 */

const headersOf = (response: ApiResponse) => ({
  limit: Number(response.headers.get("x-ratelimit-limit")),
  remaining: Number(response.headers.get("x-ratelimit-remaining")),
  reset: Number(response.headers.get("x-ratelimit-reset"))
})

/**
 * The windows are fixed minutes. `nextWindow`: wait until the current one ends. `roomyWindow`: wait
 * only if fewer than `seconds` are left, so that a sequence of requests falls into one window (the
 * waits arrange the test; nothing is asserted about time).
 */
const nextWindow = async (api: ApiClient) => {
  const probe = headersOf(await api.get("/healthz"))
  await sleep(Math.max(0, probe.reset * 1000 - Date.now()) + 200)
}
/** Returns how many requests of this client's IP the current window has seen (the probe's). */
const roomyWindow = async (api: ApiClient, seconds = 20): Promise<number> => {
  const probe = headersOf(await api.get("/healthz"))
  if (probe.reset * 1000 - Date.now() >= seconds * 1000) return probe.limit - probe.remaining
  await sleep(Math.max(0, probe.reset * 1000 - Date.now()) + 200)
  return 0
}

export const rateLimit = (limit: number) =>
  group<string>("rate limits", [
    scenario(
      `${limit} requests a minute per user and per IP; 429 with the standard body; X-Forwarded-For changes nothing`,
      async (url) => {
        const api = new ApiClient(url)
        const ipUsed = await roomyWindow(api)
        const spoof = (i: number) => ({ "x-forwarded-for": `203.0.113.${i}`, "x-real-ip": `198.51.100.${i}` })
        const login = (clientId: string, i: number) =>
          api.post("/v1/auth", { json: { clientId, clientSecret: secretOf(clientId) }, headers: spoof(i) })

        // Per IP before authentication: two logins here, the rest of the IP's budget below.
        const taker = expectOk<{ access_token: string }>(
          await login(demoClients.taker, 1),
          "AuthResponse"
        ).access_token
        const maker = expectOk<{ access_token: string }>(
          await login(demoClients.maker1, 2),
          "AuthResponse"
        ).access_token

        // Per user: `limit` requests pass, counting down, whatever X-Forwarded-For says.
        const window = headersOf(await api.get("/v1/exchange/maker", { token: taker, headers: spoof(3) }))
        expect(window).toMatchObject({ limit, remaining: limit - 1 })
        for (let i = 2; i <= limit; i++) {
          const response = await api.get("/v1/exchange/maker", { token: taker, headers: spoof(i + 3) })
          expectOk(response, "MakerList")
          expect(headersOf(response)).toEqual({ limit, remaining: limit - i, reset: window.reset })
        }
        for (const headers of [{}, spoof(50), { "x-forwarded-for": "127.0.0.2, 10.0.0.1" }]) {
          const refused = await api.get("/v1/exchange/maker", { token: taker, headers })
          expectError(refused, { status: 429, message: "rate limit exceeded" })
          expect(headersOf(refused)).toEqual({ limit, remaining: 0, reset: window.reset })
        }
        // A refused request did nothing: writes are refused before they run.
        expectError(await api.post("/v1/rfq/cancel", { token: taker, json: { rfqId: 1 } }), {
          status: 429,
          message: "rate limit exceeded"
        })

        // Another user has its own budget.
        const other = await api.get("/v1/exchange/maker", { token: maker })
        expectOk(other, "MakerList")
        expect(headersOf(other).remaining).toBe(limit - 1)

        // The IP budget: `limit` unauthenticated requests in all, token endpoints included.
        const ipRequests: Array<ApiResponse> = []
        for (let i = ipUsed + 3; i <= limit; i++) ipRequests.push(await login(demoClients.maker2, 10 + i))
        for (const response of ipRequests) expectOk(response, "AuthResponse")
        const lastIp = headersOf(ipRequests[ipRequests.length - 1]!)
        expect(lastIp).toMatchObject({ limit, remaining: 0 })
        const oauth = await api.post("/oauth/token", {
          raw: new URLSearchParams({
            grant_type: "client_credentials",
            client_id: demoClients.maker3,
            client_secret: secretOf(demoClients.maker3)
          }).toString(),
          headers: { "content-type": "application/x-www-form-urlencoded", ...spoof(90) }
        })
        expect(oauth.status).toBe(429)
        expect(oauth.body).toMatchObject({ code: 429, message: "rate limit exceeded" })
        expectError(await login(demoClients.maker2, 91), { status: 429, message: "rate limit exceeded" })
        expectError(await api.get("/healthz", { headers: spoof(92) }), {
          status: 429,
          message: "rate limit exceeded"
        })
        // An invalid token counts against the IP.
        expectError(
          await api.get("/v1/exchange/maker", { headers: { authorization: "Bearer nope", ...spoof(93) } }),
          {
            status: 429,
            message: "rate limit exceeded"
          }
        )
        // The authenticated maker is not held back by its IP.
        expectOk(await api.get("/v1/exchange/maker", { token: maker, headers: spoof(94) }), "MakerList")
      }
    ),

    scenario("the budget comes back in the next window", async (url) => {
      const api = new ApiClient(url)
      await nextWindow(api)
      const fresh = await api.get("/healthz")
      expectOk(fresh, "HealthResponse")
      expect(headersOf(fresh)).toMatchObject({ limit, remaining: limit - 1 })
    })
  ])

import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RfqClient, RfqError, type Tokens } from "../src/index.js"
import {
  callSpread,
  type ClientTestHost,
  demoClient,
  eventually,
  HOST_START_TIMEOUT_MS,
  startHost
} from "./support/hosts.js"

/**
 * The REST side against a real host: each shape of operation (path, query, body; GET, POST, PUT,
 * DELETE), errors with the spec's status and message, and tokens renewed by refresh or a fresh
 * login when the refresh is refused.
 */

let host: ClientTestHost
let taker: RfqClient
let maker: RfqClient

const rejection = async (promise: Promise<unknown>): Promise<RfqError> => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e
  )
  expect(error).toBeInstanceOf(RfqError)
  return error as RfqError
}

beforeAll(async () => {
  host = await startHost({ RATE_LIMIT_PER_MINUTE: "100000" })
  taker = demoClient(host.url(), "demo-taker")
  maker = demoClient(host.url(), "demo-maker-1")
}, HOST_START_TIMEOUT_MS)

afterAll(async () => {
  taker?.logout()
  maker?.logout()
  await host?.stop()
}, HOST_START_TIMEOUT_MS)

describe("operations", () => {
  it("an RFQ's life: path + body, path, query, body, PUT, DELETE with a body, DELETE by path", async () => {
    const { rfqId } = await taker.call("v1/rfq/create", callSpread(["maker-1"]) as never)
    const rfq = await taker.call("v1/rfq/get", { id: rfqId })
    expect([rfq.rfqId, rfq.status, rfq.amount]).toEqual([rfqId, "open", 50])

    // A list as a query: the key repeated.
    const page = await taker.call("v1/rfq/list", {
      role: "taker",
      status: ["open", "cancelled"],
      limit: 1000
    })
    expect(page.results.map((r) => r.rfqId)).toContain(rfqId)
    const none = await taker.call("v1/rfq/list", { status: "filled" })
    expect(none.results.map((r) => r.rfqId)).not.toContain(rfqId)

    const legs = rfq.legs.map(({ instrumentName, direction, ratio }) => ({
      instrumentName,
      direction,
      ratio
    }))
    const priced = await maker.call("v1/rfq/leg-prices", { rfqId, price: 0.07, legs })
    const quoteLegs = priced.legs.map((l) => ({ instrumentName: l.instrumentName, price: l.price }))
    const quote = { amount: 50, settlementOption: "DBT", legs: quoteLegs, label: "rest-q" }
    const { rfqQuoteId } = await maker.call("v1/quote/create", {
      ...quote,
      rfqId,
      direction: "sell"
    } as never)
    await maker.call("v1/quote/update", { ...quote, rfqQuoteId } as never)
    const mine = await maker.call("v1/quote/list", { rfqId })
    expect(mine.results.map((q) => [q.rfqQuoteId, q.label, q.status])).toEqual([
      [rfqQuoteId, "rest-q", "active"]
    ])
    const ladders = await taker.call("v1/rfq/quotes", { id: rfqId })
    expect(ladders.flatMap((l) => l.asks.map((a) => a.rfqQuoteId))).toEqual([rfqQuoteId])

    await maker.call("v1/quote/delete", { label: "rest-q" })
    expect((await maker.call("v1/quote/list", { rfqId })).results.map((q) => q.status)).toEqual(["cancelled"])

    await taker.call("v1/rfq/cancel", { rfqId })
    await taker.call("v1/rfq/delete", { id: rfqId })
    const gone = await rejection(taker.call("v1/rfq/get", { id: rfqId }))
    expect([gone.status, gone.code, gone.message]).toEqual([404, 404, "rfq not found"])
  })

  it("GET without input and with a query; account operations by path and body", async () => {
    const makers = await taker.call("v1/exchange/maker", {})
    expect(makers.map((m) => m.makerId)).toEqual(expect.arrayContaining(["maker-1", "maker-2", "maker-3"]))
    const calls = await taker.call("v1/exchange/instruments", {
      exchange: "DBT",
      baseCurrency: "BTC",
      kind: "option"
    })
    expect(calls.length).toBeGreaterThan(0)
    expect(calls.every((i) => i.kind === "option" && i.instrumentName.startsWith("BTC-"))).toBe(true)

    const { credentialsId } = await taker.call("v1/account/exchange-credentials/create", {
      alias: "client-test",
      exchange: "DBT",
      clientId: "venue-id",
      clientSecret: "venue-secret"
    })
    const detail = await taker.call("v1/account/exchange-credentials/get", { id: credentialsId })
    expect([detail.alias, detail.clientId, detail.clientSecret]).toEqual([
      "client-test",
      "venue-id",
      "venue-secret"
    ])
    await taker.call("v1/account/exchange-credentials/delete", { id: credentialsId })
    const deleted = await rejection(taker.call("v1/account/exchange-credentials/get", { id: credentialsId }))
    expect([deleted.status, deleted.message]).toEqual([404, "credentials not found"])
  })
})

describe("errors", () => {
  it("400 with the spec's message and the reasons naming the fields", async () => {
    const error = await rejection(taker.call("v1/rfq/create", { id: 0 } as never))
    expect([error.status, error.code, error.message]).toEqual([400, 400, "invalid request"])
    expect(error.reasons).toContain("amount: is missing")
  })

  it("403 for a viewer's write, 401 for a wrong secret and for a token the service never issued", async () => {
    const viewer = demoClient(host.url(), "demo-viewer")
    const forbidden = await rejection(viewer.call("v1/rfq/cancel", { rfqId: 1 }))
    expect([forbidden.status, forbidden.message]).toEqual([403, "insufficient permissions"])
    viewer.logout()

    const wrong = demoClient(host.url(), "demo-taker", { clientSecret: "not-the-secret" })
    const refused = await rejection(wrong.login())
    expect([refused.status, refused.message]).toEqual([401, "invalid client ID"])

    const forged = demoClient(host.url(), "x", {
      clientId: undefined,
      clientSecret: undefined,
      accessToken: "abc"
    } as never)
    const invalid = await rejection(forged.call("v1/exchange/maker", {}))
    expect(invalid.status).toBe(401)
    expect(invalid.message).toBe("authorisation token expired or not valid")
  })

  it("a hostile path parameter is percent-encoded: it reaches /v1/rfq/{id} and is refused there", async () => {
    const error = await rejection(taker.call("v1/rfq/get", { id: "../exchange/maker" as never }))
    expect([error.status, error.message]).toEqual([400, "invalid request"])
  })
})

describe("tokens", () => {
  /** Records the token endpoint's answers, as a proxy would see them (the requests are real). */
  const observedFetch = (answers: Array<Record<string, unknown>>): typeof fetch =>
    (async (input: RequestInfo | URL, init?: RequestInit) => {
      const response = await fetch(input, init)
      if (String(input).endsWith("/oauth/token")) answers.push((await response.clone().json()) as never)
      return response
    }) as typeof fetch

  it("renews the access token with the refresh grant before it expires", async () => {
    const seen: Array<Tokens> = []
    // 300 s tokens renewed 299 s ahead: the keeper's timer renews after a second.
    const client = demoClient(host.url(), "demo-maker-2", { refreshAheadSeconds: 299 })
    client.onTokens((tokens) => seen.push(tokens))
    await client.login()
    await eventually(() => seen.length >= 3)
    expect(seen.map((t) => t.via)).toEqual(["login", "refresh", "refresh"])
    expect(new Set(seen.map((t) => t.accessToken)).size).toBe(3)
    expect((await client.call("v1/exchange/maker", {})).length).toBeGreaterThan(0)
    client.logout()
  })

  it("a call refused 401 (family revoked) logs in afresh and is sent again; a refused refresh falls back to a login", async () => {
    const answers: Array<Record<string, unknown>> = []
    const client = demoClient(host.url(), "demo-maker-3", { fetch: observedFetch(answers) })
    const seen: Array<Tokens> = []
    client.onTokens((tokens) => seen.push(tokens))
    await client.login()
    const spend = (refreshToken: unknown) =>
      fetch(`${host.url()}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "refresh_token",
          refresh_token: String(refreshToken),
          client_id: "demo-maker-3",
          client_secret: "demo-maker-3-secret"
        })
      })

    // Someone spends the client's refresh token twice: the replay revokes the whole family,
    // the client's access token with it.
    expect((await spend(answers[0]!["refresh_token"])).status).toBe(200)
    expect((await spend(answers[0]!["refresh_token"])).status).toBe(401)
    const revoked = await client.accessToken()
    for (;;) {
      const probe = await fetch(`${host.url()}/v1/exchange/maker`, {
        headers: { authorization: `Bearer ${revoked}` }
      })
      if (probe.status === 401) break
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    expect((await client.call("v1/exchange/maker", {})).length).toBeGreaterThan(0)
    expect(seen.map((t) => t.via)).toEqual(["login", "login"])

    // Someone spends the new refresh token once: the client's refresh is then the replay,
    // refused, and the client logs in afresh.
    expect((await spend(answers.at(-1)!["refresh_token"])).status).toBe(200)
    const renewed = await client.renewToken()
    expect(renewed.via).toBe("login")
    expect(seen.map((t) => t.via)).toEqual(["login", "login", "login"])
    expect((await client.call("v1/exchange/maker", {})).length).toBeGreaterThan(0)
    client.logout()
  })
})

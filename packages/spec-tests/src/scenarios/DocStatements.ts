import { expect } from "vitest"
import { createRfq, getRfq, quoteBody, type RfqBody, rfqBody } from "../Fixtures.js"
import { connectWs } from "../reliability/WsClient.js"
import { expectRpcError } from "../RpcExpect.js"
import { withRpcSession } from "../RpcSession.js"
import { group, scenario } from "../Scenario.js"
import { expectError, expectOk } from "../Shapes.js"
import type { World } from "../World.js"

/**
 * Statements of docs/*.md checked where the rest of the suite does not: each scenario quotes the
 * statement it checks, on REST and, where the statement covers it, on JSON-RPC. Found by the audit
 * of issue 12 ("go looking for the next class"); the ones that failed then and still fail say so.
 */

const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

/** The same 32 signature bytes spelled differently: the last character's two unused bits flipped. */
const respelledSignature = (token: string): string => {
  const last = token.at(-1)!
  const index = BASE64URL.indexOf(last)
  return `${token.slice(0, -1)}${BASE64URL[index ^ 1]}`
}

/** A call spread of 100 hedged with BTC-PERPETUAL of 200,000 at the perpetual's mark. */
const hedgedBody = async (w: World): Promise<RfqBody> => {
  // The perpetual's mark, read as the markPrice of a one-leg perpetual RFQ (USD, inverse on DBT).
  const probe = await getRfq(
    w,
    "taker",
    await createRfq(w, "taker", {
      ...rfqBody(w, "taker"),
      amount: 200_000,
      quoteCurrency: "BTC",
      legs: [{ direction: "buy", instrumentName: "BTC-PERPETUAL", ratio: 1 }]
    })
  )
  const price = Math.round(probe.markPrice * 2) / 2
  return rfqBody(w, "taker", {
    hedge: { direction: "sell", instrumentName: "BTC-PERPETUAL", amount: 200_000, price }
  })
}

export const docStatements = group("statements of docs/", [
  scenario("api.md, rate limits: X-RateLimit-* headers are on every response, 413 included", async (w) => {
    const tooLarge = new Uint8Array(1024 * 1024 + 1).fill(32)
    for (const response of [
      await w.api.post("/v1/rfq/cancel", { token: w.token("taker"), raw: tooLarge }),
      await w.api.post("/v1/auth", { raw: tooLarge })
    ]) {
      expectError(response, { status: 413, message: "request body too large" })
      for (const header of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) {
        expect(response.headers.get(header) ?? "(absent)", header).toMatch(/^\d+$/)
      }
    }
  }),

  scenario(
    "api.md, quotes: a hedged RFQ needs the quote's hedge {instrumentName, price}, on REST and JSON-RPC",
    async (w) => {
      const body = await hedgedBody(w)
      const rfqId = await createRfq(w, "taker", body)
      const hedge = body.hedge as { instrumentName: string; price: number }
      const withoutHedge = await quoteBody(w, "maker1", rfqId, { direction: "sell", amount: 100 })
      expectError(await w.api.post("/v1/rfq/quote", { token: w.token("maker1"), json: withoutHedge }), {
        status: 400,
        message: "invalid request",
        reasonIncludes: ["hedge"]
      })
      await withRpcSession(w, "maker1", async (maker) => {
        expectRpcError(await maker.call("v1/quote/create", withoutHedge), {
          code: -32602,
          message: "invalid request",
          status: 400,
          reasonIncludes: ["hedge"]
        })
      })
      // Nothing was stored; with the hedge the same quote is taken.
      const listed = expectOk<{ results: Array<unknown> }>(
        await w.api.get("/v1/rfq/quotes", { token: w.token("maker1"), query: { rfqId } }),
        "QuotePage"
      )
      expect(listed.results).toEqual([])
      const withHedge = {
        ...withoutHedge,
        hedge: { instrumentName: hedge.instrumentName, price: hedge.price }
      }
      expectOk(
        await w.api.post("/v1/rfq/quote", { token: w.token("maker1"), json: withHedge }),
        "CreateQuoteResponse"
      )
    }
  ),

  scenario(
    "algorithms.md, settlement accounts: every violation of rules 1–3 is reported, one reason each, not only the first",
    async (w) => {
      const main = w.credentialsId("taker", "dbt-main")
      const response = await w.api.post("/v1/rfq/0", {
        token: w.token("taker"),
        json: rfqBody(w, "taker", {
          settlementAccounts: {
            DBT: [
              { credentialsId: main, percentage: 0 },
              { credentialsId: main, percentage: 90 }
            ]
          }
        })
      })
      expectError(response, { status: 400, message: "invalid request" })
      const reasons = (response.body as { reason: Array<string> }).reason
      const describe = JSON.stringify(reasons)
      // Rule 2 (a percentage of 0), rule 3 (the same credentials twice), rule 1 (90 in total).
      expect(
        reasons.some((r) => /greater than 0/.test(r)),
        describe
      ).toBe(true)
      expect(
        reasons.some((r) => /more than once|duplicate/i.test(r)),
        describe
      ).toBe(true)
      expect(
        reasons.some((r) => /\b90\b/.test(r) && /100/.test(r)),
        describe
      ).toBe(true)
    }
  ),

  scenario(
    "auth.md, tokens: only the token as issued verifies; the same signature spelled differently is refused",
    async (w) => {
      const token = w.token("taker")
      expectOk(await w.api.get("/v1/exchange/maker", { token }), "MakerList")
      const notAsIssued = { status: 401, message: "authorisation token expired or not valid" } as const
      for (const altered of [respelledSignature(token), `${token}=`]) {
        expect(altered).not.toBe(token)
        expectError(await w.api.get("/v1/exchange/maker", { token: altered }), notAsIssued)
      }
      // The WebSocket's `auth` runs the same verification.
      const connection = await connectWs(w.api.baseUrl)
      try {
        expectRpcError(await connection.rpc("auth", { token: respelledSignature(token) }), {
          code: -32001,
          message: notAsIssued.message,
          status: 401
        })
      } finally {
        connection.close()
      }
    }
  ),

  scenario(
    "api.md, create ids: one key creates one RFQ, also when REST and JSON-RPC send it at once; another body under it is 400",
    async (w) => {
      const requestId = w.nextRequestId()
      const body = rfqBody(w, "taker", { label: `key-${w.tag}` })
      const ids = await withRpcSession(w, "taker", (session) =>
        Promise.all([
          ...[0, 1, 2].map(async () => createRfq(w, "taker", body, requestId)),
          ...[0, 1, 2].map(
            async () =>
              (await session.result<{ rfqId: number }>("v1/rfq/create", { id: requestId, ...body })).rfqId
          )
        ])
      )
      expect(new Set(ids).size).toBe(1)
      // The same body with its keys in another order is the same body.
      const reordered = Object.fromEntries(Object.entries(body).reverse())
      expect(await createRfq(w, "taker", reordered, requestId)).toBe(ids[0])
      expectError(
        await w.api.post(`/v1/rfq/${requestId}`, { token: w.token("taker"), json: { ...body, amount: 50 } }),
        { status: 400, message: "invalid request", reasonIncludes: [String(requestId)] }
      )
      // Another user may use the same id.
      const maker = await createRfq(
        w,
        "maker1",
        rfqBody(w, "maker1", { makers: { DBT: ["maker-2"] } }),
        requestId
      )
      expect(maker).not.toBe(ids[0])
    }
  ),

  scenario(
    "websocket.md: every REST operation is a JSON-RPC method answering exactly the REST response, errors included",
    async (w) => {
      const rfqId = await createRfq(w, "taker", rfqBody(w, "taker"))
      const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string, string]> = [
        ["v1/rfq/get", { id: rfqId }, "GET", `/v1/rfq/${rfqId}`],
        ["v1/rfq/quotes", { id: rfqId }, "GET", `/v1/rfq/${rfqId}/quote`],
        ["v1/rfq/list", { limit: 3, status: "open" }, "GET", "/v1/rfq?limit=3&status=open"],
        ["v1/rfq/get", { id: 2_000_000_000 }, "GET", "/v1/rfq/2000000000"],
        [
          "v1/exchange/instruments",
          { exchange: "FTX", baseCurrency: "BTC" },
          "GET",
          "/v1/exchange/instruments?exchange=FTX&baseCurrency=BTC"
        ],
        ["v1/account/exchange-credentials", {}, "GET", "/v1/account/exchange-credentials"],
        ["v1/rfq/trade", { rfqQuoteId: 2_000_000_000 }, "POST", "/v1/rfq/trade"]
      ]
      await withRpcSession(w, "taker", async (session) => {
        for (const [method, params, httpMethod, path] of cases) {
          const [pathname, search] = path.split("?")
          const query = Object.fromEntries(new URLSearchParams(search ?? ""))
          const rest = await w.api.request(httpMethod, pathname!, {
            token: w.token("taker"),
            query,
            ...(httpMethod === "POST" ? { json: params } : {})
          })
          const reply = await session.call(method, params)
          if (rest.status === 200) expect(reply.result, method).toEqual(rest.body)
          else {
            const body = rest.body as { message: string; reason?: Array<string> }
            expect(reply.error?.message, method).toBe(body.message)
            expect(reply.error?.data, method).toEqual({ status: rest.status, reason: body.reason ?? [] })
          }
        }
      })
    }
  )
])

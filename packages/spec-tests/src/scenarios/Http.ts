import { Validator } from "@seriousme/openapi-schema-validator"
import { expect } from "vitest"
import { rawRequest } from "../ApiClient.js"
import { createRfq, rfqBody } from "../Fixtures.js"
import { group, scenario } from "../Scenario.js"
import { expectError, expectOk } from "../Shapes.js"

/** The HTTP surface: bad input never gets a 5xx or a hung connection; probes, document, headers. */

const MIB = 1024 * 1024

export const httpSurface = group("HTTP surface", [
  scenario("malformed JSON, a non-object body and invalid UTF-8 are 400 invalid request", async (w) => {
    const token = w.token("taker")
    for (const raw of [
      "{",
      '{"rfqId": }',
      "[1,2]",
      '"text"',
      "null",
      new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])
    ]) {
      const response = await w.api.post("/v1/rfq/cancel", {
        token,
        raw,
        headers: { "content-type": "application/json" }
      })
      expectError(response, { status: 400, message: "invalid request" })
    }
  }),

  scenario("wrong types are 400 invalid request naming the field", async (w) => {
    const token = w.token("taker")
    expectError(await w.api.post("/v1/rfq/cancel", { token, json: { rfqId: "12" } }), {
      status: 400,
      message: "invalid request",
      reasonIncludes: ["rfqId"]
    })
    expectError(await w.api.post("/v1/rfq/cancel", { token, json: { rfqId: 1.5 } }), {
      status: 400,
      message: "invalid request",
      reasonIncludes: ["rfqId"]
    })
    expectError(await w.api.post("/v1/rfq/trade", { token, json: { rfqQuoteId: { id: 1 } } }), {
      status: 400,
      message: "invalid request",
      reasonIncludes: ["rfqQuoteId"]
    })
    expectError(await w.api.post("/v1/rfq/trade", { token, json: {} }), {
      status: 400,
      message: "invalid request",
      reasonIncludes: ["rfqQuoteId: is missing"]
    })
    expectError(await w.api.get("/v1/rfq/-1", { token }), { status: 400, message: "invalid request" })
    expectError(await w.api.get("/v1/rfq/1e3", { token }), { status: 400, message: "invalid request" })
  }),

  scenario("unknown routes are 404 and wrong methods 405, with the standard body", async (w) => {
    const token = w.token("taker")
    expectError(await w.api.get("/v1/nothing-here", { token }), { status: 404, message: "not found" })
    expectError(await w.api.get("/v2/rfq", { token }), { status: 404, message: "not found" })
    expectError(await w.api.get("/nothing", {}), { status: 404, message: "not found" })
    expectError(await w.api.put("/v1/rfq/cancel", { token, json: {} }), {
      status: 405,
      message: "method not allowed"
    })
    expectError(await w.api.get("/v1/rfq/quote/cancel-all", { token }), {
      status: 405,
      message: "method not allowed"
    })
    expectError(await w.api.delete("/v1/exchange/maker", { token }), {
      status: 405,
      message: "method not allowed"
    })
  }),

  scenario("a body over 1 MiB is refused with 413 and the standard body; 1 MiB is still read", async (w) => {
    const token = w.token("taker")
    const tooLarge = await w.api.post("/v1/rfq/cancel", {
      token,
      raw: new Uint8Array(MIB + 1).fill(0x20),
      headers: { "content-type": "application/json" }
    })
    expectError(tooLarge, { status: 413, message: "request body too large" })
    // Exactly 1 MiB of whitespace around a JSON object is within the cap.
    const json = JSON.stringify({ rfqId: 9007199254740991 })
    const padded = `${json}${" ".repeat(MIB - json.length)}`
    expectError(
      await w.api.post("/v1/rfq/cancel", {
        token,
        raw: padded,
        headers: { "content-type": "application/json" }
      }),
      {
        status: 404,
        message: "rfq not found"
      }
    )
    // The service still answers afterwards.
    expectOk(await w.api.get("/healthz"), "HealthResponse")
  }),

  scenario("a GET may carry an empty JSON object as body", async (w) => {
    const rfqId = await createRfq(w, "taker", rfqBody(w, "taker"))
    const response = await rawRequest(
      "GET",
      w.api.url(`/v1/rfq/${rfqId}`),
      { authorization: `Bearer ${w.token("taker")}`, "content-type": "application/json" },
      "{}"
    )
    expect(expectOk(response, "Rfq")).toMatchObject({ rfqId })
    expectOk(
      await rawRequest("GET", w.api.url("/v1/rfq"), { authorization: `Bearer ${w.token("taker")}` }, "{}"),
      "RfqPage"
    )
  }),

  scenario("every response is JSON and carries the X-RateLimit headers", async (w) => {
    const responses = [
      await w.api.get("/v1/exchange/maker", { token: w.token("maker1") }),
      await w.api.get("/v1/rfq/9007199254740991", { token: w.token("maker1") }),
      await w.api.get("/v1/nothing-here", { token: w.token("maker1") }),
      await w.api.get("/v1/exchange/maker"),
      await w.api.get("/healthz")
    ]
    for (const response of responses) {
      expect(response.headers.get("content-type")).toMatch(/^application\/json/)
      const limit = Number(response.headers.get("x-ratelimit-limit"))
      const remaining = Number(response.headers.get("x-ratelimit-remaining"))
      const reset = Number(response.headers.get("x-ratelimit-reset"))
      expect(Number.isInteger(limit) && limit > 0).toBe(true)
      expect(Number.isInteger(remaining) && remaining >= 0 && remaining <= limit).toBe(true)
      // Unix seconds, within the next minute.
      expect(reset).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) - 5)
      expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 65)
    }
    // One user's budget counts down request by request.
    const a = await w.api.get("/v1/exchange/maker", { token: w.token("maker1") })
    const b = await w.api.get("/v1/exchange/maker", { token: w.token("maker1") })
    if (a.headers.get("x-ratelimit-reset") === b.headers.get("x-ratelimit-reset")) {
      expect(Number(b.headers.get("x-ratelimit-remaining"))).toBe(
        Number(a.headers.get("x-ratelimit-remaining")) - 1
      )
    }
  }),

  scenario("health and readiness answer without a token", async (w) => {
    expect(expectOk(await w.api.get("/healthz"), "HealthResponse")).toEqual({ status: "ok" })
    expect(expectOk(await w.api.get("/readyz"), "HealthResponse")).toEqual({ status: "ready" })
  }),

  scenario("GET /v1/openapi.json is a valid OpenAPI 3.1 document covering every operation", async (w) => {
    const response = await w.api.get("/v1/openapi.json")
    expect(response.status).toBe(200)
    const document = response.body as { openapi: string; paths: Record<string, Record<string, unknown>> }
    const validator = new Validator()
    const result = await validator.validate(document as never)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(document.openapi).toMatch(/^3\.1\./)
    const operations: ReadonlyArray<readonly [string, string]> = [
      ["get", "/v1/rfq"],
      ["get", "/v1/rfq/{id}"],
      ["post", "/v1/rfq/{id}"],
      ["delete", "/v1/rfq/{id}"],
      ["post", "/v1/rfq/cancel"],
      ["get", "/v1/rfq/{id}/quote"],
      ["post", "/v1/rfq/trade"],
      ["get", "/v1/rfq/quotes"],
      ["post", "/v1/rfq/quote"],
      ["put", "/v1/rfq/quote"],
      ["delete", "/v1/rfq/quote"],
      ["post", "/v1/rfq/quote/cancel-all"],
      ["post", "/v1/rfq/leg-prices"],
      ["get", "/v1/exchange/maker"],
      ["get", "/v1/exchange/instruments"],
      ["get", "/v1/account/exchange-credentials"],
      ["get", "/v1/account/exchange-credentials/{id}"],
      ["post", "/v1/account/exchange-credentials"],
      ["delete", "/v1/account/exchange-credentials/{id}"],
      ["get", "/v1/account/otc-counterparty"],
      ["post", "/v1/block-trade/bulk"],
      ["post", "/oauth/token"],
      ["post", "/v1/auth"]
    ]
    for (const [method, path] of operations)
      expect(document.paths[path]?.[method], `${method} ${path}`).toBeDefined()
  }),

  scenario("GET /metrics is Prometheus text", async (w) => {
    const response = await w.api.get("/metrics")
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toMatch(/^text\/plain/)
    expect(response.text).toMatch(/^# (HELP|TYPE) /m)
  })
])

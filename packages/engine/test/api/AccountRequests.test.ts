import { assert, describe, it } from "@effect/vitest"
import {
  BulkBlockTradeRequest,
  bulkLimits,
  CreateExchangeCredentialsRequest,
  DeleteExchangeCredentialsRequest,
  GetExchangeCredentialsRequest
} from "../../src/api/AccountRequests.js"
import {
  AuthRequest,
  OAuthTokenRequest,
  SubscribeParams,
  WsAuthParams,
  WsAuthRefreshParams
} from "../../src/api/AuthRequests.js"
import { assertBad, assertDecimal, type BadCase, decodeOk, withFields } from "./support.js"

const invalid = "invalid request"

describe("CreateExchangeCredentialsRequest", () => {
  const body = {
    alias: "dbt-main",
    exchange: "DBT" as const,
    clientId: "abc",
    clientSecret: "s3cret",
    isExchangeDefault: true
  }
  it("decodes the credentials", () => {
    assert.deepStrictEqual(
      decodeOk(CreateExchangeCredentialsRequest, { ...body, credentialsId: 4, deskId: 1 }),
      body
    )
    assert.isFalse(
      "isExchangeDefault" in
        decodeOk(CreateExchangeCredentialsRequest, withFields(body, { isExchangeDefault: undefined }))
    )
  })
  const rows: ReadonlyArray<BadCase> = [
    {
      name: "unknown exchange",
      input: { ...body, exchange: "BINANCE" },
      status: 404,
      message: "exchange not found",
      reason: 'exchange: must be "BULL" or "DBT"'
    },
    {
      name: "empty alias",
      input: { ...body, alias: "" },
      message: "empty value",
      reason: "alias: must not be empty"
    },
    {
      name: "secret missing",
      input: withFields(body, { clientSecret: undefined }),
      message: invalid,
      reason: "clientSecret: is missing"
    },
    {
      name: "default flag as string",
      input: { ...body, isExchangeDefault: "yes" },
      message: invalid,
      reason: 'isExchangeDefault: expected a boolean, got "yes"'
    }
  ]
  for (const row of rows) it(row.name, () => assertBad(CreateExchangeCredentialsRequest, row))

  it("the credentials path id is a positive integer", () => {
    assert.strictEqual(decodeOk(GetExchangeCredentialsRequest, { id: "3" }).id, 3)
    assertBad(DeleteExchangeCredentialsRequest, {
      name: "junk",
      input: { id: "3x" },
      message: invalid,
      reason: 'id: expected a positive integer, got "3x"'
    })
  })
})

const blockTrade = (nonce: string) => ({
  nonce,
  makerExchangeCredentials: "dbt-main",
  takerExchangeCredentials: "dbt-alt",
  trades: [
    { direction: "sell", instrumentName: "BTC-27DEC30-100000-C", price: 0.0125, amount: 25 },
    { direction: "buy", instrumentName: "BTC-FS-27DEC30_PERP", price: -15.5, amount: 200000 }
  ]
})

describe("BulkBlockTradeRequest", () => {
  it("decodes block trades with exact prices", () => {
    const request = decodeOk(BulkBlockTradeRequest, {
      timestamp: 1700000000000,
      blockTrades: [blockTrade("n-1")]
    })
    assert.strictEqual(request.timestamp, 1700000000000)
    assert.strictEqual(request.blockTrades[0]?.nonce, "n-1")
    assertDecimal(request.blockTrades[0]?.trades[0]?.price, "0.0125")
    assertDecimal(request.blockTrades[0]?.trades[1]?.price, "-15.5")
  })
  const rows: ReadonlyArray<BadCase> = [
    {
      name: "nonce repeated in one request",
      input: { timestamp: 1, blockTrades: [blockTrade("a"), blockTrade("b"), blockTrade("a")] },
      message: invalid,
      reason: "blockTrades[2].nonce: duplicates element 0"
    },
    {
      name: "nonce as number",
      input: { timestamp: 1, blockTrades: [{ ...blockTrade("a"), nonce: 5 }] },
      message: invalid,
      reason: "blockTrades[0].nonce: expected a string, got 5"
    },
    {
      name: "no trades",
      input: { timestamp: 1, blockTrades: [{ ...blockTrade("a"), trades: [] }] },
      message: invalid,
      reason: "blockTrades[0].trades: must not be empty"
    },
    {
      name: "negative option price",
      input: {
        timestamp: 1,
        blockTrades: [
          {
            ...blockTrade("a"),
            trades: [{ direction: "sell", instrumentName: "BTC-27DEC30-100000-C", price: -1, amount: 25 }]
          }
        ]
      },
      message: invalid,
      reason:
        "blockTrades[0].trades[0].price: must not be negative (only a future spread can be priced below 0)"
    },
    {
      name: "too many block trades",
      input: {
        timestamp: 1,
        blockTrades: Array.from({ length: bulkLimits.blockTrades + 1 }, (_, i) => blockTrade(`n${i}`))
      },
      message: invalid,
      reason: `blockTrades: must have at most ${bulkLimits.blockTrades} elements`
    },
    {
      name: "timestamp negative",
      input: { timestamp: -1, blockTrades: [blockTrade("a")] },
      message: invalid,
      reason: "timestamp: must be a non-negative integer"
    }
  ]
  for (const row of rows) it(row.name, () => assertBad(BulkBlockTradeRequest, row))
})

describe("token requests", () => {
  it("decodes both grants of the form", () => {
    assert.deepStrictEqual(
      decodeOk(OAuthTokenRequest, {
        grant_type: "client_credentials",
        client_id: "demo-taker",
        client_secret: "x",
        scope: "a"
      }),
      { grant_type: "client_credentials", client_id: "demo-taker", client_secret: "x" }
    )
    assert.deepStrictEqual(
      decodeOk(OAuthTokenRequest, {
        grant_type: "refresh_token",
        refresh_token: "r",
        client_id: "c",
        client_secret: "s"
      }),
      { grant_type: "refresh_token", refresh_token: "r", client_id: "c", client_secret: "s" }
    )
  })
  const rows: ReadonlyArray<BadCase> = [
    {
      name: "unsupported grant",
      input: { grant_type: "password", client_id: "c", client_secret: "s" },
      message: invalid,
      reason: 'grant_type: must be "client_credentials" or "refresh_token"'
    },
    {
      name: "refresh without token",
      input: { grant_type: "refresh_token", client_id: "c", client_secret: "s" },
      message: invalid,
      reason: "refresh_token: is missing"
    },
    {
      name: "client credentials without secret",
      input: { grant_type: "client_credentials", client_id: "c" },
      message: invalid,
      reason: "client_secret: is missing"
    }
  ]
  for (const row of rows) it(row.name, () => assertBad(OAuthTokenRequest, row))

  it("POST /auth needs both credentials", () => {
    assert.deepStrictEqual(decodeOk(AuthRequest, { clientId: "c", clientSecret: "s" }), {
      clientId: "c",
      clientSecret: "s"
    })
    assertBad(AuthRequest, {
      name: "empty id",
      input: { clientId: "", clientSecret: "s" },
      message: "empty value",
      reason: "clientId: must not be empty"
    })
  })
})

describe("WebSocket params", () => {
  it("auth takes a token or client credentials, the token first", () => {
    assert.deepStrictEqual(decodeOk(WsAuthParams, { token: "t" }), { token: "t" })
    assert.deepStrictEqual(decodeOk(WsAuthParams, { clientId: "c", clientSecret: "s" }), {
      clientId: "c",
      clientSecret: "s"
    })
    assert.deepStrictEqual(decodeOk(WsAuthParams, { token: "t", clientId: "c", clientSecret: "s" }), {
      token: "t"
    })
    assertBad(WsAuthParams, { name: "neither", input: {}, message: invalid, reason: "token: is missing" })
    assertBad(WsAuthParams, { name: "neither", input: {}, message: invalid, reason: "clientId: is missing" })
  })
  it("auth/refresh takes a refresh token or a token", () => {
    assert.deepStrictEqual(decodeOk(WsAuthRefreshParams, { refreshToken: "r" }), { refreshToken: "r" })
    assert.deepStrictEqual(decodeOk(WsAuthRefreshParams, { token: "t" }), { token: "t" })
  })
  it("subscribe takes known, distinct channels", () => {
    assert.deepStrictEqual(decodeOk(SubscribeParams, { channels: ["rfq.taker", "rfq_quote.taker"] }), {
      channels: ["rfq.taker", "rfq_quote.taker"]
    })
    assertBad(SubscribeParams, {
      name: "unknown",
      input: { channels: ["trade"] },
      message: invalid,
      reason:
        'channels[0]: must be one of "rfq.maker", "rfq.taker", "rfq_quote.maker", "rfq_quote.taker", "trades"'
    })
    assertBad(SubscribeParams, {
      name: "twice",
      input: { channels: ["rfq.maker", "rfq.maker"] },
      message: invalid,
      reason: "channels[1]: duplicates element 0"
    })
  })
})

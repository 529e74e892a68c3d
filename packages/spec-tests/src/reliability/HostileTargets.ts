/**
 * Every string field of every operation, for the hostile-strings item: where the field sits (JSON
 * body, query string, path segment, token form), a valid request around it, and the name a refusal
 * must give it in its `reason` (`legs[0].instrumentName: …`). Operations without input are left
 * out: they read no client text.
 */

export type Party = "taker" | "maker" | "none"

export interface Target {
  /** JSON-RPC method, when the operation is served over the WebSocket too. */
  readonly rpc?: string
  /** REST method and path (`{id}` is the path segment), when served over REST. */
  readonly rest?: { readonly method: string; readonly path: string }
  /** Where REST finds the fields (besides `{id}`). */
  readonly from: "body" | "query" | "path"
  readonly party: Party
  readonly base: Record<string, unknown>
  /** The string fields, as a reason names them. */
  readonly fields: ReadonlyArray<string>
  /** Fields that take free text (the others are literals, integers or tokens). */
  readonly free: ReadonlyArray<string>
}

/** What a valid request needs from the running host. */
export interface TargetContext {
  readonly credentialsId: number
  readonly openRfqId: number
  readonly quoteId: number
  readonly quoteLabel: string
  readonly legs: ReadonlyArray<{ readonly instrumentName: string; readonly price: number }>
  readonly refreshToken: string
  readonly takerToken: string
}

const rfqLegs = [
  { direction: "buy", instrumentName: "BTC-27DEC30-90000-C", ratio: 1 },
  { direction: "sell", instrumentName: "BTC-27DEC30-110000-C", ratio: 1 }
]

const idPath = (rpc: string, method: string, path: string, party: Party = "taker"): Target => ({
  rpc,
  rest: { method, path },
  from: "path",
  party,
  base: { id: "1" },
  fields: ["id"],
  free: []
})

export const targets = (c: TargetContext): ReadonlyArray<Target> => [
  {
    rpc: "v1/rfq/create",
    rest: { method: "POST", path: "/v1/rfq/0" },
    from: "body",
    party: "taker",
    base: {
      baseCurrency: "BTC",
      quoteCurrency: "BTC",
      amount: 50,
      anonymous: false,
      settlementOptions: ["DBT"],
      settlementCredentials: { DBT: c.credentialsId },
      makers: { DBT: ["maker-1"] },
      legs: rfqLegs,
      hedge: { direction: "buy", instrumentName: "BTC-PERPETUAL", amount: 1000, price: 65000 },
      label: "hostile"
    },
    fields: [
      "label",
      "baseCurrency",
      "quoteCurrency",
      "settlementOptions[0]",
      "makers.DBT[0]",
      "legs[0].direction",
      "legs[0].instrumentName",
      "hedge.direction",
      "hedge.instrumentName"
    ],
    free: ["label", "makers.DBT[0]", "legs[0].instrumentName", "hedge.instrumentName"]
  },
  idPath("v1/rfq/create", "POST", "/v1/rfq/{id}"),
  idPath("v1/rfq/get", "GET", "/v1/rfq/{id}"),
  idPath("v1/rfq/delete", "DELETE", "/v1/rfq/{id}"),
  idPath("v1/rfq/quotes", "GET", "/v1/rfq/{id}/quote"),
  idPath("v1/account/exchange-credentials/get", "GET", "/v1/account/exchange-credentials/{id}"),
  idPath("v1/account/exchange-credentials/delete", "DELETE", "/v1/account/exchange-credentials/{id}"),
  {
    rpc: "v1/rfq/list",
    rest: { method: "GET", path: "/v1/rfq" },
    from: "query",
    party: "taker",
    base: {
      startTime: "1",
      endTime: "9999999999999",
      cursor: "0",
      limit: "5",
      role: "taker",
      baseCurrency: "BTC",
      status: "open"
    },
    fields: ["startTime", "endTime", "cursor", "limit", "role", "baseCurrency", "status"],
    free: []
  },
  {
    rpc: "v1/quote/list",
    rest: { method: "GET", path: "/v1/rfq/quotes" },
    from: "query",
    party: "maker",
    base: { rfqId: String(c.openRfqId), startTime: "1", endTime: "9999999999999", cursor: "0", limit: "5" },
    fields: ["rfqId", "startTime", "endTime", "cursor", "limit"],
    free: []
  },
  {
    rpc: "v1/exchange/instruments",
    rest: { method: "GET", path: "/v1/exchange/instruments" },
    from: "query",
    party: "taker",
    base: { exchange: "DBT", baseCurrency: "BTC", kind: "option" },
    fields: ["exchange", "baseCurrency", "kind"],
    free: []
  },
  {
    rpc: "v1/rfq/cancel",
    rest: { method: "POST", path: "/v1/rfq/cancel" },
    from: "body",
    party: "taker",
    base: { rfqId: "1" },
    fields: ["rfqId"],
    free: []
  },
  {
    rpc: "v1/rfq/trade",
    rest: { method: "POST", path: "/v1/rfq/trade" },
    from: "body",
    party: "taker",
    base: { rfqQuoteId: "1" },
    fields: ["rfqQuoteId"],
    free: []
  },
  {
    rpc: "v1/rfq/leg-prices",
    rest: { method: "POST", path: "/v1/rfq/leg-prices" },
    from: "body",
    party: "maker",
    base: { rfqId: c.openRfqId, price: 0.01, legs: rfqLegs },
    fields: ["legs[0].direction", "legs[0].instrumentName", "legs[1].instrumentName"],
    free: ["legs[0].instrumentName"]
  },
  {
    rpc: "v1/quote/create",
    rest: { method: "POST", path: "/v1/rfq/quote" },
    from: "body",
    party: "maker",
    base: {
      rfqId: c.openRfqId,
      direction: "sell",
      amount: 50,
      settlementOption: "DBT",
      legs: c.legs,
      label: "hq"
    },
    fields: ["label", "direction", "settlementOption", "legs[0].instrumentName", "legs[1].instrumentName"],
    free: ["label", "legs[0].instrumentName"]
  },
  {
    rpc: "v1/quote/update",
    rest: { method: "PUT", path: "/v1/rfq/quote" },
    from: "body",
    party: "maker",
    base: { rfqQuoteId: c.quoteId, amount: 50, settlementOption: "DBT", legs: c.legs, label: c.quoteLabel },
    fields: ["label", "settlementOption", "legs[0].instrumentName"],
    free: []
  },
  {
    rpc: "v1/quote/delete",
    rest: { method: "DELETE", path: "/v1/rfq/quote" },
    from: "body",
    party: "maker",
    base: { label: c.quoteLabel },
    fields: ["label"],
    free: []
  },
  {
    rpc: "v1/quote/cancel-all",
    rest: { method: "POST", path: "/v1/rfq/quote/cancel-all" },
    from: "body",
    party: "maker",
    base: { rfqId: 987_654, baseCurrency: "BTC" },
    fields: ["baseCurrency"],
    free: []
  },
  {
    rpc: "v1/account/exchange-credentials/create",
    rest: { method: "POST", path: "/v1/account/exchange-credentials" },
    from: "body",
    party: "taker",
    base: { alias: "hostile", exchange: "DBT", clientId: "hostile-id", clientSecret: "hostile-secret" },
    fields: ["alias", "exchange", "clientId", "clientSecret"],
    free: ["alias", "clientId", "clientSecret"]
  },
  {
    rpc: "v1/block-trade/bulk",
    rest: { method: "POST", path: "/v1/block-trade/bulk" },
    from: "body",
    party: "taker",
    base: {
      timestamp: 1_700_000_000_000,
      blockTrades: [
        {
          nonce: "hostile",
          makerExchangeCredentials: "dbt-alt",
          takerExchangeCredentials: "dbt-main",
          trades: [
            {
              direction: "sell",
              instrumentName: c.legs[0]!.instrumentName,
              price: c.legs[0]!.price,
              amount: 25
            }
          ]
        }
      ]
    },
    fields: [
      "blockTrades[0].nonce",
      "blockTrades[0].makerExchangeCredentials",
      "blockTrades[0].takerExchangeCredentials",
      "blockTrades[0].trades[0].direction",
      "blockTrades[0].trades[0].instrumentName"
    ],
    free: ["blockTrades[0].nonce", "blockTrades[0].makerExchangeCredentials"]
  },
  // Token endpoints and session methods: refused text only (accepted text there would be a wrong
  // secret, and failed secret checks are limited per address).
  {
    rest: { method: "POST", path: "/v1/auth" },
    from: "body",
    party: "none",
    base: { clientId: "demo-taker", clientSecret: "demo-taker-secret" },
    fields: ["clientId", "clientSecret"],
    free: []
  },
  {
    rest: { method: "POST", path: "/oauth/token" },
    from: "body",
    party: "none",
    base: {
      grant_type: "refresh_token",
      refresh_token: c.refreshToken,
      client_id: "demo-taker",
      client_secret: "demo-taker-secret"
    },
    fields: ["grant_type", "refresh_token", "client_id", "client_secret"],
    free: []
  },
  {
    rpc: "auth",
    from: "body",
    party: "none",
    base: { clientId: "demo-taker", clientSecret: "demo-taker-secret" },
    fields: ["clientId", "clientSecret"],
    free: []
  },
  { rpc: "auth", from: "body", party: "none", base: { token: c.takerToken }, fields: ["token"], free: [] },
  {
    rpc: "auth/refresh",
    from: "body",
    party: "taker",
    base: { refreshToken: c.refreshToken },
    fields: ["refreshToken"],
    free: []
  },
  {
    rpc: "v1/subscribe",
    from: "body",
    party: "taker",
    base: { channels: ["rfq.taker"] },
    fields: ["channels[0]"],
    free: []
  }
]

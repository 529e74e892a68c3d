import { call, ok } from "./Http.js"
import { credentialsOf, type Desk, legPricesFor, quoteBody } from "./Lifecycle.js"
import type { StallLoad } from "./StallLoad.js"
import { connectWs, type WsConnection } from "./WsClient.js"

/**
 * Every operation that needs the database, once, during a stall: the token endpoints, RFQ and
 * quote writes and lists, the trade, the account endpoints, the bulk block trade, and their
 * JSON-RPC methods (each on a session opened and authenticated before the stall, so the calls run
 * side by side), and a WebSocket `auth` with a client secret. Each answer is scored by the load
 * like the rest: the 503 of an unreachable database within the bound.
 */
export interface PathFixtures {
  readonly body: Record<string, unknown>
  readonly toCancel: number
  readonly toDelete: number
  readonly toQuote: Record<string, unknown>
  readonly toQuoteRpc: Record<string, unknown>
  readonly toUpdate: Record<string, unknown>
  readonly toDeleteQuote: number
  readonly cancelAllOf: number
  readonly toTrade: number
  readonly credentials: number
  readonly credentialsToDelete: number
  readonly sessions: { readonly taker: Array<WsConnection>; readonly maker: Array<WsConnection> }
  readonly anonymous: WsConnection
}

const session = async (base: string, desk: Desk): Promise<WsConnection> => {
  const ws = await connectWs(base)
  const reply = await ws.rpc("auth", { token: desk.token })
  if ((reply.result as { success?: unknown } | undefined)?.success !== true)
    throw new Error(`WebSocket auth failed: ${JSON.stringify(reply).slice(0, 200)}`)
  return ws
}

/** What the probe acts on, made before the stall. Every RFQ made is added to `load.rfqIds`. */
export const preparePaths = async (
  base: string,
  load: StallLoad,
  desks: { readonly taker: Desk; readonly maker: Desk },
  body: Record<string, unknown>
): Promise<PathFixtures> => {
  const { taker, maker } = desks
  const rfq = async () => {
    const rfqId = (await load.createRfq(taker, body))!
    return { rfqId, quote: quoteBody(rfqId, 50, await legPricesFor(maker, rfqId)) }
  }
  const quoted = async () => {
    const { rfqId, quote } = await rfq()
    const quoteId = (await load.createQuote(maker, rfqId, quote))!
    return { rfqId, quoteId, quote }
  }
  const toCancel = (await rfq()).rfqId
  const toDelete = (await rfq()).rfqId
  await ok("cancel", taker.request("POST", "/v1/rfq/cancel", { rfqId: toDelete }))
  const toQuote = (await rfq()).quote
  const toQuoteRpc = (await rfq()).quote
  const update = await quoted()
  const updateLegs = (update.quote as { legs: unknown }).legs
  const { quoteId: toDeleteQuote } = await quoted()
  const { rfqId: cancelAllOf } = await quoted()
  const { quoteId: toTrade } = await quoted()
  const created = await ok<{ credentialsId: number }>(
    "credentials",
    taker.request("POST", "/v1/account/exchange-credentials", {
      alias: `stall-${Date.now()}`,
      exchange: "DBT",
      clientId: "stall-client",
      clientSecret: "stall-secret"
    })
  )
  return {
    body,
    toCancel,
    toDelete,
    toQuote,
    toQuoteRpc,
    toUpdate: { rfqQuoteId: update.quoteId, amount: 40, settlementOption: "DBT", legs: updateLegs },
    toDeleteQuote,
    cancelAllOf,
    toTrade,
    credentials: (await credentialsOf(taker))[0]!.credentialsId,
    credentialsToDelete: created.credentialsId,
    sessions: {
      taker: await Promise.all([1, 2, 3].map(() => session(base, taker))),
      maker: await Promise.all([1, 2].map(() => session(base, maker)))
    },
    anonymous: await connectWs(base)
  }
}

/** Sends every probe at once; resolves when all are answered. */
export const probePaths = (
  base: string,
  load: StallLoad,
  desks: { readonly taker: Desk; readonly maker: Desk },
  f: PathFixtures
): Promise<unknown> => {
  const { taker, maker } = desks
  const [s1, s2, s3] = f.sessions.taker as [WsConnection, WsConnection, WsConnection]
  const [m1, m2] = f.sessions.maker as [WsConnection, WsConnection]
  const form = (fields: Record<string, string>) => ({
    body: new URLSearchParams(fields).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" }
  })
  const probes: Array<Promise<unknown>> = [
    load.rest("POST /v1/auth", () =>
      call(base, "POST", "/v1/auth", {
        body: { clientId: "demo-maker-3", clientSecret: "demo-maker-3-secret" }
      })
    ),
    load.rest("POST /oauth/token", () =>
      call(
        base,
        "POST",
        "/oauth/token",
        form({
          grant_type: "client_credentials",
          client_id: "demo-maker-3",
          client_secret: "demo-maker-3-secret"
        })
      )
    ),
    load.createRfq(taker, f.body),
    load.rest("GET /v1/rfq", () => taker.request("GET", "/v1/rfq?limit=3")),
    load.rest("POST /v1/rfq/cancel", () => taker.request("POST", "/v1/rfq/cancel", { rfqId: f.toCancel })),
    load.rest("DELETE /v1/rfq/{id}", () => taker.request("DELETE", `/v1/rfq/${f.toDelete}`)),
    load.createQuote(maker, f.toQuote.rfqId as number, f.toQuote),
    load.rest("PUT /v1/rfq/quote", () => maker.request("PUT", "/v1/rfq/quote", f.toUpdate)),
    load.rest("DELETE /v1/rfq/quote", () =>
      maker.request("DELETE", "/v1/rfq/quote", { rfqQuoteId: f.toDeleteQuote })
    ),
    load.rest("POST /v1/rfq/quote/cancel-all", () =>
      maker.request("POST", "/v1/rfq/quote/cancel-all", { rfqId: f.cancelAllOf })
    ),
    load.rest("GET /v1/rfq/quotes", () => maker.request("GET", "/v1/rfq/quotes?limit=3")),
    load.rest("POST /v1/rfq/trade", () => taker.request("POST", "/v1/rfq/trade", { rfqQuoteId: f.toTrade })),
    load.rest("GET /v1/account/exchange-credentials", () =>
      taker.request("GET", "/v1/account/exchange-credentials")
    ),
    load.rest("GET /v1/account/exchange-credentials/{id}", () =>
      taker.request("GET", `/v1/account/exchange-credentials/${f.credentials}`)
    ),
    load.rest("POST /v1/account/exchange-credentials", () =>
      taker.request("POST", "/v1/account/exchange-credentials", {
        alias: `stall-new-${Date.now()}`,
        exchange: "DBT",
        clientId: "stall-client-2",
        clientSecret: "stall-secret-2"
      })
    ),
    load.rest("DELETE /v1/account/exchange-credentials/{id}", () =>
      taker.request("DELETE", `/v1/account/exchange-credentials/${f.credentialsToDelete}`)
    ),
    load.rest("GET /v1/account/otc-counterparty", () => taker.request("GET", "/v1/account/otc-counterparty")),
    load.rest("POST /v1/block-trade/bulk", () =>
      taker.request("POST", "/v1/block-trade/bulk", {
        timestamp: Date.now(),
        blockTrades: [
          {
            nonce: `stall-${Date.now()}`,
            makerExchangeCredentials: "dbt-alt",
            takerExchangeCredentials: "dbt-main",
            trades: [{ direction: "sell", instrumentName: "BTC-27DEC30-90000-C", price: 0.6, amount: 25 }]
          }
        ]
      })
    ),
    load.rpc(s1, "v1/rfq/create", f.body),
    load.rpc(s2, "v1/rfq/list", { limit: 3 }),
    load.rpc(s3, "v1/account/exchange-credentials", {}),
    load.rpc(m1, "v1/quote/create", f.toQuoteRpc),
    load.rpc(m2, "v1/quote/cancel-all", {}),
    load.rpc(f.anonymous, "auth", { clientId: "demo-maker-3", clientSecret: "demo-maker-3-secret" })
  ]
  return Promise.all(probes)
}

export const closePathSessions = (f: PathFixtures): void => {
  for (const ws of [...f.sessions.taker, ...f.sessions.maker, f.anonymous]) ws.close()
}

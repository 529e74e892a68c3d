import { randomBytes } from "node:crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import { ConfigProvider, Context, Effect, Layer, Redacted, type Scope } from "effect"
import { appLayer, appRoutes } from "../../src/App.js"
import { Auth } from "../../src/auth/AuthService.js"
import { Tokens } from "../../src/auth/Tokens.js"
import { loadHostConfig } from "../../src/Config.js"
import { healthRoutes } from "../../src/HealthRoutes.js"
import type { HostInput } from "../../src/Host.js"
import { serve } from "../../src/HttpServer.js"
import {
  attachWebSocket,
  type WebSocketEndpoint,
  webSocketOnListening
} from "../../src/ws/WebSocketEndpoint.js"
import { type RpcClient, RpcClient as Client } from "./wsClient.js"

/**
 * The application in process, as `main` assembles it: demo data on an in-memory PGlite, the real
 * engine and auth, the REST routes, and the WebSocket endpoint attached the way the host's
 * `onListening` hook attaches it. A second endpoint on `/ws-strict`, over the same engine and auth,
 * has small limits (heartbeat timeout, rate limit, back-pressure cap) for the tests of those.
 */

export const STRICT = {
  heartbeatTimeoutMs: 1_000,
  rateLimitPerMinute: 3,
  maxBackpressureBytes: 16_384
} as const

export interface HostUnderTest {
  readonly url: string
  readonly wsUrl: string
  readonly strictWsUrl: string
  readonly strict: WebSocketEndpoint
  /** `/ws-slow`: a 16 KiB back-pressure cap and no practical rate limit. */
  readonly slowWsUrl: string
  readonly slow: WebSocketEndpoint
  /** A real access token of `clientId` (signed with the host's key) that expires in `seconds`. */
  readonly shortLivedToken: (clientId: string, seconds: number) => Effect.Effect<string>
  /** The host's database, for changes made behind its back (as `npm run admin` makes them). */
  readonly sql: SqlClient.SqlClient
}

export class TestHost extends Context.Tag("test/TestHost")<TestHost, HostUnderTest>() {}

/** A host's input for a test: demo data on an in-memory PGlite, fresh keys, `variables` on top. */
export const testHostInput = (variables: ReadonlyArray<readonly [string, string]> = []) =>
  Effect.map(
    loadHostConfig.pipe(
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["DEMO", "1"], ...variables]))),
      Effect.orDie
    ),
    (config): HostInput => ({
      config,
      secrets: {
        encryptionKeys: Redacted.make(new Map([[1, new Uint8Array(randomBytes(32))]])),
        jwtSecret: Redacted.make(new Uint8Array(randomBytes(32)))
      },
      database: { kind: "pglite", dataDir: "memory://" }
    })
  )

export const TestHostLive = Layer.scoped(
  TestHost,
  Effect.gen(function* () {
    const input = yield* testHostInput()
    const context = yield* Layer.build(appLayer(input)).pipe(Effect.orDie)
    const routes = yield* appRoutes(input).pipe(Effect.provide(context))
    const server = yield* serve({
      host: "127.0.0.1",
      port: 0,
      routes: [...healthRoutes(Effect.void), ...routes]
    }).pipe(Effect.provide(context), Effect.orDie)
    yield* webSocketOnListening(input, server).pipe(Effect.provide(context))
    const strict = yield* attachWebSocket(server.app, { ...STRICT, paths: ["/ws-strict"] }).pipe(
      Effect.provide(context)
    )
    const slow = yield* attachWebSocket(server.app, {
      heartbeatTimeoutMs: 30_000,
      rateLimitPerMinute: 1_000_000,
      maxBackpressureBytes: 16_384,
      paths: ["/ws-slow"]
    }).pipe(Effect.provide(context))
    const auth = Context.get(context, Auth)
    const tokens = new Tokens({ secret: Redacted.value(input.secrets.jwtSecret) })
    const shortLivedToken = (clientId: string, seconds: number) =>
      Effect.gen(function* () {
        const issued = yield* auth.clientCredentials(clientId, `${clientId}-secret`, 300, false)
        const caller = yield* auth.verifyToken(issued.access_token)
        const signed = yield* tokens.signAccess(caller, Date.now(), seconds)
        return signed.token
      }).pipe(Effect.orDie)
    const ws = `ws://127.0.0.1:${server.port}`
    return {
      url: server.url,
      wsUrl: `${ws}/ws/v1`,
      strictWsUrl: `${ws}/ws-strict`,
      strict,
      slowWsUrl: `${ws}/ws-slow`,
      slow,
      shortLivedToken,
      sql: Context.get(context, SqlClient.SqlClient)
    }
  })
)

export const promise = <A>(f: () => Promise<A>) => Effect.promise(f)

/** A client connected for the scope (terminated when it closes). */
export const connect = (url: string) =>
  Effect.acquireRelease(
    promise(() => Client.connect(url)),
    (client) => Effect.sync(() => void client.terminate())
  )

/** A client authenticated with client credentials. */
export const connectAs = (url: string, clientId: string): Effect.Effect<RpcClient, never, Scope.Scope> =>
  Effect.gen(function* () {
    const client = yield* connect(url)
    yield* promise(() => client.result("auth", { clientId, clientSecret: `${clientId}-secret` }))
    return client
  })

/** POST /oauth/token with the client credentials grant. */
export const oauthToken = (url: string, clientId: string) =>
  promise(async () => {
    const response = await fetch(`${url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: clientId,
        client_secret: `${clientId}-secret`
      })
    })
    return (await response.json()) as { access_token: string; refresh_token: string; expires_in: number }
  })

/** A REST call with a bearer token; answers status and body. */
export const rest = (url: string, token: string, method: string, path: string, body?: unknown) =>
  promise(async () => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: response.status, body: (await response.json()) as any }
  })

/** A 1x1 BTC call spread on DBT, 50 BTC, for the given makers (names from the engine's example). */
export const callSpread = (makers: ReadonlyArray<string>, baseCurrency: "BTC" | "ETH" = "BTC") => ({
  id: 0,
  label: "ws-test",
  baseCurrency,
  amount: baseCurrency === "BTC" ? 50 : 500,
  anonymous: false,
  settlementOptions: ["DBT"],
  makers: { DBT: makers },
  legs: [
    { direction: "buy", instrumentName: `${baseCurrency}-27DEC30-90000-C`, ratio: 1 },
    { direction: "sell", instrumentName: `${baseCurrency}-27DEC30-110000-C`, ratio: 1 }
  ]
})

/** The leg-price helper's request for RFQ `rfqId` as `v1/rfq/get` shows it (`rfq`): its legs at its mark. */
export const legPricesParams = (rfqId: number, rfq: any) => ({
  rfqId,
  price: Math.round(rfq.markPrice * 10_000) / 10_000,
  legs: rfq.legs.map((l: any) => ({
    instrumentName: l.instrumentName,
    direction: l.direction,
    ratio: l.ratio
  }))
})

/** A quote on RFQ `rfqId` (`rfq` as `v1/rfq/get` shows it) at the leg-price helper's answer `priced`. */
export const quoteBodyOf = (
  rfqId: number,
  rfq: any,
  priced: any,
  direction: "buy" | "sell",
  label?: string
) => ({
  rfqId,
  direction,
  amount: rfq.amount,
  settlementOption: "DBT",
  ...(label === undefined ? {} : { label }),
  legs: priced.legs.map((l: any) => ({ instrumentName: l.instrumentName, price: l.price }))
})

/** A maker's quote on an RFQ it sees: each leg at the leg-price helper's answer for the mark. */
export const quoteParams = (maker: RpcClient, rfqId: number, direction: "buy" | "sell", label?: string) =>
  promise(async () => {
    const rfq = await maker.result("v1/rfq/get", { id: rfqId })
    const priced = await maker.result("v1/rfq/leg-prices", legPricesParams(rfqId, rfq))
    return quoteBodyOf(rfqId, rfq, priced, direction, label)
  })

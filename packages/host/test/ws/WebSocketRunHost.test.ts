import { assert, describe, it } from "@effect/vitest"
import { ping } from "@rfq/engine"
import { ConfigProvider, Deferred, Effect, Fiber } from "effect"
import { appLayer, appRoutes } from "../../src/App.js"
import { runHost } from "../../src/Host.js"
import type { HttpServer } from "../../src/HttpServer.js"
import { webSocketOnListening } from "../../src/ws/WebSocketEndpoint.js"
import { roomyWindow } from "../support/rateWindow.js"
import { makeTempDir } from "../support/spawnHost.js"
import { callSpread, connect, promise, quoteParams } from "./hostHarness.js"

/**
 * The endpoint as the host runs it: `runHost` with the application and `webSocketOnListening` as
 * its `onListening` hook, configured from the environment (here a config provider), then shut
 * down the way SIGTERM does it (interrupting the host).
 */

const startHost = (dataDir: string, env: Record<string, string> = {}) =>
  Effect.gen(function* () {
    const listening = yield* Deferred.make<HttpServer>()
    const host = yield* runHost({
      databaseLayer: appLayer,
      ping,
      routes: appRoutes,
      onListening: (input, server) =>
        Effect.zipRight(webSocketOnListening(input, server), Deferred.succeed(listening, server))
    }).pipe(
      Effect.withConfigProvider(
        ConfigProvider.fromMap(
          new Map(Object.entries({ PORT: "0", DATA_DIR: dataDir, LOG_LEVEL: "warn", ...env }))
        )
      ),
      Effect.fork
    )
    const server = yield* Deferred.await(listening)
    return { host, wsUrl: `ws://127.0.0.1:${server.port}/ws/v1` }
  })

describe("the WebSocket endpoint in the running host", () => {
  it.live(
    "WS_HEARTBEAT_TIMEOUT_MS and WS_RATE_LIMIT_PER_MINUTE apply; shutdown closes with 1001 after cancel-on-disconnect",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const dataDir = makeTempDir()
          const { host, wsUrl } = yield* startHost(dataDir, {
            WS_HEARTBEAT_TIMEOUT_MS: "1500",
            WS_RATE_LIMIT_PER_MINUTE: "4"
          })
          const idle = yield* connect(wsUrl)
          const taker = yield* connect(wsUrl)
          const maker = yield* connect(wsUrl)
          const beat = setInterval(() => {
            for (const c of [taker, maker]) c.send({ jsonrpc: "2.0", method: "heartbeat" })
          }, 300)
          yield* Effect.addFinalizer(() => Effect.sync(() => clearInterval(beat)))
          yield* promise(() =>
            taker.result("auth", { clientId: "demo-taker", clientSecret: "demo-taker-secret" })
          )
          yield* promise(() =>
            maker.result("auth", { clientId: "demo-maker-1", clientSecret: "demo-maker-1-secret" })
          )
          assert.deepStrictEqual(yield* promise(() => idle.closed), {
            code: 4000,
            reason: "heartbeat timeout"
          })

          yield* promise(() => taker.result("v1/subscribe", { channels: ["rfq_quote.taker"] }))
          const { rfqId } = yield* promise(() => taker.result("v1/rfq/create", callSpread(["maker-1"])))
          // The maker's budget is counted from here: all of it in one window.
          yield* roomyWindow(20_000)
          yield* promise(() => maker.result("v1/cancel-on-disconnect", { enabled: true }))
          const params = yield* quoteParams(maker, rfqId, "sell")
          // The maker's four calls (cancel-on-disconnect, get, leg-prices, create) use up its budget.
          const { rfqQuoteId } = yield* promise(() => maker.result("v1/quote/create", params))
          const limited = yield* promise(() => maker.call("v1/exchange/maker"))
          assert.deepStrictEqual(
            [limited.error.message, limited.error.data.limit],
            ["Rate limit exceeded", 4]
          )

          yield* Fiber.interrupt(host)
          assert.deepStrictEqual(yield* promise(() => maker.closed), {
            code: 1001,
            reason: "server shutting down"
          })
          assert.deepStrictEqual(yield* promise(() => taker.closed), {
            code: 1001,
            reason: "server shutting down"
          })

          // Shutdown ran cancel-on-disconnect before the database closed: after a restart on the
          // same data the quote is no longer there to trade.
          const restarted = yield* startHost(dataDir)
          const again = yield* connect(restarted.wsUrl)
          yield* promise(() =>
            again.result("auth", { clientId: "demo-taker", clientSecret: "demo-taker-secret" })
          )
          const ladder = yield* promise(() => again.result("v1/rfq/quotes", { id: rfqId }))
          assert.deepStrictEqual(
            ladder.flatMap((side: any) => [...side.bids, ...side.asks]).map((q: any) => q.rfqQuoteId),
            []
          )
          const traded = yield* promise(() => again.call("v1/rfq/trade", { rfqQuoteId }))
          assert.isDefined(traded.error)
          yield* Fiber.interrupt(restarted.host)
        })
      ),
    120_000
  )
})

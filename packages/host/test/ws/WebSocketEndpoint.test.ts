import { assert, describe, it } from "@effect/vitest"
import { type ApiError, apiError, Engine, type EngineService, EventsLive } from "@rfq/engine"
import { Effect, Exit, Layer, Scope } from "effect"
import { Auth, type AuthService } from "../../src/auth/AuthService.js"
import { healthRoutes } from "../../src/HealthRoutes.js"
import { serve } from "../../src/HttpServer.js"
import { attachWebSocket, type WebSocketEndpointOptions } from "../../src/ws/WebSocketEndpoint.js"
import { EXPIRING_TOKEN_MS, fakeAuth, type Journal, testOperations } from "./sessionHarness.js"
import { roomyWindow } from "../support/rateWindow.js"
import { RpcClient } from "./wsClient.js"

/**
 * The uWS adapter over real sockets, with the fake auth and operation table of the session tests
 * (no database): transport behaviour — paths, frames, close codes, back-pressure, shutdown.
 */

/** Refusals the endpoint's periodic recheck reads, by user id (the "database"). */
const recheckRefusals = new Map<number, ApiError>()

// The fake tokens expire at fixed times meant for TestClock; on the wall clock they are moved
// into the future (all but `token-expiring`, which is relative already).
const liveAuth = {
  ...fakeAuth,
  recheckStanding: (callers: ReadonlyArray<{ readonly userId: number }>) =>
    Effect.succeed(callers.map((c) => recheckRefusals.get(c.userId))),
  verifyToken: (token: string) =>
    Effect.map(fakeAuth.verifyToken(token), (caller) =>
      token === "token-expiring" ? caller : { ...caller, tokenExpiresAt: Date.now() + caller.tokenExpiresAt }
    )
}

const services = Layer.mergeAll(
  Layer.succeed(Auth, liveAuth as unknown as AuthService),
  Layer.succeed(Engine, {} as EngineService),
  EventsLive
)

const start = (options: Partial<WebSocketEndpointOptions> = {}) =>
  Effect.gen(function* () {
    const journal: Journal = []
    const context = yield* Layer.build(services)
    const server = yield* serve({ host: "127.0.0.1", port: 0, routes: healthRoutes(Effect.void) })
    const endpoint = yield* attachWebSocket(server.app, {
      heartbeatTimeoutMs: 30_000,
      rateLimitPerMinute: 1000,
      maxBackpressureBytes: 64 * 1024,
      operations: testOperations(journal),
      ...options
    }).pipe(Effect.provide(context))
    const connect = (path = "/ws/v1") =>
      Effect.promise(() => RpcClient.connect(`ws://127.0.0.1:${server.port}${path}`))
    return { server, endpoint, journal, connect }
  })

const promise = <A>(f: () => Promise<A>) => Effect.promise(f)

describe("WebSocket endpoint over real sockets", () => {
  it.scopedLive("serves /ws/v1 and the /ws alias; HTTP routes still answer", () =>
    Effect.gen(function* () {
      const { server, connect } = yield* start()
      for (const path of ["/ws/v1", "/ws"]) {
        const client = yield* connect(path)
        const reply = yield* promise(() => client.call("heartbeat"))
        assert.strictEqual(reply.method, "heartbeat")
        assert.isNumber(reply.result.time)
        yield* promise(() => client.close())
      }
      const health = yield* promise(() => fetch(`${server.url}/healthz`).then((r) => r.status))
      assert.strictEqual(health, 200)
    })
  )

  it.scopedLive("strict JSON-RPC on the wire: parse error, batch, notification, binary frames", () =>
    Effect.gen(function* () {
      const { connect } = yield* start()
      const client = yield* connect()
      client.send("{nope")
      assert.deepStrictEqual(yield* promise(() => client.next()), {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32700, message: "Parse error" }
      })
      client.send({ jsonrpc: "2.0", method: "heartbeat" })
      client.send([
        { jsonrpc: "2.0", id: "a", method: "heartbeat" },
        { jsonrpc: "2.0", method: "heartbeat" },
        { jsonrpc: "2.0", id: "b", method: "v1/test/echo", params: { n: 1 } }
      ])
      const batch = yield* promise(() => client.next())
      assert.deepStrictEqual(
        batch.map((r: any) => [r.id, r.method, r.error?.code ?? "ok"]),
        [
          ["a", "heartbeat", "ok"],
          ["b", "v1/test/echo", -32001]
        ]
      )
      client.sendBytes(
        new TextEncoder().encode(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "heartbeat" }))
      )
      assert.strictEqual((yield* promise(() => client.next())).id, 7)
    })
  )

  it.scopedLive("a session without heartbeat is closed with 4000 heartbeat timeout", () =>
    Effect.gen(function* () {
      const { connect, endpoint } = yield* start({ heartbeatTimeoutMs: 300 })
      const client = yield* connect()
      assert.deepStrictEqual(yield* promise(() => client.closed), { code: 4000, reason: "heartbeat timeout" })
      assert.strictEqual(endpoint.connections(), 0)
    })
  )

  it.scopedLive("a session ends with its token: 4001 token expired", () =>
    Effect.gen(function* () {
      const { connect } = yield* start()
      const client = yield* connect()
      assert.deepStrictEqual(yield* promise(() => client.result("auth", { token: "token-expiring" })), {
        success: true
      })
      const closed = yield* promise(() => client.closed)
      assert.deepStrictEqual(closed, { code: 4001, reason: "token expired" })
      assert.isAbove(EXPIRING_TOKEN_MS, 0)
    })
  )

  it.scopedLive("the recheck closes an idle session whose account was deactivated: 4003, others stay", () =>
    Effect.gen(function* () {
      const { connect, endpoint } = yield* start({ revocationCheckMs: 100 })
      const maker = yield* connect()
      const taker = yield* connect()
      yield* promise(() => maker.result("auth", { token: "token-maker" }))
      yield* promise(() => taker.result("auth", { token: "token-taker" }))
      recheckRefusals.set(21, apiError("accountInactive"))
      yield* Effect.addFinalizer(() => Effect.sync(() => recheckRefusals.clear()))
      assert.deepStrictEqual(yield* promise(() => maker.closed), {
        code: 4003,
        reason: "account is inactive"
      })
      assert.isDefined((yield* promise(() => taker.call("v1/test/echo", { n: 1 }))).result)
      assert.strictEqual(endpoint.closeCodes().get(4003), 1)
    })
  )

  it.scopedLive("the rate limit over the wire, heartbeat exempt", () =>
    Effect.gen(function* () {
      const { connect } = yield* start({ rateLimitPerMinute: 2 })
      const client = yield* connect()
      yield* promise(() => client.result("auth", { token: "token-maker" }))
      yield* roomyWindow()
      yield* promise(() => client.result("v1/test/echo", { n: 1 }))
      yield* promise(() => client.result("v1/test/echo", { n: 2 }))
      const limited = yield* promise(() => client.call("v1/test/echo", { n: 3 }))
      assert.strictEqual(limited.error.code, -32603)
      assert.strictEqual(limited.error.message, "Rate limit exceeded")
      assert.deepStrictEqual(Object.keys(limited.error.data).sort(), ["limit", "reset", "window"])
      assert.strictEqual(limited.error.data.limit, 2)
      assert.strictEqual(limited.error.data.window, "1m0s")
      assert.isAbove(limited.error.data.reset, Date.now() / 1000)
      assert.isDefined((yield* promise(() => client.call("heartbeat"))).result)
    })
  )

  it.scopedLive("a frame over the size cap closes that connection only", () =>
    Effect.gen(function* () {
      const { connect } = yield* start({ maxPayloadBytes: 1024 })
      const big = yield* connect()
      const other = yield* connect()
      big.send({ jsonrpc: "2.0", id: 1, method: "heartbeat", params: { pad: "x".repeat(2048) } })
      const closed = yield* promise(() => big.closed)
      assert.notStrictEqual(closed.code, 1000)
      assert.isDefined((yield* promise(() => other.call("heartbeat"))).result)
    })
  )

  it.scopedLive("a client that stops reading is cut off with 4002 while another keeps up", () =>
    Effect.gen(function* () {
      const { connect, endpoint } = yield* start({
        maxBackpressureBytes: 64 * 1024,
        rateLimitPerMinute: 1000
      })
      const slow = yield* connect()
      const fast = yield* connect()
      yield* promise(() => slow.result("auth", { token: "token-maker" }))
      slow.pause()
      // Each request asks for a 64 KB reply: soon more than the socket buffers and the cap hold.
      for (let i = 0; i < 900 && endpoint.connections() === 2; i++) {
        slow.send({ jsonrpc: "2.0", id: i, method: "v1/test/blob", params: { bytes: 64 * 1024 } })
        if (i % 50 === 0) assert.isDefined((yield* promise(() => fast.call("heartbeat"))).result)
      }
      while (endpoint.connections() === 2) yield* Effect.sleep(10)
      assert.isDefined((yield* promise(() => fast.call("heartbeat"))).result)
      assert.strictEqual(endpoint.connections(), 1)
      assert.strictEqual(endpoint.closeCodes().get(4002), 1)
      slow.resume()
      // The close frame waits behind the buffered data; uWS may force-close first (see sendTo).
      assert.include([4002, 1006], (yield* promise(() => slow.closed)).code)
    })
  )

  it.live("shutdown closes every session with 1001, runs cancel-on-disconnect, refuses new upgrades", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const { connect, server, endpoint } = yield* start().pipe(Scope.extend(scope))
      const client = yield* connect()
      yield* promise(() => client.result("auth", { token: "token-taker" }))
      assert.deepStrictEqual(
        yield* promise(() => client.result("v1/cancel-on-disconnect", { enabled: true })),
        {
          enabled: true
        }
      )
      assert.strictEqual(endpoint.cancelOnDisconnect.count(11), 1)
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(yield* promise(() => client.closed), {
        code: 1001,
        reason: "server shutting down"
      })
      assert.strictEqual(endpoint.cancelOnDisconnect.count(11), 0)
      const refused = yield* promise(() =>
        RpcClient.connect(`ws://127.0.0.1:${server.port}/ws/v1`).then(
          () => "connected",
          () => "refused"
        )
      )
      assert.strictEqual(refused, "refused")
    })
  )
})

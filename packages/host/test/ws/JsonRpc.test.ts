import { assert, describe, it } from "@effect/vitest"
import { apiError } from "@rfq/engine"
import { ConfigProvider, Effect, Either } from "effect"
import { loadHostConfig } from "../../src/Config.js"
import fc from "fast-check"
import { rpcCodeOfStatus, rpcErrorOf } from "../../src/ErrorTable.js"
import {
  goDuration,
  parseFrame,
  subscriptionNotification,
  subscriptionNotificationText
} from "../../src/ws/JsonRpc.js"
import { webSocketOptions } from "../../src/ws/WebSocketEndpoint.js"

describe("JSON-RPC helpers", () => {
  it("a notification built from shared data JSON is the very text of the notification object", () => {
    fc.assert(
      fc.property(fc.string(), fc.nat(), fc.jsonValue(), (channel, seq, data) => {
        const json = JSON.stringify(data)
        assert.strictEqual(
          subscriptionNotificationText(channel, seq, json),
          JSON.stringify(subscriptionNotification(channel, seq, JSON.parse(json)))
        )
      })
    )
  })

  it("durations read as Go prints them (the spec's `1m0s`)", () => {
    const cases: ReadonlyArray<[number, string]> = [
      [60_000, "1m0s"],
      [30_000, "30s"],
      [90_500, "1m30.5s"],
      [3_600_000, "1h0m0s"],
      [3_725_000, "1h2m5s"],
      [250, "250ms"],
      [0, "0s"]
    ]
    for (const [ms, text] of cases) assert.strictEqual(goDuration(ms), text, String(ms))
  })

  it("HTTP statuses map to the contract's codes", () => {
    const cases: ReadonlyArray<[number, number]> = [
      [400, -32602],
      [401, -32001],
      [403, -32003],
      [404, -32004],
      [429, -32603],
      [500, -32603],
      [503, -32603]
    ]
    for (const [status, code] of cases) assert.strictEqual(rpcCodeOfStatus(status), code, String(status))
  })

  it("an operation error keeps the REST message and reasons in data", () => {
    assert.deepStrictEqual(rpcErrorOf(apiError("invalidRequest", ["a: is missing", "b: is missing"])), {
      code: -32602,
      message: "invalid request",
      data: { status: 400, reason: ["a: is missing", "b: is missing"] }
    })
  })

  it("a parsed call keeps params absent when the request has none", () => {
    assert.deepStrictEqual(parseFrame('{"jsonrpc":"2.0","id":1,"method":"heartbeat"}'), {
      _tag: "Single",
      entry: { _tag: "Call", id: 1, method: "heartbeat", params: undefined }
    })
  })
})

describe("WebSocket configuration", () => {
  const load = (env: Record<string, string>) =>
    loadHostConfig.pipe(
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))),
      Effect.either,
      Effect.map(Either.mapLeft((error) => error.message))
    )

  it.effect("defaults: 30 s heartbeat timeout, 4 MiB back-pressure cap, 100 messages a minute", () =>
    Effect.gen(function* () {
      const config = Either.getOrThrow(yield* load({}))
      assert.deepStrictEqual(webSocketOptions(config), {
        heartbeatTimeoutMs: 30_000,
        rateLimitPerMinute: 100,
        maxBackpressureBytes: 4_194_304
      })
    })
  )

  it.effect("values from the environment, and a bad value names its variable", () =>
    Effect.gen(function* () {
      const config = Either.getOrThrow(
        yield* load({ WS_HEARTBEAT_TIMEOUT_MS: "500", WS_MAX_BACKPRESSURE_BYTES: "65536" })
      )
      assert.strictEqual(config.wsHeartbeatTimeoutMs, 500)
      assert.strictEqual(config.wsMaxBackpressureBytes, 65_536)
      assert.deepStrictEqual(
        yield* load({ WS_HEARTBEAT_TIMEOUT_MS: "5" }),
        Either.left(
          'invalid configuration: WS_HEARTBEAT_TIMEOUT_MS must be an integer between 100 and 3600000, got "5"'
        )
      )
      assert.deepStrictEqual(
        yield* load({ WS_MAX_BACKPRESSURE_BYTES: "big" }),
        Either.left(
          'invalid configuration: WS_MAX_BACKPRESSURE_BYTES must be an integer between 16384 and 1073741824, got "big"'
        )
      )
    })
  )
})

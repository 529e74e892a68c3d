import { assert, describe, it } from "@effect/vitest"
import { installWaitProbe } from "@rfq/engine"
import { Effect, Logger, LogLevel, Option, TestClock, Tracer } from "effect"
import { authenticated, callers, makeShared, rfqEvent, startSession } from "./sessionHarness.js"

const INVALID_REQUEST = -32600

describe("JSON-RPC framing", () => {
  it.effect("malformed JSON is answered with -32700 and id null", () =>
    Effect.gen(function* () {
      const s = yield* startSession(makeShared())
      yield* s.send('{"jsonrpc":"2.0","id":1,"method":"heartbeat"')
      assert.deepStrictEqual(yield* s.next, {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32700, message: "Parse error" }
      })
    })
  )

  it.effect("bytes that are not UTF-8 are a parse error", () =>
    Effect.gen(function* () {
      const s = yield* startSession(makeShared())
      yield* s.session.receive(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]))
      assert.strictEqual((yield* s.next).error.code, -32700)
    })
  )

  it.effect("invalid requests get -32600, echoing a usable id and method", () =>
    Effect.gen(function* () {
      const s = yield* startSession(makeShared())
      const cases: ReadonlyArray<[unknown, unknown, string | undefined, string]> = [
        [42, null, undefined, "a request must be a JSON object"],
        [{ id: 1, method: "heartbeat" }, 1, "heartbeat", 'jsonrpc must be "2.0"'],
        [{ jsonrpc: "1.0", id: "a", method: "heartbeat" }, "a", "heartbeat", 'jsonrpc must be "2.0"'],
        [{ jsonrpc: "2.0", id: 2, method: 7 }, 2, undefined, "method must be a string"],
        [
          { jsonrpc: "2.0", id: { x: 1 }, method: "heartbeat" },
          null,
          "heartbeat",
          "id must be a string, a number or null"
        ],
        [
          { jsonrpc: "2.0", id: 3, method: "heartbeat", params: "x" },
          3,
          "heartbeat",
          "params must be an object or an array"
        ],
        [
          { jsonrpc: "2.0", id: 4, method: "heartbeat", params: null },
          4,
          "heartbeat",
          "params must be an object or an array"
        ]
      ]
      for (const [message, id, method, reason] of cases) {
        yield* s.send(message)
        const reply = yield* s.next
        assert.deepStrictEqual(
          reply,
          {
            jsonrpc: "2.0",
            id,
            ...(method === undefined ? {} : { method }),
            error: { code: INVALID_REQUEST, message: "Invalid Request", data: { reason: [reason] } }
          },
          JSON.stringify(message)
        )
      }
    })
  )

  it.effect("an unknown method is -32601 and the reply repeats the method and id", () =>
    Effect.gen(function* () {
      const s = yield* startSession(makeShared())
      yield* s.send({ jsonrpc: "2.0", id: "q-1", method: "v1/nope" })
      assert.deepStrictEqual(yield* s.next, {
        jsonrpc: "2.0",
        id: "q-1",
        method: "v1/nope",
        error: { code: -32601, message: "Method not found", data: { reason: ['unknown method "v1/nope"'] } }
      })
    })
  )

  /** The names of the `RPC …` spans of an authenticated session calling three methods. */
  const rpcSpanNames = Tracer.tracerWith((base) => {
    const names: Array<string> = []
    const recording = Tracer.make({
      span: (name, ...rest) => {
        names.push(name)
        return base.span(name, ...rest)
      },
      context: (f, fiber) => base.context(f, fiber)
    })
    return Effect.gen(function* () {
      const s = yield* authenticated(makeShared(), "token-taker")
      for (const method of ["v1/nope-1", "v1/nope-2", "heartbeat"]) yield* s.call(method)
      return names.filter((n) => n.startsWith("RPC "))
    }).pipe(Effect.withTracer(recording))
  })

  it.scoped("under a wait profile, a call's span is named after its method only when the method exists", () =>
    Effect.gen(function* () {
      yield* Effect.acquireRelease(
        Effect.sync(() => installWaitProbe({ phases: () => ({ mark: () => {} }) })),
        () => Effect.sync(() => installWaitProbe(undefined))
      )
      assert.deepStrictEqual(yield* rpcSpanNames, [
        "RPC auth",
        "RPC (unknown method)",
        "RPC (unknown method)",
        "RPC heartbeat"
      ])
    })
  )

  it.effect("without a wait profile, calls make no span (a span costs more than a heartbeat)", () =>
    Effect.map(rpcSpanNames, (names) => assert.deepStrictEqual(names, []))
  )

  it.effect("heartbeat answers {time} with the time it was received, without authentication", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(1_234_567)
      const s = yield* startSession(makeShared())
      yield* s.send({ jsonrpc: "2.0", id: 9, method: "heartbeat", params: {} })
      assert.deepStrictEqual(yield* s.next, {
        jsonrpc: "2.0",
        id: 9,
        method: "heartbeat",
        result: { time: 1_234_567 }
      })
    })
  )

  it.effect("a notification (no id) gets no reply, not even an error", () =>
    Effect.gen(function* () {
      const s = yield* startSession(makeShared())
      yield* s.send({ jsonrpc: "2.0", method: "heartbeat" })
      yield* s.send({ jsonrpc: "2.0", method: "v1/nope" })
      yield* s.send({ jsonrpc: "2.0", method: "v1/test/echo", params: { n: 1 } })
      // Replies come in request order, so the next one answering id 5 proves the others got none.
      yield* s.send({ jsonrpc: "2.0", id: 5, method: "heartbeat" })
      assert.strictEqual((yield* s.next).id, 5)
    })
  )

  it.effect("an id of null is a request, answered with id null", () =>
    Effect.gen(function* () {
      const s = yield* startSession(makeShared())
      yield* s.send({ jsonrpc: "2.0", id: null, method: "heartbeat" })
      const reply = yield* s.next
      assert.strictEqual(reply.id, null)
      assert.strictEqual(reply.method, "heartbeat")
    })
  )

  it.effect("a batch is answered with an array in request order, notifications left out", () =>
    Effect.gen(function* () {
      const s = yield* authenticated(makeShared(), "token-taker")
      yield* s.send([
        { jsonrpc: "2.0", id: 1, method: "v1/test/echo", params: { n: 1 } },
        { jsonrpc: "2.0", method: "v1/test/echo", params: { n: 2 } },
        { foo: "bar" },
        { jsonrpc: "2.0", id: 3, method: "v1/nope" },
        { jsonrpc: "2.0", id: 4, method: "v1/test/echo", params: { n: 4 } }
      ])
      const reply = yield* s.next
      assert.deepStrictEqual(reply, [
        { jsonrpc: "2.0", id: 1, method: "v1/test/echo", result: { n: 1, userId: callers.taker.userId } },
        {
          jsonrpc: "2.0",
          id: null,
          error: {
            code: INVALID_REQUEST,
            message: "Invalid Request",
            data: { reason: ['jsonrpc must be "2.0"'] }
          }
        },
        {
          jsonrpc: "2.0",
          id: 3,
          method: "v1/nope",
          error: { code: -32601, message: "Method not found", data: { reason: ['unknown method "v1/nope"'] } }
        },
        { jsonrpc: "2.0", id: 4, method: "v1/test/echo", result: { n: 4, userId: callers.taker.userId } }
      ])
    })
  )

  it.effect("a batch of notifications only gets no reply at all", () =>
    Effect.gen(function* () {
      const s = yield* startSession(makeShared())
      yield* s.send([
        { jsonrpc: "2.0", method: "heartbeat" },
        { jsonrpc: "2.0", method: "heartbeat" }
      ])
      yield* s.send({ jsonrpc: "2.0", id: "after", method: "heartbeat" })
      assert.strictEqual((yield* s.next).id, "after")
    })
  )

  it.effect("an empty batch and an oversized batch are single -32600 errors with id null", () =>
    Effect.gen(function* () {
      const s = yield* startSession(makeShared(), { maxBatch: 3 })
      yield* s.send([])
      assert.deepStrictEqual(yield* s.next, {
        jsonrpc: "2.0",
        id: null,
        error: {
          code: INVALID_REQUEST,
          message: "Invalid Request",
          data: { reason: ["a batch must not be empty"] }
        }
      })
      yield* s.send(Array.from({ length: 4 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "heartbeat" })))
      assert.deepStrictEqual((yield* s.next).error, {
        code: INVALID_REQUEST,
        message: "Invalid Request",
        data: { reason: ["a batch holds at most 3 requests, got 4"] }
      })
      yield* s.send(Array.from({ length: 3 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "heartbeat" })))
      assert.lengthOf(yield* s.next, 3)
    })
  )

  it.effect("frames are handled one at a time in arrival order", () =>
    Effect.gen(function* () {
      const shared = makeShared()
      const s = yield* authenticated(shared, "token-taker")
      yield* s.send({ jsonrpc: "2.0", id: "slow", method: "v1/test/slow", params: { ms: 5_000 } })
      yield* s.send({ jsonrpc: "2.0", id: "fast", method: "v1/test/echo", params: { n: 1 } })
      yield* TestClock.adjust(5_000)
      assert.strictEqual((yield* s.next).id, "slow")
      assert.strictEqual((yield* s.next).id, "fast")
    })
  )

  it.effect("a heartbeat queued behind a slow call answers the time it was received", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(1_000)
      const s = yield* authenticated(makeShared(), "token-taker")
      yield* s.send({ jsonrpc: "2.0", id: "slow", method: "v1/test/slow", params: { ms: 5_000 } })
      yield* s.send({ jsonrpc: "2.0", id: "beat", method: "heartbeat" })
      yield* TestClock.adjust(5_000)
      assert.strictEqual((yield* s.next).id, "slow")
      assert.deepStrictEqual((yield* s.next).result, { time: 1_000 })
    })
  )

  it.effect("too many unanswered bytes close the connection with 1008", () =>
    Effect.gen(function* () {
      const s = yield* authenticated(makeShared(), "token-taker", { maxPendingBytes: 300 })
      yield* s.send({ jsonrpc: "2.0", id: 1, method: "v1/test/slow", params: { ms: 5_000 } })
      for (let i = 0; i < 5; i++)
        yield* s.send({ jsonrpc: "2.0", id: i + 2, method: "heartbeat", params: {} })
      assert.deepStrictEqual(yield* s.nextClose, { code: 1008, reason: "too many pending requests" })
    })
  )
})

describe("operations as methods", () => {
  it.effect("before auth every method but auth and heartbeat is -32001 authentication required", () =>
    Effect.gen(function* () {
      const s = yield* startSession(makeShared())
      for (const method of ["v1/test/echo", "auth/refresh", "v1/subscribe", "v1/cancel-on-disconnect"]) {
        const reply = yield* s.call(method, {})
        assert.deepStrictEqual(
          reply.error,
          { code: -32001, message: "authentication required", data: { status: 401, reason: [] } },
          method
        )
        assert.strictEqual(reply.method, method)
      }
    })
  )

  it.effect("a successful call answers the operation's result", () =>
    Effect.gen(function* () {
      const s = yield* authenticated(makeShared(), "token-maker")
      const reply = yield* s.call("v1/test/echo", { n: 7 })
      assert.deepStrictEqual(reply, {
        jsonrpc: "2.0",
        id: reply.id,
        method: "v1/test/echo",
        result: { n: 7, userId: callers.maker.userId }
      })
    })
  )

  it.effect(
    "an operation memory can answer is answered before receiveNow returns, as REST answers it without a fiber",
    () =>
      Effect.gen(function* () {
        const s = yield* authenticated(makeShared(), "token-maker")
        const frame = (id: number, n: number) =>
          JSON.stringify({ jsonrpc: "2.0", id, method: "v1/test/peek", params: { n } })
        s.session.receiveNow(frame(1, 2))
        // Already out: no fiber ran in between.
        assert.strictEqual(yield* s.pending, 1)
        assert.deepStrictEqual((yield* s.next).result, { n: 2, userId: callers.maker.userId, from: "memory" })
        // What memory cannot answer runs as before, its reply later.
        s.session.receiveNow(frame(2, 3))
        assert.strictEqual(yield* s.pending, 0)
        assert.deepStrictEqual((yield* s.next).result, { n: 3, userId: callers.maker.userId, from: "run" })
        // Refusals of the input are answered at once too, from the same pipeline.
        s.session.receiveNow(
          JSON.stringify({ jsonrpc: "2.0", id: 3, method: "v1/test/peek", params: { n: "2" } })
        )
        assert.strictEqual(yield* s.pending, 1)
        assert.strictEqual((yield* s.next).error.code, -32602)
      })
  )

  it.effect(
    "errors map 400 → -32602, 403 → -32003, 404 → -32004, a defect → -32603, with data {status, reason}",
    () =>
      Effect.gen(function* () {
        const viewer = yield* authenticated(makeShared(), "token-viewer")
        assert.deepStrictEqual((yield* viewer.call("v1/test/write")).error, {
          code: -32003,
          message: "insufficient permissions",
          data: { status: 403, reason: [] }
        })
        assert.deepStrictEqual((yield* viewer.call("v1/test/account")).error.code, -32003)
        assert.deepStrictEqual((yield* viewer.call("v1/test/missing")).error, {
          code: -32004,
          message: "rfq not found",
          data: { status: 404, reason: [] }
        })
        const invalid = (yield* viewer.call("v1/test/echo", { n: "x" })).error
        assert.strictEqual(invalid.code, -32602)
        assert.strictEqual(invalid.message, "invalid request")
        assert.strictEqual(invalid.data.status, 400)
        assert.match(invalid.data.reason[0], /^n: /)
        const positional = (yield* viewer.call("v1/test/echo", [1])).error
        assert.deepStrictEqual(positional, {
          code: -32602,
          message: "invalid request",
          data: { status: 400, reason: ["params: must be an object (parameters by name)"] }
        })
        assert.deepStrictEqual((yield* viewer.call("v1/test/defect")).error, {
          code: -32603,
          message: "internal server error",
          data: { status: 500, reason: [] }
        })
      })
  )
})

describe("database outage", () => {
  /** Runs `effect` with every log line recorded as `level message`. */
  const withLogs = <A, E>(effect: (logs: Array<string>) => Effect.Effect<A, E>) => {
    const logs: Array<string> = []
    const recorder = Logger.make(({ logLevel, message }) => {
      logs.push(
        `${logLevel.label} ${[message]
          .flat()
          .filter((part) => typeof part === "string")
          .join(" ")}`
      )
    })
    return effect(logs).pipe(
      Effect.provide(Logger.replace(Logger.defaultLogger, recorder)),
      Logger.withMinimumLogLevel(LogLevel.All)
    )
  }

  it.effect(
    "a call that dies on an unreachable database answers 503 service unavailable, logged as a warning",
    () =>
      withLogs((logs) =>
        Effect.gen(function* () {
          const s = yield* authenticated(makeShared(), "token-maker")
          const reply = yield* s.call("v1/test/unreachable", {})
          assert.deepStrictEqual(reply, {
            jsonrpc: "2.0",
            id: reply.id,
            method: "v1/test/unreachable",
            error: {
              code: -32603,
              message: "service unavailable",
              data: { status: 503, reason: ["database is not reachable"] }
            }
          })
          assert.deepStrictEqual(logs, ["WARN database unreachable"])
          // The session goes on: the next call is answered normally.
          assert.deepStrictEqual((yield* s.call("v1/test/echo", { n: 1 })).result, {
            n: 1,
            userId: callers.maker.userId
          })
        })
      )
  )

  it.effect("any other defect still answers 500 internal server error, logged as an error", () =>
    withLogs((logs) =>
      Effect.gen(function* () {
        const s = yield* authenticated(makeShared(), "token-maker")
        assert.deepStrictEqual((yield* s.call("v1/test/defect")).error, {
          code: -32603,
          message: "internal server error",
          data: { status: 500, reason: [] }
        })
        assert.deepStrictEqual(logs, ["ERROR JSON-RPC call failed"])
      })
    )
  )
})

describe("a call cut short from inside", () => {
  it.effect("is answered 503 with its reason (it once got no reply at all), and the session goes on", () =>
    Effect.gen(function* () {
      const s = yield* authenticated(makeShared(), "token-maker")
      const reply = yield* s.call("v1/test/cut", {})
      assert.deepStrictEqual(reply.error, {
        code: -32603,
        message: "service unavailable",
        data: {
          status: 503,
          reason: ["the call was cut short inside the service; read before sending it again"]
        }
      })
      assert.deepStrictEqual((yield* s.call("v1/test/echo", { n: 2 })).result, {
        n: 2,
        userId: callers.maker.userId
      })
    })
  )
})

describe("auth", () => {
  it.effect("with a token: {success: true}; a bad token is -32001 with the spec's message", () =>
    Effect.gen(function* () {
      const s = yield* startSession(makeShared())
      assert.deepStrictEqual((yield* s.call("auth", { token: "nope" })).error, {
        code: -32001,
        message: "authorisation token expired or not valid",
        data: { status: 401, reason: [] }
      })
      const reply = yield* s.call("auth", { token: "token-taker" })
      assert.deepStrictEqual(reply.result, { success: true })
      assert.strictEqual((yield* s.call("v1/test/echo", { n: 1 })).result.userId, callers.taker.userId)
    })
  )

  it.effect(
    "with client credentials: {success: true, token}; a wrong secret is -32001 invalid client ID",
    () =>
      Effect.gen(function* () {
        const s = yield* startSession(makeShared())
        const wrong = yield* s.call("auth", { clientId: "maker", clientSecret: "wrong" })
        assert.deepStrictEqual(wrong.error.code, -32001)
        assert.deepStrictEqual(wrong.error.message, "invalid client ID")
        const reply = yield* s.call("auth", { clientId: "maker", clientSecret: "maker-secret" })
        assert.deepStrictEqual(reply.result, { success: true, token: "token-maker" })
        assert.strictEqual((yield* s.call("v1/test/echo", { n: 1 })).result.userId, callers.maker.userId)
      })
  )

  it.effect("params that are neither form are -32602", () =>
    Effect.gen(function* () {
      const s = yield* startSession(makeShared())
      const reply = yield* s.call("auth", { clientId: "maker" })
      assert.strictEqual(reply.error.code, -32602)
      assert.strictEqual(reply.error.data.status, 400)
    })
  )

  it.effect("a session keeps its user: auth as another user is refused and changes nothing", () =>
    Effect.gen(function* () {
      const s = yield* authenticated(makeShared(), "token-taker")
      const reply = yield* s.call("auth", { token: "token-maker" })
      assert.strictEqual(reply.error.code, -32602)
      assert.strictEqual((yield* s.call("v1/test/echo", { n: 1 })).result.userId, callers.taker.userId)
    })
  )
})

describe("session lifetime", () => {
  it.effect(
    "no heartbeat for the timeout closes with 4000 heartbeat timeout; each heartbeat restarts it",
    () =>
      Effect.gen(function* () {
        const s = yield* startSession(makeShared(), { heartbeatTimeoutMs: 30_000 })
        yield* TestClock.adjust(20_000)
        assert.strictEqual((yield* s.call("heartbeat")).result.time, 20_000)
        yield* TestClock.adjust(20_000)
        assert.strictEqual((yield* s.call("heartbeat")).result.time, 40_000)
        assert.isTrue(Option.isNone(yield* s.pollClose))
        yield* TestClock.adjust(30_000)
        assert.deepStrictEqual(yield* s.nextClose, { code: 4000, reason: "heartbeat timeout" })
      })
  )

  it.effect("a heartbeat sent as a notification counts too", () =>
    Effect.gen(function* () {
      const s = yield* startSession(makeShared(), { heartbeatTimeoutMs: 30_000 })
      yield* TestClock.adjust(25_000)
      yield* s.send({ jsonrpc: "2.0", method: "heartbeat" })
      yield* TestClock.adjust(25_000)
      assert.strictEqual((yield* s.call("heartbeat")).result.time, 50_000)
      assert.isTrue(Option.isNone(yield* s.pollClose))
    })
  )

  it.effect("the session ends with its token: 4001 token expired", () =>
    Effect.gen(function* () {
      const s = yield* authenticated(makeShared(), "token-maker-short")
      yield* TestClock.adjust(callers.makerShort.tokenExpiresAt)
      assert.deepStrictEqual(yield* s.nextClose, { code: 4001, reason: "token expired" })
    })
  )

  it.effect("auth/refresh {token} of the same user extends the session to the new token's expiry", () =>
    Effect.gen(function* () {
      const s = yield* authenticated(makeShared(), "token-maker-short")
      yield* TestClock.adjust(5_000)
      const reply = yield* s.call("auth/refresh", { token: "token-maker" })
      assert.deepStrictEqual(reply.result, { success: true, expiresAt: callers.maker.tokenExpiresAt })
      yield* TestClock.adjust(10_000)
      assert.strictEqual((yield* s.call("v1/test/echo", { n: 1 })).result.n, 1)
      assert.isTrue(Option.isNone(yield* s.pollClose))
      yield* TestClock.adjust(callers.maker.tokenExpiresAt)
      assert.deepStrictEqual(yield* s.nextClose, { code: 4001, reason: "token expired" })
    })
  )

  it.effect("auth/refresh {refreshToken} rotates it and answers the new tokens", () =>
    Effect.gen(function* () {
      const s = yield* authenticated(makeShared(), "token-maker-short")
      const reply = yield* s.call("auth/refresh", { refreshToken: "refresh-1" })
      assert.deepStrictEqual(reply.result, {
        success: true,
        token: "token-maker-late",
        refreshToken: "refresh-2",
        expiresAt: callers.makerLate.tokenExpiresAt
      })
      yield* TestClock.adjust(callers.maker.tokenExpiresAt)
      assert.isTrue(Option.isNone(yield* s.pollClose))
      const used = yield* s.call("auth/refresh", { refreshToken: "refresh-1-again" })
      assert.deepStrictEqual(used.error.code, -32001)
    })
  )

  it.effect("auth/refresh with another user's token is refused", () =>
    Effect.gen(function* () {
      const s = yield* authenticated(makeShared(), "token-maker-short")
      assert.strictEqual((yield* s.call("auth/refresh", { token: "token-taker" })).error.code, -32602)
      yield* TestClock.adjust(callers.makerShort.tokenExpiresAt)
      assert.deepStrictEqual(yield* s.nextClose, { code: 4001, reason: "token expired" })
    })
  )
})

describe("rate limit", () => {
  it.effect("per user across sessions; -32603 Rate limit exceeded with {limit, window, reset}", () =>
    Effect.gen(function* () {
      const shared = makeShared(3)
      const a = yield* authenticated(shared, "token-maker")
      const b = yield* authenticated(shared, "token-maker-late")
      const other = yield* authenticated(shared, "token-taker")
      assert.isDefined((yield* a.call("v1/test/echo", { n: 1 })).result)
      assert.isDefined((yield* b.call("v1/test/echo", { n: 2 })).result)
      assert.isDefined((yield* a.call("v1/nope")).error)
      assert.deepStrictEqual(yield* b.call("v1/test/echo", { n: 3 }), {
        jsonrpc: "2.0",
        id: 3,
        method: "v1/test/echo",
        error: { code: -32603, message: "Rate limit exceeded", data: { limit: 3, window: "1m0s", reset: 60 } }
      })
      assert.isDefined((yield* other.call("v1/test/echo", { n: 4 })).result)
    })
  )

  it.effect("auth, auth/refresh and heartbeat are exempt; the budget returns with the next window", () =>
    Effect.gen(function* () {
      const shared = makeShared(1)
      const s = yield* authenticated(shared, "token-maker")
      assert.isDefined((yield* s.call("v1/test/echo", { n: 1 })).result)
      assert.strictEqual((yield* s.call("v1/test/echo", { n: 2 })).error.message, "Rate limit exceeded")
      for (let i = 0; i < 3; i++) {
        assert.isDefined((yield* s.call("heartbeat")).result)
        assert.isDefined((yield* s.call("auth", { token: "token-maker" })).result)
        assert.isDefined((yield* s.call("auth/refresh", { token: "token-maker" })).result)
      }
      yield* TestClock.adjust(60_000)
      assert.isDefined((yield* s.call("v1/test/echo", { n: 3 })).result)
    })
  )

  it.effect("every call of a batch counts", () =>
    Effect.gen(function* () {
      const s = yield* authenticated(makeShared(2), "token-maker")
      yield* s.send([1, 2, 3].map((n) => ({ jsonrpc: "2.0", id: n, method: "v1/test/echo", params: { n } })))
      const replies = yield* s.next
      assert.deepStrictEqual(
        replies.map((r: any) => r.error?.message ?? "ok"),
        ["ok", "ok", "Rate limit exceeded"]
      )
    })
  )
})

describe("channels", () => {
  it.effect("subscribe answers {status, channels}; an unknown channel is -32602 naming it", () =>
    Effect.gen(function* () {
      const shared = makeShared()
      const s = yield* authenticated(shared, "token-maker")
      const bad = yield* s.call("v1/subscribe", { channels: ["rfq.maker", "rfq.everything"] })
      assert.strictEqual(bad.error.code, -32602)
      assert.match(bad.error.data.reason[0], /^channels\[1\]: unknown channel "rfq\.everything"/)
      assert.strictEqual((yield* s.call("v1/subscribe", { channels: ["rfq.maker.XRP"] })).error.code, -32602)
      assert.strictEqual((yield* s.call("v1/subscribe", { channels: [] })).error.code, -32602)
      assert.strictEqual(shared.hub.size, 0)
      const ok = yield* s.call("v1/subscribe", {
        channels: ["rfq.maker", "rfq_quote.maker.ETH", "rfq.maker"]
      })
      assert.deepStrictEqual(ok.result, {
        status: "subscribed",
        channels: ["rfq.maker", "rfq_quote.maker.ETH"]
      })
      assert.strictEqual(shared.hub.size, 1)
    })
  )

  it.effect("notifications carry the channel as subscribed and a per-connection seq counting up", () =>
    Effect.gen(function* () {
      const shared = makeShared()
      const s = yield* authenticated(shared, "token-maker")
      const t = yield* authenticated(shared, "token-taker")
      yield* s.call("v1/subscribe", { channels: ["rfq.maker", "rfq.maker.BTC"] })
      yield* t.call("v1/subscribe", { channels: ["rfq.maker.ETH"] })
      for (const [id, currency] of [
        [1, "BTC"],
        [2, "ETH"],
        [3, "BTC"]
      ] as const)
        shared.hub.publish(rfqEvent(id, currency))
      const seen = [yield* s.next, yield* s.next, yield* s.next, yield* s.next, yield* s.next]
      assert.deepStrictEqual(
        seen.map((n) => [n.params.seq, n.params.channel, n.params.data.rfqId]),
        [
          [1, "rfq.maker", 1],
          [2, "rfq.maker.BTC", 1],
          [3, "rfq.maker", 2],
          [4, "rfq.maker", 3],
          [5, "rfq.maker.BTC", 3]
        ]
      )
      assert.deepStrictEqual(seen[0], {
        jsonrpc: "2.0",
        method: "v1/subscription",
        params: { channel: "rfq.maker", seq: 1, data: { event: "created", rfqId: 1 } }
      })
      const other = yield* t.next
      assert.deepStrictEqual(
        [other.params.seq, other.params.channel, other.params.data.rfqId],
        [1, "rfq.maker.ETH", 2]
      )
    })
  )

  it.effect("unsubscribe stops the notifications and leaves the hub when nothing is left", () =>
    Effect.gen(function* () {
      const shared = makeShared()
      const s = yield* authenticated(shared, "token-maker")
      yield* s.call("v1/subscribe", { channels: ["rfq.maker", "rfq.taker"] })
      const reply = yield* s.call("v1/unsubscribe", { channels: ["rfq.maker"] })
      assert.deepStrictEqual(reply.result, { status: "unsubscribed", channels: ["rfq.maker"] })
      shared.hub.publish(rfqEvent(1, "BTC"))
      assert.strictEqual((yield* s.call("heartbeat")).method, "heartbeat")
      yield* s.call("v1/unsubscribe", { channels: ["rfq.taker"] })
      assert.strictEqual(shared.hub.size, 0)
    })
  )

  it.effect("a closed session leaves the hub and is sent nothing more", () =>
    Effect.gen(function* () {
      const shared = makeShared()
      const s = yield* authenticated(shared, "token-maker")
      yield* s.call("v1/subscribe", { channels: ["rfq.maker"] })
      yield* s.session.closed
      assert.strictEqual(shared.hub.size, 0)
      shared.hub.publish(rfqEvent(1, "BTC"))
      assert.strictEqual(yield* s.pending, 0)
    })
  )
})

describe("cancel-on-disconnect", () => {
  it.effect("when the user's last protected session closes, its quotes are cancelled once", () =>
    Effect.gen(function* () {
      const shared = makeShared()
      const a = yield* authenticated(shared, "token-maker")
      const b = yield* authenticated(shared, "token-maker-late")
      const unprotected = yield* authenticated(shared, "token-maker")
      assert.deepStrictEqual((yield* a.call("v1/cancel-on-disconnect", { enabled: true })).result, {
        enabled: true
      })
      assert.deepStrictEqual((yield* b.call("v1/cancel-on-disconnect", { enabled: true })).result, {
        enabled: true
      })
      yield* a.session.closed
      assert.deepStrictEqual(shared.cancelled, [])
      yield* b.session.closed
      assert.deepStrictEqual(
        shared.cancelled.map((c) => c.userId),
        [callers.maker.userId]
      )
      yield* unprotected.session.closed
      assert.lengthOf(shared.cancelled, 1)
    })
  )

  it.effect("turned off again, a close cancels nothing", () =>
    Effect.gen(function* () {
      const shared = makeShared()
      const s = yield* authenticated(shared, "token-maker")
      yield* s.call("v1/cancel-on-disconnect", { enabled: true })
      assert.deepStrictEqual((yield* s.call("v1/cancel-on-disconnect", { enabled: false })).result, {
        enabled: false
      })
      yield* s.session.closed
      assert.deepStrictEqual(shared.cancelled, [])
    })
  )

  it.effect("a timed-out or expired session counts as closed", () =>
    Effect.gen(function* () {
      const shared = makeShared()
      const s = yield* authenticated(shared, "token-maker-short")
      yield* s.call("v1/cancel-on-disconnect", { enabled: true })
      yield* TestClock.adjust(callers.makerShort.tokenExpiresAt)
      assert.strictEqual((yield* s.nextClose).code, 4001)
      // The transport reports the end of the connection, as uWS does after the close frame.
      yield* s.session.closed
      assert.lengthOf(shared.cancelled, 1)
    })
  )

  it.effect("the call in progress is interrupted and settled before the quotes are cancelled", () =>
    Effect.gen(function* () {
      const shared = makeShared()
      const s = yield* authenticated(shared, "token-maker")
      yield* s.call("v1/cancel-on-disconnect", { enabled: true })
      yield* s.send({ jsonrpc: "2.0", id: "slow", method: "v1/test/slow", params: { ms: 60_000 } })
      yield* s.send({ jsonrpc: "2.0", id: "queued", method: "v1/test/slow", params: { ms: 1 } })
      while (!shared.journal.includes("slow started")) yield* Effect.yieldNow()
      yield* s.session.closed
      assert.deepStrictEqual(shared.journal, [
        "slow started",
        "slow interrupted",
        `cancel ${callers.maker.userId}`
      ])
    })
  )

  it.effect("needs the write access: a viewer gets -32003; params are checked", () =>
    Effect.gen(function* () {
      const viewer = yield* authenticated(makeShared(), "token-viewer")
      assert.strictEqual(
        (yield* viewer.call("v1/cancel-on-disconnect", { enabled: true })).error.code,
        -32003
      )
      const maker = yield* authenticated(makeShared(), "token-maker")
      assert.strictEqual(
        (yield* maker.call("v1/cancel-on-disconnect", { enabled: "yes" })).error.code,
        -32602
      )
    })
  )
})

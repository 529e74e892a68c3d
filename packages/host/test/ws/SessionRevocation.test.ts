import { assert, describe, it } from "@effect/vitest"
import { apiError } from "@rfq/engine"
import { Effect, Option } from "effect"
import { LoginThrottled } from "../../src/auth/LoginThrottle.js"
import { RateLimiter } from "../../src/RateLimiter.js"
import { makeSession } from "../../src/ws/Session.js"
import { authenticated, callers, fakeAuth, makeShared, parseFrame, rfqEvent } from "./sessionHarness.js"

/**
 * Class 1 of issue 12 at the session level: a session whose token or account no longer stands
 * (by the same status REST reads) is refused on its next call and closed with 4003; the endpoint's
 * recheck closes idle ones through `revoke`. The real database and processes are in
 * SessionRevocationHost.test.ts.
 */

const inactive = apiError("accountInactive")
const revoked = apiError("tokenExpiredOrInvalid")

describe("revocation reaches the open session", () => {
  it.effect(
    "a call after the family is revoked is refused with REST's message, then 4003 token revoked",
    () =>
      Effect.gen(function* () {
        const shared = makeShared()
        const s = yield* authenticated(shared, "token-maker")
        assert.isDefined((yield* s.call("v1/test/echo", { n: 1 })).result)
        shared.standings.refusals.set(callers.maker.userId, revoked)
        const refused = yield* s.call("v1/test/write")
        assert.deepStrictEqual(refused.error, {
          code: -32001,
          message: "authorisation token expired or not valid",
          data: { status: 401, reason: [] }
        })
        assert.deepStrictEqual(yield* s.nextClose, { code: 4003, reason: "token revoked" })
      })
  )

  it.effect(
    "a deactivated account: every method refused (reads, writes, channels), 4003 account is inactive",
    () =>
      Effect.gen(function* () {
        const shared = makeShared()
        const s = yield* authenticated(shared, "token-maker")
        shared.standings.refusals.set(callers.maker.userId, inactive)
        yield* s.send(
          ["v1/test/echo", "v1/test/write", "v1/subscribe", "auth/refresh"].map((method, i) => ({
            jsonrpc: "2.0",
            id: i,
            method,
            params:
              method === "v1/test/echo"
                ? { n: 1 }
                : method === "v1/subscribe"
                  ? { channels: ["rfq.maker"] }
                  : method === "auth/refresh"
                    ? { token: "token-maker" }
                    : {}
          }))
        )
        const replies = yield* s.next
        assert.deepStrictEqual(
          replies.map((r: any) => [r.error?.code, r.error?.message]),
          Array.from({ length: 4 }, () => [-32001, "account is inactive"])
        )
        assert.deepStrictEqual(yield* s.nextClose, { code: 4003, reason: "account is inactive" })
        // Nothing the batch asked for ran: the rate limiter saw none of it.
        assert.strictEqual(shared.limiter.take(`user:${callers.maker.userId}`, 0).remaining, 999)
      })
  )

  it.effect("a standing not in the cache is read (once per call) before the call runs", () =>
    Effect.gen(function* () {
      const shared = makeShared()
      const s = yield* authenticated(shared, "token-taker")
      shared.standings.uncached.add(callers.taker.userId)
      assert.isDefined((yield* s.call("v1/test/echo", { n: 1 })).result)
      assert.strictEqual(shared.standings.reads, 1)
      shared.standings.refusals.set(callers.taker.userId, inactive)
      assert.strictEqual((yield* s.call("v1/test/echo", { n: 2 })).error.message, "account is inactive")
      assert.strictEqual(shared.standings.reads, 2)
      assert.strictEqual((yield* s.nextClose).code, 4003)
    })
  )

  it.effect("heartbeat needs no standing; an unauthenticated session is never revoked by it", () =>
    Effect.gen(function* () {
      const shared = makeShared()
      const s = yield* authenticated(shared, "token-maker")
      shared.standings.refusals.set(callers.maker.userId, revoked)
      assert.isDefined((yield* s.call("heartbeat")).result)
      assert.isTrue(Option.isNone(yield* s.pollClose))
      assert.strictEqual(s.session.caller()?.userId, callers.maker.userId)
    })
  )

  it.effect(
    "revoke (the endpoint's recheck) closes an idle session at once; cancel-on-disconnect then runs",
    () =>
      Effect.gen(function* () {
        const shared = makeShared()
        const s = yield* authenticated(shared, "token-maker")
        yield* s.call("v1/cancel-on-disconnect", { enabled: true })
        s.session.revoke(inactive)
        assert.deepStrictEqual(yield* s.nextClose, { code: 4003, reason: "account is inactive" })
        // The transport reports the end, as uWS does after the close frame.
        yield* s.session.closed
        assert.deepStrictEqual(
          shared.cancelled.map((c) => c.userId),
          [callers.maker.userId]
        )
      })
  )
})

describe("notifications", () => {
  it.effect("a session whose token is refused hears no more events: closed with 4003 instead", () =>
    Effect.gen(function* () {
      const shared = makeShared()
      const s = yield* authenticated(shared, "token-maker")
      yield* s.call("v1/subscribe", { channels: ["rfq.maker"] })
      shared.hub.publish(rfqEvent(1, "BTC"))
      assert.strictEqual((yield* s.next).params.data.rfqId, 1)
      shared.standings.refusals.set(callers.maker.userId, revoked)
      shared.hub.publish(rfqEvent(2, "BTC"))
      assert.deepStrictEqual(yield* s.nextClose, { code: 4003, reason: "token revoked" })
      assert.strictEqual(yield* s.pending, 0)
    })
  )
})

describe("guessing over the session", () => {
  it.effect(
    "auth with a throttled secret check answers the spec's rate-limit error with the login limit",
    () =>
      Effect.gen(function* () {
        const closes: Array<number> = []
        const sent: Array<any> = []
        const addresses: Array<string | undefined> = []
        const shared = makeShared()
        const session = yield* makeSession(
          {
            send: (frame) => void sent.push(parseFrame(frame)),
            close: (code) => void closes.push(code),
            remoteAddress: "198.51.100.7"
          },
          {
            auth: {
              ...fakeAuth,
              clientCredentials: (_id, _secret, _lifetime, _refresh, address) => {
                addresses.push(address)
                return Effect.fail(
                  new LoginThrottled({
                    decision: { allowed: false, limit: 10, remaining: 0, reset: 120 },
                    windowMs: 60_000
                  })
                )
              }
            },
            engine: {} as never,
            operations: new Map(),
            limiter: new RateLimiter(1000),
            hub: shared.hub,
            cancelOnDisconnect: shared.cancelOnDisconnect,
            heartbeatTimeoutMs: 1_000_000,
            maxBatch: 10,
            maxPendingBytes: 1_000_000
          }
        )
        yield* session.receive(
          JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "auth",
            params: { clientId: "x", clientSecret: "y" }
          })
        )
        while (sent.length === 0) yield* Effect.yieldNow()
        assert.deepStrictEqual(sent[0], {
          jsonrpc: "2.0",
          id: 1,
          method: "auth",
          error: {
            code: -32603,
            message: "Rate limit exceeded",
            data: { limit: 10, window: "1m0s", reset: 120 }
          }
        })
        assert.deepStrictEqual(closes, [])
        assert.deepStrictEqual(addresses, ["198.51.100.7"])
      })
  )
})

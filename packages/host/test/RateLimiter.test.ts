import { assert, describe, it } from "@effect/vitest"
import { apiError } from "@rfq/engine"
import { Effect, Layer, TestClock } from "effect"
import { rateLimitAround } from "../src/App.js"
import { Auth, type AuthService } from "../src/auth/AuthService.js"
import type { HostInput } from "../src/Host.js"
import { RateLimiter, rateLimitHeaders } from "../src/RateLimiter.js"
import type { RouteRequest, RouteResponse } from "../src/Router.js"

/**
 * The HTTP rate limiter on a test clock: fixed windows aligned to the minute, the headers, and
 * the key each request is counted under (the user once its token is known, the peer address
 * before). No wall clock, so a minute boundary cannot fall inside a test.
 */

describe("RateLimiter", () => {
  it("counts down within a window, refuses past the limit, and starts over in the next window", () => {
    const limiter = new RateLimiter(3)
    const t0 = 120_000 + 5_000
    const decisions = [0, 1, 2, 3].map((i) => limiter.take("ip:a", t0 + i * 1000))
    assert.deepStrictEqual(
      decisions.map((d) => [d.allowed, d.remaining, d.reset]),
      [
        [true, 2, 180],
        [true, 1, 180],
        [true, 0, 180],
        [false, 0, 180]
      ]
    )
    // The last millisecond of the window still belongs to it; the next one is a new window.
    assert.isFalse(limiter.take("ip:a", 179_999).allowed)
    assert.deepStrictEqual(limiter.take("ip:a", 180_000), {
      allowed: true,
      limit: 3,
      remaining: 2,
      reset: 240
    })
  })

  it("keys are independent; ended windows are swept", () => {
    const limiter = new RateLimiter(1)
    assert.isTrue(limiter.take("user:1", 0).allowed)
    assert.isFalse(limiter.take("user:1", 10).allowed)
    assert.isTrue(limiter.take("user:2", 10).allowed)
    assert.isTrue(limiter.take("ip:1", 10).allowed)
    assert.strictEqual(limiter.size, 3)
    limiter.take("user:3", 60_000)
    assert.strictEqual(limiter.size, 1)
  })

  it("a refund gives a request back in its own window only", () => {
    const limiter = new RateLimiter(2)
    limiter.take("k", 1_000)
    limiter.take("k", 2_000)
    assert.isFalse(limiter.take("k", 3_000).allowed)
    limiter.refund("k", 2_000)
    assert.isTrue(limiter.take("k", 4_000).allowed)
    // Taken in the previous window: the new window never counted it.
    limiter.take("k", 61_000)
    limiter.refund("k", 59_000)
    assert.strictEqual(limiter.take("k", 62_000).remaining, 0)
  })

  it("another window length: the reset is its end, in unix seconds", () => {
    const limiter = new RateLimiter(5, 10_000)
    assert.strictEqual(limiter.take("k", 1_234_567).reset, 1_240)
  })

  it("the X-RateLimit-* headers carry limit, remaining and reset", () => {
    assert.deepStrictEqual(
      rateLimitHeaders({ allowed: true, limit: 100, remaining: 7, reset: 1_700_000_060 }),
      {
        "X-RateLimit-Limit": "100",
        "X-RateLimit-Remaining": "7",
        "X-RateLimit-Reset": "1700000060"
      }
    )
  })
})

const caller = { userId: 7, deskId: 1, roles: ["trader"] as const, tokenExpiresAt: 10 ** 13 }

/** Knows one token ("Bearer good", user 7); every other header fails to authenticate. */
const fakeAuth = {
  knownCaller: (header: string | undefined) => (header === "Bearer good" ? caller : undefined),
  authenticate: () => Effect.fail(apiError("tokenExpiredOrInvalid"))
} as unknown as AuthService

const input = { config: { rateLimitPerMinute: 2 } } as unknown as HostInput

const request = (remoteAddress: string, authorization?: string): RouteRequest => ({
  method: "GET",
  path: "/v1/exchange/maker",
  query: "",
  headers: authorization === undefined ? {} : { authorization },
  params: {},
  body: new Uint8Array(),
  remoteAddress
})

const ok: Effect.Effect<RouteResponse> = Effect.succeed({ status: 200, body: {} })

describe("the HTTP rate limit around every request", () => {
  it.effect("per user when the token is known, per peer address otherwise; headers on every answer", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(60_000 * 1000 + 30_000)
      const around = yield* rateLimitAround(input).pipe(Effect.provide(Layer.succeed(Auth, fakeAuth)))
      const status = (r: RouteRequest) =>
        Effect.map(around(r, ok), (a) => [a.status, a.headers?.["X-RateLimit-Remaining"]])
      // The same user from two addresses shares one budget.
      assert.deepStrictEqual(yield* status(request("10.0.0.1", "Bearer good")), [200, "1"])
      assert.deepStrictEqual(yield* status(request("10.0.0.2", "Bearer good")), [200, "0"])
      const refused = yield* around(request("10.0.0.3", "Bearer good"), ok)
      assert.deepStrictEqual(
        [refused.status, refused.body],
        [429, { code: 429, message: "rate limit exceeded" }]
      )
      assert.deepStrictEqual(refused.headers, {
        "X-RateLimit-Limit": "2",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": String(60_000 + 60)
      })
      // Before authentication (no header, or a token that does not verify) the address counts.
      assert.deepStrictEqual(yield* status(request("10.0.0.1")), [200, "1"])
      assert.deepStrictEqual(yield* status(request("10.0.0.1", "Bearer forged")), [200, "0"])
      assert.deepStrictEqual(yield* status(request("10.0.0.1")), [429, "0"])
      assert.deepStrictEqual(yield* status(request("10.0.0.9")), [200, "1"])
      // The next window gives every key its budget back.
      yield* TestClock.adjust(30_000)
      assert.deepStrictEqual(yield* status(request("10.0.0.1")), [200, "1"])
      assert.deepStrictEqual(yield* status(request("10.0.0.3", "Bearer good")), [200, "1"])
    })
  )

  it.effect("a route's own X-RateLimit-* (the login limit) is kept over the request limit's", () =>
    Effect.gen(function* () {
      const around = yield* rateLimitAround(input).pipe(Effect.provide(Layer.succeed(Auth, fakeAuth)))
      const own = { "X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "99" }
      const answer = yield* around(
        request("10.0.0.5"),
        Effect.succeed({ status: 429, body: {}, headers: own })
      )
      assert.deepStrictEqual(answer.headers, own)
    })
  )
})

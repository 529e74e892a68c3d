import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { rateLimitAround } from "../../src/App.js"
import { Auth, type AuthService } from "../../src/auth/AuthService.js"
import type { HostInput } from "../../src/Host.js"
import type { RateDecision, RateLimit } from "../../src/RateLimiter.js"
import type { RouteRequest, RouteResponse } from "../../src/Router.js"
import { makeSharedState } from "../../src/shared/RedisSharedState.js"
import { SharedState } from "../../src/shared/SharedState.js"
import { cleanUpNamespace, host, testNamespace } from "./redisSupport.js"

/**
 * The rate limit shared by several hosts through Redis: three limiter instances (three "hosts",
 * each with its own connection) taking turns, or all at once, let exactly `limit` requests of a
 * key through per window, and agree on the headers.
 */

const take = (limiter: RateLimit, key: string): Effect.Effect<RateDecision> =>
  Effect.suspend(() => {
    const decision = limiter.take(key, Date.now())
    return Effect.isEffect(decision) ? decision : Effect.succeed(decision)
  })

/** Three hosts' limits named `name` in one namespace. */
const threeHosts = (name: string, limit: number) =>
  Effect.gen(function* () {
    const namespace = testNamespace()
    yield* cleanUpNamespace(namespace)
    const hosts = yield* Effect.all(["a", "b", "c"].map((id) => host(namespace, id)))
    return hosts.map((h) => h.rateLimit(name, limit))
  })

describe("the shared rate limit", () => {
  it.live("round-robin over three hosts: exactly the limit passes, the headers count down as one", () =>
    Effect.gen(function* () {
      const limit = 7
      const limiters = yield* threeHosts("http", limit)
      const decisions: Array<RateDecision> = []
      for (let i = 0; i < 3 * limit; i++) decisions.push(yield* take(limiters[i % 3]!, "user:42"))
      assert.deepStrictEqual(
        decisions.map((d) => d.allowed),
        Array.from({ length: 3 * limit }, (_, i) => i < limit)
      )
      assert.deepStrictEqual(
        decisions.map((d) => d.remaining),
        Array.from({ length: 3 * limit }, (_, i) => Math.max(0, limit - 1 - i))
      )
      assert.isTrue(decisions.every((d) => d.limit === limit))
      // One window, one reset, whichever host answered; about a minute ahead.
      const resets = new Set(decisions.map((d) => d.reset))
      assert.strictEqual(resets.size, 1)
      const reset = decisions[0]!.reset
      const nowSeconds = Date.now() / 1000
      assert.isTrue(reset > nowSeconds && reset <= nowSeconds + 61, `reset ${reset}`)
      // Another key, and another limit name, have budgets of their own.
      assert.isTrue((yield* take(limiters[1]!, "user:43")).allowed)
    }).pipe(Effect.scoped)
  )

  it.live("many concurrent requests over three hosts: exactly the limit passes", () =>
    Effect.gen(function* () {
      const limit = 50
      const limiters = yield* threeHosts("ws", limit)
      const decisions = yield* Effect.all(
        Array.from({ length: 400 }, (_, i) => take(limiters[i % 3]!, "user:7")),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(decisions.filter((d) => d.allowed).length, limit)
      // Each remaining value 0..limit-1 was handed out once among the allowed.
      assert.deepStrictEqual(
        decisions
          .filter((d) => d.allowed)
          .map((d) => d.remaining)
          .sort((a, b) => a - b),
        Array.from({ length: limit }, (_, i) => i)
      )
      assert.isTrue(decisions.filter((d) => !d.allowed).every((d) => d.remaining === 0))
    }).pipe(Effect.scoped)
  )

  it.live("rateLimitAround on three hosts: one user's requests get exactly the limit, with headers", () =>
    Effect.gen(function* () {
      const namespace = testNamespace()
      yield* cleanUpNamespace(namespace)
      const limit = 5
      const input = { config: { rateLimitPerMinute: limit } } as unknown as HostInput
      const caller = { userId: 9, deskId: 1, roles: ["trader"] as const, tokenExpiresAt: 10 ** 13 }
      const fakeAuth = { knownCaller: () => caller } as unknown as AuthService
      const arounds = yield* Effect.all(
        ["a", "b", "c"].map((id) =>
          Effect.flatMap(host(namespace, id), (shared) =>
            rateLimitAround(input).pipe(
              Effect.provide(
                Layer.mergeAll(Layer.succeed(Auth, fakeAuth), Layer.succeed(SharedState, shared))
              )
            )
          )
        )
      )
      const request: RouteRequest = {
        method: "GET",
        path: "/v1/exchange/maker",
        query: "",
        headers: { authorization: "Bearer good" },
        params: {},
        body: new Uint8Array(),
        remoteAddress: "10.0.0.1"
      }
      const ok: Effect.Effect<RouteResponse> = Effect.succeed({ status: 200, body: {} })
      const answers: Array<RouteResponse> = []
      for (let i = 0; i < 12; i++) answers.push(yield* arounds[i % 3]!(request, ok))
      assert.deepStrictEqual(
        answers.map((a) => [a.status, a.headers?.["X-RateLimit-Remaining"]]),
        Array.from({ length: 12 }, (_, i) => (i < limit ? [200, String(limit - 1 - i)] : [429, "0"]))
      )
      assert.isTrue(answers.every((a) => a.headers?.["X-RateLimit-Limit"] === String(limit)))
      assert.strictEqual(new Set(answers.map((a) => a.headers?.["X-RateLimit-Reset"])).size, 1)
    }).pipe(Effect.scoped)
  )

  it.live("Redis unreachable at start: the one-line error", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        makeSharedState({ redisUrl: "redis://127.0.0.1:1", namespace: testNamespace(), hostId: "x" })
      )
      assert.strictEqual(error._tag, "SharedStateUnavailable")
      assert.match(error.message, /^cannot reach Redis at redis:\/\/127\.0\.0\.1:1: \S.*$/)
      assert.notInclude(error.message, "\n")
    }).pipe(Effect.scoped)
  )
})

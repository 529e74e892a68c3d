import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { type LoginAttempt, type LoginLimiter, LoginThrottled } from "../../src/auth/LoginThrottle.js"
import { cleanUpNamespace, host, testNamespace } from "./redisSupport.js"

/**
 * The failed-secret throttle shared by several hosts: guesses spread over three hosts meet one
 * limit per address and per client id, a matched secret gives its place back wherever it was
 * checked, and an address trusted through one host is trusted on all.
 */

const attempt = (
  throttle: LoginLimiter,
  clientId: string,
  address: string | undefined
): Effect.Effect<Either.Either<LoginAttempt, LoginThrottled>> =>
  Effect.suspend(() => {
    const result = throttle.attempt(clientId, address, Date.now())
    if (result instanceof LoginThrottled) return Effect.succeed(Either.left(result))
    return Effect.isEffect(result) ? Effect.either(result) : Effect.succeed(Either.right(result))
  })

/** A failed check: reserved, then settled as a mismatch. */
const fail = (throttle: LoginLimiter, clientId: string, address: string | undefined) =>
  Effect.map(attempt(throttle, clientId, address), (outcome) => {
    if (Either.isRight(outcome)) outcome.right.settle(false)
    return Either.isRight(outcome)
  })

/**
 * A round trip on `throttle`'s connection (an attempt for an unrelated client): a refund or trust
 * mark sent before it has then been applied (one connection is served in order).
 */
const flushed = (throttle: LoginLimiter) => Effect.asVoid(attempt(throttle, "unrelated", undefined))

const threeHosts = (perAddress: number, perClient: number) =>
  Effect.gen(function* () {
    const namespace = testNamespace()
    yield* cleanUpNamespace(namespace)
    const hosts = yield* Effect.all(["a", "b", "c"].map((id) => host(namespace, id)))
    return hosts.map((h) => h.loginThrottle({ perAddress, perClient }))
  })

describe("the shared failed-secret throttle", () => {
  it.live("failures from one address over three hosts stop at the per-address limit", () =>
    Effect.gen(function* () {
      const throttles = yield* threeHosts(4, 100)
      const outcomes: Array<boolean> = []
      for (let i = 0; i < 9; i++) outcomes.push(yield* fail(throttles[i % 3]!, `client-${i}`, "10.1.1.1"))
      assert.deepStrictEqual(outcomes, [true, true, true, true, false, false, false, false, false])
      const refused = yield* attempt(throttles[1]!, "client-x", "10.1.1.1")
      assert.isTrue(Either.isLeft(refused))
      if (Either.isLeft(refused)) {
        assert.strictEqual(refused.left.decision.limit, 4)
        assert.strictEqual(refused.left.decision.remaining, 0)
        assert.isTrue(refused.left.decision.reset > Date.now() / 1000)
      }
      // Another address is not held by these failures.
      assert.isTrue(yield* fail(throttles[2]!, "client-x", "10.1.1.2"))
    }).pipe(Effect.scoped)
  )

  it.live(
    "concurrent guesses at one client id over three hosts: exactly the per-client limit is checked",
    () =>
      Effect.gen(function* () {
        const throttles = yield* threeHosts(1000, 10)
        const outcomes = yield* Effect.all(
          Array.from({ length: 60 }, (_, i) => attempt(throttles[i % 3]!, "victim", `10.2.0.${i}`)),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(outcomes.filter(Either.isRight).length, 10)
      }).pipe(Effect.scoped)
  )

  it.live("a matched secret gives its place back, and trusts the address for the client on every host", () =>
    Effect.gen(function* () {
      const [a, b, c] = yield* threeHosts(2, 100)
      // The real client logs in through host a (reserved, then matched: given back).
      const login = yield* attempt(a!, "real", "10.3.3.3")
      assert.isTrue(Either.isRight(login))
      if (Either.isRight(login)) login.right.settle(true)
      yield* flushed(a!)
      // A guesser on the same address uses up the address's budget through b and c.
      assert.isTrue(yield* fail(b!, "other", "10.3.3.3"))
      assert.isTrue(yield* fail(c!, "other", "10.3.3.3"))
      assert.isFalse(yield* fail(b!, "other", "10.3.3.3"))
      // The real client still gets in from its address through any host (its own pair limit).
      const again = yield* attempt(c!, "real", "10.3.3.3")
      assert.isTrue(Either.isRight(again))
      // A released check (no verdict) is given back too: the pair's budget is whole again.
      if (Either.isRight(again)) again.right.release()
      yield* flushed(c!)
      assert.isTrue(yield* fail(b!, "real", "10.3.3.3"))
      assert.isTrue(yield* fail(a!, "real", "10.3.3.3"))
      assert.isFalse(yield* fail(c!, "real", "10.3.3.3"))
    }).pipe(Effect.scoped)
  )

  it.live("without an address only the client id's limit applies", () =>
    Effect.gen(function* () {
      const throttles = yield* threeHosts(1, 3)
      const outcomes: Array<boolean> = []
      for (let i = 0; i < 5; i++) outcomes.push(yield* fail(throttles[i % 3]!, "no-address", undefined))
      assert.deepStrictEqual(outcomes, [true, true, true, false, false])
    }).pipe(Effect.scoped)
  )
})

import { assert, describe, layer } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { Auth, AuthLive } from "../../src/auth/AuthService.js"
import { LoginThrottled } from "../../src/auth/LoginThrottle.js"
import {
  databaseTimeout,
  jwtSecret,
  seedAccount,
  testDatabases,
  testScryptParams,
  unique
} from "./authFixtures.js"

/**
 * Class 2 of issue 12 through the real `Auth` on both databases: failed client-secret checks are
 * limited per address and per client id before any scrypt runs, on every path that checks a
 * secret (client credentials, the refresh grant), and a valid login elsewhere is not held back.
 * The scrypt runs are counted by the `onSecretVerified` hook, which is called once per verification.
 */

const PER_ADDRESS = 10
const PER_CLIENT = 30
let verified = 0

const authLayer = (db: (typeof testDatabases)[number]["layer"]) =>
  Layer.provideMerge(
    AuthLive({
      jwtSecret,
      scryptParams: testScryptParams,
      loginThrottle: { perAddress: PER_ADDRESS, perClient: PER_CLIENT },
      onSecretVerified: () => {
        verified += 1
      }
    }),
    db
  )

const kindOf = (outcome: Either.Either<unknown, unknown>) =>
  Either.isRight(outcome)
    ? "ok"
    : outcome.left instanceof LoginThrottled
      ? "throttled"
      : (outcome.left as { message: string }).message

const tally = (outcomes: ReadonlyArray<Either.Either<unknown, unknown>>) => {
  const counts: Record<string, number> = {}
  for (const o of outcomes) counts[kindOf(o)] = (counts[kindOf(o)] ?? 0) + 1
  return counts
}

describe.each(testDatabases)("secret guessing on $name", (db) => {
  // The test clock stands still, so every attempt below falls into one window.
  layer(authLayer(db.layer), { timeout: databaseTimeout })((it) => {
    it.effect(
      "150 concurrent wrong secrets from one address: at most the limit verified, the rest refused unverified",
      () =>
        Effect.gen(function* () {
          const auth = yield* Auth
          const victim = yield* seedAccount()
          const bystander = yield* seedAccount()
          const ip = "203.0.113.10"
          const before = verified
          const outcomes = yield* Effect.all(
            Array.from({ length: 150 }, (_, i) =>
              Effect.either(
                i % 3 === 0
                  ? auth.clientCredentials(victim.clientId, `guess-${i}`, 3600, false, ip)
                  : i % 3 === 1
                    ? auth.clientCredentials(unique("nobody"), `guess-${i}`, 300, true, ip)
                    : auth.refresh("not-a-token", victim.clientId, `guess-${i}`, ip)
              )
            ),
            { concurrency: "unbounded" }
          )
          assert.deepStrictEqual(tally(outcomes), {
            "invalid client ID": PER_ADDRESS,
            throttled: 150 - PER_ADDRESS
          })
          assert.strictEqual(verified - before, PER_ADDRESS)
          // The refusal carries the login limit for the 429 headers / the -32603 data.
          const refusal = outcomes.find((o) => Either.isLeft(o) && o.left instanceof LoginThrottled)!
          assert.deepStrictEqual((refusal as Either.Left<LoginThrottled, unknown>).left.decision, {
            allowed: false,
            limit: PER_ADDRESS,
            remaining: 0,
            reset: 60
          })
          // Even the right secret is not verified from that address until the window ends...
          const fromGuesser = yield* Effect.either(
            auth.clientCredentials(victim.clientId, victim.clientSecret, 3600, false, ip)
          )
          assert.strictEqual(kindOf(fromGuesser), "throttled")
          // ...while the victim (below its own limit) and anyone else log in from elsewhere.
          for (const account of [victim, bystander]) {
            const elsewhere = yield* Effect.either(
              auth.clientCredentials(account.clientId, account.clientSecret, 3600, false, "192.0.2.20")
            )
            assert.strictEqual(kindOf(elsewhere), "ok")
          }
        })
    )

    it.effect(
      "guesses at one client id spread over many addresses stop at its limit; its known address still works",
      () =>
        Effect.gen(function* () {
          const auth = yield* Auth
          const victim = yield* seedAccount()
          const home = "192.0.2.30"
          assert.strictEqual(
            kindOf(
              yield* Effect.either(
                auth.clientCredentials(victim.clientId, victim.clientSecret, 3600, false, home)
              )
            ),
            "ok"
          )
          const before = verified
          const outcomes = yield* Effect.all(
            Array.from({ length: 90 }, (_, i) =>
              Effect.either(
                auth.clientCredentials(
                  victim.clientId,
                  `guess-${i}`,
                  3600,
                  false,
                  `198.51.100.${1 + (i % 90)}`
                )
              )
            ),
            { concurrency: 10 }
          )
          assert.deepStrictEqual(tally(outcomes), {
            "invalid client ID": PER_CLIENT,
            throttled: 90 - PER_CLIENT
          })
          assert.strictEqual(verified - before, PER_CLIENT)
          const fromHome = yield* Effect.either(
            auth.clientCredentials(victim.clientId, victim.clientSecret, 3600, false, home)
          )
          assert.strictEqual(kindOf(fromHome), "ok")
          const fromNewPlace = yield* Effect.either(
            auth.clientCredentials(victim.clientId, victim.clientSecret, 3600, false, "192.0.2.31")
          )
          assert.strictEqual(kindOf(fromNewPlace), "throttled")
        })
    )

    it.effect("correct secrets never use up the budget", () =>
      Effect.gen(function* () {
        const auth = yield* Auth
        const account = yield* seedAccount()
        const outcomes = yield* Effect.all(
          Array.from({ length: 3 * PER_ADDRESS }, () =>
            Effect.either(
              auth.clientCredentials(account.clientId, account.clientSecret, 3600, false, "192.0.2.40")
            )
          ),
          { concurrency: 2 }
        )
        assert.deepStrictEqual(tally(outcomes), { ok: 3 * PER_ADDRESS })
      })
    )
  })
})

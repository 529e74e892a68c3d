import type { AccountStatus } from "@rfq/engine"
import { assert, describe, it, layer } from "@effect/vitest"
import { Clock, Effect, Layer, TestClock } from "effect"
import { AccountStanding } from "../../src/auth/AccountStanding.js"
import { Auth, AuthLive, DEFAULT_STATUS_CACHE_MILLIS } from "../../src/auth/AuthService.js"
import {
  databaseTimeout,
  jwtSecret,
  seedAccount,
  setClientActive,
  setUserActive,
  testDatabases,
  testScryptParams
} from "./authFixtures.js"

/**
 * The standing of a token's holder as open sessions see it: the synchronous cached answer, the
 * batched recheck the endpoint runs (which reaches a change made by another process at once and
 * tells REST too), a refresh-token replay known at once, and reads that land out of order.
 */

const message = (refusal: { message: string } | undefined | "unknown") =>
  refusal === undefined ? "stands" : refusal === "unknown" ? "unknown" : refusal.message

const authLayer = (db: (typeof testDatabases)[number]["layer"]) =>
  Layer.provideMerge(AuthLive({ jwtSecret, scryptParams: testScryptParams }), db)

describe.each(testDatabases)("standing on $name", (db) => {
  layer(authLayer(db.layer), { timeout: databaseTimeout })((it) => {
    it.effect("the recheck reads deactivations at once (no cache wait) for many callers in one go", () =>
      Effect.gen(function* () {
        const auth = yield* Auth
        const now = yield* Clock.currentTimeMillis
        const accounts = yield* Effect.all(Array.from({ length: 4 }, () => seedAccount()))
        const callers = yield* Effect.forEach(accounts, (a) =>
          Effect.flatMap(auth.clientCredentials(a.clientId, a.clientSecret, 300, true), (t) =>
            auth.verifyToken(t.access_token)
          )
        )
        assert.deepStrictEqual(
          callers.map((c) => message(auth.cachedStanding(c, now))),
          ["stands", "stands", "stands", "stands"]
        )
        yield* setClientActive(accounts[1]!.clientId, false)
        yield* setUserActive(accounts[2]!.userId, false)
        // Well within the status cache time: the cached answer is still the old one...
        assert.strictEqual(message(auth.cachedStanding(callers[1]!, now)), "stands")
        // ...the recheck reads the database, for the same caller twice too.
        const refusals = yield* auth.recheckStanding([...callers, callers[1]!])
        assert.deepStrictEqual(refusals.map(message), [
          "stands",
          "account is inactive",
          "account is inactive",
          "stands",
          "account is inactive"
        ])
        // It refreshed the cache: REST refuses these tokens from now on.
        assert.deepStrictEqual(
          callers.map((c) => message(auth.cachedStanding(c, now))),
          ["stands", "account is inactive", "account is inactive", "stands"]
        )
        assert.strictEqual(
          message(yield* Effect.flip(auth.checkStanding(callers[2]!))),
          "account is inactive"
        )
      })
    )

    it.effect("a replayed refresh token is known at once: every token of its family is refused", () =>
      Effect.gen(function* () {
        const auth = yield* Auth
        const now = yield* Clock.currentTimeMillis
        const account = yield* seedAccount()
        const first = yield* auth.clientCredentials(account.clientId, account.clientSecret, 300, true)
        const firstCaller = yield* auth.verifyToken(first.access_token)
        const second = yield* auth.refresh(first.refresh_token!, account.clientId, account.clientSecret)
        const secondCaller = yield* auth.verifyToken(second.access_token)
        assert.strictEqual(secondCaller.family, firstCaller.family)
        assert.isString(firstCaller.family)
        yield* Effect.either(auth.refresh(first.refresh_token!, account.clientId, account.clientSecret))
        for (const caller of [firstCaller, secondCaller])
          assert.strictEqual(
            message(auth.cachedStanding(caller, now)),
            "authorisation token expired or not valid"
          )
        // A token without a family (client credentials without refresh) is not touched.
        const plain = yield* auth.clientCredentials(account.clientId, account.clientSecret, 3600, false)
        assert.strictEqual(
          message(auth.cachedStanding(yield* auth.verifyToken(plain.access_token), now)),
          "stands"
        )
      })
    )

    it.effect("without a recheck the cached answer lasts the status cache time, then is read again", () =>
      Effect.gen(function* () {
        const auth = yield* Auth
        const account = yield* seedAccount()
        const t0 = yield* Clock.currentTimeMillis
        const issued = yield* auth.clientCredentials(account.clientId, account.clientSecret, 3600, false)
        const caller = yield* auth.verifyToken(issued.access_token)
        yield* setClientActive(account.clientId, false)
        assert.strictEqual(
          message(auth.cachedStanding(caller, t0 + DEFAULT_STATUS_CACHE_MILLIS - 1)),
          "stands"
        )
        assert.strictEqual(message(auth.cachedStanding(caller, t0 + DEFAULT_STATUS_CACHE_MILLIS)), "unknown")
        yield* TestClock.adjust(DEFAULT_STATUS_CACHE_MILLIS)
        assert.strictEqual(message(yield* Effect.flip(auth.checkStanding(caller))), "account is inactive")
      })
    )
  })
})

describe("AccountStanding", () => {
  const active: AccountStatus = { active: true, familyRevoked: false }
  const inactive: AccountStatus = { active: false, familyRevoked: false }
  const store = {
    accountStatus: () => Effect.succeed(active),
    accountStatuses: (keys: ReadonlyArray<unknown>) => Effect.succeed(keys.map(() => inactive))
  }

  it("a read that began earlier never replaces a newer one (out-of-order completion)", () => {
    const standing = new AccountStanding(store, 5_000, 100)
    const key = { userId: 1, clientId: "c" }
    standing.remember(key, inactive, 2_000)
    // A request's read that began at 1_000 (before the deactivation) lands now.
    standing.remember(key, active, 1_000)
    assert.deepStrictEqual(standing.cached(key, 2_500), inactive)
    // A newer read wins, and the entry lasts the cache time from when its read began.
    standing.remember(key, active, 3_000)
    assert.deepStrictEqual(standing.cached(key, 7_999), active)
    assert.strictEqual(standing.cached(key, 8_000), undefined)
  })

  it("after forgetAll, a read that began before it is answered but not remembered as standing", () => {
    const standing = new AccountStanding(store, 5_000, 100)
    const key = { userId: 1, clientId: "c" }
    standing.remember(key, active, 1_000)
    // The admin socket deactivated the client and made the host forget at 2_000; a read that began
    // at 1_500 (it may have seen the row before the change) lands afterwards.
    standing.forgetAll(2_000)
    standing.remember(key, active, 1_500)
    assert.strictEqual(standing.cached(key, 2_100), undefined)
    // A refusal is kept whenever it was read; a read begun after the forget is kept too.
    standing.remember(key, inactive, 1_500)
    assert.deepStrictEqual(standing.cached(key, 2_100), inactive)
    const other = { userId: 2 }
    standing.remember(other, active, 2_001)
    assert.deepStrictEqual(standing.cached(other, 2_100), active)
  })

  it("keys differ by user, client and family", () => {
    const standing = new AccountStanding(store, 5_000, 100)
    standing.remember({ userId: 1, clientId: "c", family: "f" }, inactive, 0)
    assert.strictEqual(standing.cached({ userId: 1, clientId: "c" }, 0), undefined)
    assert.strictEqual(standing.cached({ userId: 1, clientId: "c", family: "g" }, 0), undefined)
    assert.strictEqual(standing.cached({ userId: 2, clientId: "c", family: "f" }, 0), undefined)
    assert.deepStrictEqual(standing.cached({ userId: 1, clientId: "c", family: "f" }, 0), inactive)
  })
})

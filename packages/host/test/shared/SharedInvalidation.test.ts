import { assert, describe, it, layer } from "@effect/vitest"
import { UserAccountsLive } from "@rfq/engine"
import { Clock, Effect } from "effect"
import { type AuthService, makeAuth } from "../../src/auth/AuthService.js"
import type { AuthenticatedCaller } from "../../src/auth/Tokens.js"
import type { Notice } from "../../src/shared/Invalidation.js"
import { SharedState } from "../../src/shared/SharedState.js"
import {
  databaseTimeout,
  jwtSecret,
  pgliteDatabase,
  seedAccount,
  setClientActive,
  setUserActive,
  testScryptParams
} from "../auth/authFixtures.js"
import { cleanUpNamespace, eventually, host, testNamespace } from "./redisSupport.js"

/**
 * Cross-host invalidation through Redis pub/sub: a notice reaches the other hosts and not its
 * sender; and through `Auth`, a refresh-token replay or a deactivation found on one host is
 * refused on the other at once, well within its status cache time (5 s), by the notice alone.
 */

describe("the invalidation bus", () => {
  it.live("a notice reaches every other host, not its sender", () =>
    Effect.gen(function* () {
      const namespace = testNamespace()
      yield* cleanUpNamespace(namespace)
      const [a, b, c] = yield* Effect.all(["a", "b", "c"].map((id) => host(namespace, id)))
      const heard = { a: [] as Array<Notice>, b: [] as Array<Notice>, c: [] as Array<Notice> }
      yield* a!.invalidation.listen((n) => heard.a.push(n))
      yield* b!.invalidation.listen((n) => heard.b.push(n))
      yield* c!.invalidation.listen((n) => heard.c.push(n))
      const notice: Notice = {
        _tag: "StandingRefused",
        userId: 3,
        clientId: "c3",
        active: false,
        familyRevoked: false
      }
      yield* a!.invalidation.broadcast(notice)
      yield* b!.invalidation.broadcast({ _tag: "ReferenceDataChanged" })
      yield* eventually(
        Effect.sync(() => heard.b.length === 1 && heard.c.length === 2 && heard.a.length === 1)
      )
      assert.deepStrictEqual(heard.b, [notice])
      assert.deepStrictEqual(heard.c, [notice, { _tag: "ReferenceDataChanged" }])
      assert.deepStrictEqual(heard.a, [{ _tag: "ReferenceDataChanged" }])
    }).pipe(Effect.scoped)
  )
})

const message = (refusal: { message: string } | undefined | "unknown") =>
  refusal === undefined ? "stands" : refusal === "unknown" ? "unknown" : refusal.message

/** Two hosts' `Auth` on one database, telling each other through Redis. */
const twoHosts = Effect.gen(function* () {
  const namespace = testNamespace()
  yield* cleanUpNamespace(namespace)
  return yield* Effect.all(
    ["a", "b"].map((id) =>
      Effect.flatMap(host(namespace, id), (shared) =>
        makeAuth({ jwtSecret, scryptParams: testScryptParams }).pipe(
          Effect.provide(UserAccountsLive),
          Effect.provideService(SharedState, shared)
        )
      )
    )
  )
})

/** What `auth` says of `caller` from its cache alone, now. */
const standingOn = (auth: AuthService, caller: AuthenticatedCaller) =>
  Effect.map(Clock.currentTimeMillis, (now) => message(auth.cachedStanding(caller, now)))

// Live services (no test clock): the notices arrive on their own time.
layer(pgliteDatabase, { timeout: databaseTimeout, excludeTestServices: true })("Auth on two hosts", (it) => {
  it.scoped("a refresh-token replay on one host is refused on the other by the notice", () =>
    Effect.gen(function* () {
      const [a, b] = yield* twoHosts
      const account = yield* seedAccount()
      const first = yield* a!.clientCredentials(account.clientId, account.clientSecret, 300, true)
      // Host b has verified the token: its standing is cached there as active.
      const onB = yield* b!.verifyToken(first.access_token)
      assert.strictEqual(yield* standingOn(b!, onB), "stands")
      yield* a!.refresh(first.refresh_token!, account.clientId, account.clientSecret)
      yield* Effect.either(a!.refresh(first.refresh_token!, account.clientId, account.clientSecret))
      yield* eventually(Effect.map(standingOn(b!, onB), (s) => s !== "stands"))
      assert.strictEqual(yield* standingOn(b!, onB), "authorisation token expired or not valid")
    })
  )

  it.scoped(
    "a deactivation found on one host: the same key refused, the user's other tokens read again",
    () =>
      Effect.gen(function* () {
        const [a, b] = yield* twoHosts
        const account = yield* seedAccount()
        const plain = yield* a!.clientCredentials(account.clientId, account.clientSecret, 300, false)
        const withFamily = yield* a!.clientCredentials(account.clientId, account.clientSecret, 300, true)
        const callerA = yield* a!.verifyToken(plain.access_token)
        const plainOnB = yield* b!.verifyToken(plain.access_token)
        const familyOnB = yield* b!.verifyToken(withFamily.access_token)
        assert.deepStrictEqual(
          [yield* standingOn(b!, plainOnB), yield* standingOn(b!, familyOnB)],
          ["stands", "stands"]
        )
        yield* setUserActive(account.userId, false)
        // Host a's session recheck finds it...
        assert.deepStrictEqual((yield* a!.recheckStanding([callerA])).map(message), ["account is inactive"])
        // ...and host b refuses the same key from the notice, and no longer trusts the user's others.
        yield* eventually(Effect.map(standingOn(b!, plainOnB), (s) => s !== "stands"))
        assert.strictEqual(yield* standingOn(b!, plainOnB), "account is inactive")
        assert.strictEqual(yield* standingOn(b!, familyOnB), "unknown")
        assert.strictEqual(message(yield* Effect.flip(b!.checkStanding(familyOnB))), "account is inactive")
      })
  )

  it.scoped("a client deactivation told by a host that never cached the token", () =>
    Effect.gen(function* () {
      const [a, b] = yield* twoHosts
      const account = yield* seedAccount()
      const issued = yield* b!.clientCredentials(account.clientId, account.clientSecret, 300, false)
      const onB = yield* b!.verifyToken(issued.access_token)
      yield* setClientActive(account.clientId, false)
      // Host a reads the standing for the first time and finds it refused: it tells b.
      assert.strictEqual(
        message(yield* Effect.flip(a!.verifyToken(issued.access_token))),
        "account is inactive"
      )
      yield* eventually(Effect.map(standingOn(b!, onB), (s) => s !== "stands"))
      assert.strictEqual(yield* standingOn(b!, onB), "account is inactive")
    })
  )
})

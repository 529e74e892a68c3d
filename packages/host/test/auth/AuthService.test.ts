import { assert, describe, layer } from "@effect/vitest"
import { REFRESH_TOKEN_SECONDS, requireRole } from "@rfq/engine"
import { Clock, Effect, Either, Exit, Layer, TestClock } from "effect"
import { Auth, AuthLive, DEFAULT_STATUS_CACHE_MILLIS } from "../../src/auth/AuthService.js"
import {
  databaseTimeout,
  jwtSecret,
  refreshRowsOfClient,
  seedAccount,
  setClientActive,
  setUserActive,
  testDatabases,
  testScryptParams,
  unique
} from "./authFixtures.js"

const notValid = "authorisation token expired or not valid"

/** The message of a failure, or "accepted". */
const outcome = <A>(effect: Effect.Effect<A, { message: string }, any>) =>
  Effect.map(Effect.exit(effect), (exit) =>
    Exit.isSuccess(exit) ? "accepted" : exit.cause._tag === "Fail" ? exit.cause.error.message : "defect"
  )

const bearer = (token: string) => `Bearer ${token}`

const authLayer = (db: (typeof testDatabases)[number]["layer"]) =>
  Layer.provideMerge(AuthLive({ jwtSecret, scryptParams: testScryptParams }), db)

/** The expiry of a token issued now (whole seconds, as in a JWT). The test clock is shared by a block. */
const expiryIn = (lifetimeSeconds: number) =>
  Effect.map(Clock.currentTimeMillis, (now) => (Math.floor(now / 1000) + lifetimeSeconds) * 1000)

const oauthTokens = (clientId: string, clientSecret: string) =>
  Effect.flatMap(Auth, (auth) => auth.clientCredentials(clientId, clientSecret, 300, true))

describe.each(testDatabases)("Auth on $name", (db) => {
  layer(authLayer(db.layer), { timeout: databaseTimeout })((it) => {
    it.effect("client credentials issue a token that proves the caller, desk, roles and maker id", () =>
      Effect.gen(function* () {
        const auth = yield* Auth
        const makerId = unique("maker")
        const account = yield* seedAccount({ makerId })
        const expiresAt = yield* expiryIn(3600)
        const issued = yield* auth.clientCredentials(account.clientId, account.clientSecret, 3600, false)
        assert.deepStrictEqual(Object.keys(issued).sort(), ["access_token", "expires_in", "token_type"])
        assert.strictEqual(issued.token_type, "Bearer")
        assert.strictEqual(issued.expires_in, 3600)
        const caller = yield* auth.authenticate(bearer(issued.access_token))
        assert.deepStrictEqual(caller, {
          deskId: account.deskId,
          userId: account.userId,
          roles: ["trader"],
          makerId,
          clientId: account.clientId,
          tokenExpiresAt: expiresAt
        })
        assert.deepStrictEqual(yield* auth.verifyToken(issued.access_token), caller)
      })
    )

    it.effect("the OAuth flavour gives 300 s access tokens and an 1800 s refresh token", () =>
      Effect.gen(function* () {
        const account = yield* seedAccount()
        const expiresAt = yield* expiryIn(300)
        const issued = yield* oauthTokens(account.clientId, account.clientSecret)
        assert.strictEqual(issued.expires_in, 300)
        assert.strictEqual(issued.refresh_expires_in, 1800)
        assert.isString(issued.refresh_token)
        const caller = yield* Effect.flatMap(Auth, (auth) => auth.verifyToken(issued.access_token))
        assert.strictEqual(caller.tokenExpiresAt, expiresAt)
        assert.strictEqual(caller.makerId, undefined)
      })
    )

    it.effect("an unknown client and a wrong secret get the same 401 invalid client ID", () =>
      Effect.gen(function* () {
        const auth = yield* Auth
        const account = yield* seedAccount()
        const errors = yield* Effect.all([
          Effect.flip(auth.clientCredentials(unique("nobody"), account.clientSecret, 3600, false)),
          Effect.flip(auth.clientCredentials(account.clientId, `${account.clientSecret}x`, 3600, false)),
          Effect.flip(auth.clientCredentials(account.clientId, "", 300, true))
        ])
        for (const error of errors)
          assert.deepStrictEqual("toBody" in error ? error.toBody() : error._tag, {
            code: 401,
            message: "invalid client ID"
          })
        assert.deepStrictEqual(yield* refreshRowsOfClient(account.clientId), [])
      })
    )

    it.effect("an inactive user or client is told so, but only with the right secret", () =>
      Effect.gen(function* () {
        const auth = yield* Auth
        const inactiveUser = yield* seedAccount({ userActive: false })
        const inactiveClient = yield* seedAccount({ clientActive: false })
        for (const account of [inactiveUser, inactiveClient]) {
          assert.strictEqual(
            yield* outcome(auth.clientCredentials(account.clientId, account.clientSecret, 300, true)),
            "account is inactive"
          )
          assert.strictEqual(
            yield* outcome(auth.clientCredentials(account.clientId, "wrong", 300, true)),
            "invalid client ID"
          )
        }
      })
    )

    it.effect("deactivating a user or a client cuts off its live tokens once the status cache ages", () =>
      Effect.gen(function* () {
        const auth = yield* Auth
        const user = yield* seedAccount()
        const client = yield* seedAccount()
        const userToken = (yield* auth.clientCredentials(user.clientId, user.clientSecret, 3600, false))
          .access_token
        const clientToken = (yield* auth.clientCredentials(client.clientId, client.clientSecret, 3600, false))
          .access_token
        yield* setUserActive(user.userId, false)
        yield* setClientActive(client.clientId, false)
        yield* TestClock.adjust(DEFAULT_STATUS_CACHE_MILLIS)
        assert.strictEqual(yield* outcome(auth.authenticate(bearer(userToken))), "account is inactive")
        assert.strictEqual(yield* outcome(auth.verifyToken(clientToken)), "account is inactive")
        yield* setUserActive(user.userId, true)
        yield* TestClock.adjust(DEFAULT_STATUS_CACHE_MILLIS)
        assert.strictEqual(yield* outcome(auth.authenticate(bearer(userToken))), "accepted")
      })
    )

    it.effect("an access token is refused from one second past its expiry on the fixed clock", () =>
      Effect.gen(function* () {
        const auth = yield* Auth
        const account = yield* seedAccount()
        const issued = yield* oauthTokens(account.clientId, account.clientSecret)
        const caller = yield* auth.verifyToken(issued.access_token)
        yield* TestClock.setTime(caller.tokenExpiresAt - 1)
        assert.strictEqual(yield* outcome(auth.authenticate(bearer(issued.access_token))), "accepted")
        yield* TestClock.setTime(caller.tokenExpiresAt + 1000)
        assert.strictEqual(yield* outcome(auth.authenticate(bearer(issued.access_token))), notValid)
      })
    )

    it.effect("the header is parsed before anything else", () =>
      Effect.gen(function* () {
        const auth = yield* Auth
        assert.strictEqual(yield* outcome(auth.authenticate(undefined)), "missing bearer token")
        assert.strictEqual(yield* outcome(auth.authenticate("Basic abc")), "invalid authorization header")
        assert.strictEqual(yield* outcome(auth.authenticate("Bearer not-a-jwt")), notValid)
      })
    )

    it.effect("a viewer's token reads but gets 403 insufficient permissions on writes and the account", () =>
      Effect.gen(function* () {
        const auth = yield* Auth
        const viewer = yield* seedAccount({ roles: ["viewer"] })
        const issued = yield* auth.clientCredentials(viewer.clientId, viewer.clientSecret, 3600, false)
        const caller = yield* auth.authenticate(bearer(issued.access_token))
        assert.strictEqual(yield* outcome(requireRole(caller, "read")), "accepted")
        assert.strictEqual(yield* outcome(requireRole(caller, "write")), "insufficient permissions")
        assert.strictEqual(yield* outcome(requireRole(caller, "account")), "insufficient permissions")
      })
    )

    it.effect("a refresh rotates: a new pair comes back, the old token is used up, the family stays", () =>
      Effect.gen(function* () {
        const auth = yield* Auth
        const account = yield* seedAccount()
        const first = yield* oauthTokens(account.clientId, account.clientSecret)
        yield* TestClock.adjust(60_000)
        const secondExpiresAt = yield* expiryIn(300)
        const second = yield* auth.refresh(first.refresh_token!, account.clientId, account.clientSecret)
        assert.strictEqual(second.expires_in, 300)
        assert.strictEqual(second.refresh_expires_in, REFRESH_TOKEN_SECONDS)
        assert.notStrictEqual(second.refresh_token, first.refresh_token)
        assert.strictEqual((yield* auth.verifyToken(second.access_token)).tokenExpiresAt, secondExpiresAt)
        const rows = yield* refreshRowsOfClient(account.clientId)
        assert.strictEqual(rows.length, 2)
        assert.strictEqual(rows[0]!.family, rows[1]!.family)
        assert.deepStrictEqual(
          rows.map((r) => [r.used, r.revoked]),
          [
            [true, false],
            [false, false]
          ]
        )
        // The successor works in turn.
        const third = yield* auth.refresh(second.refresh_token!, account.clientId, account.clientSecret)
        assert.isString(third.refresh_token)
      })
    )

    it.effect(
      "a replayed refresh token revokes its family: the successor and its access token stop working",
      () =>
        Effect.gen(function* () {
          const auth = yield* Auth
          const account = yield* seedAccount()
          const first = yield* oauthTokens(account.clientId, account.clientSecret)
          const second = yield* auth.refresh(first.refresh_token!, account.clientId, account.clientSecret)
          assert.strictEqual(yield* outcome(auth.verifyToken(second.access_token)), "accepted")
          assert.strictEqual(
            yield* outcome(auth.refresh(first.refresh_token!, account.clientId, account.clientSecret)),
            notValid
          )
          assert.isTrue(
            (yield* refreshRowsOfClient(account.clientId)).every((row) => row.revoked || row.used)
          )
          assert.strictEqual(
            yield* outcome(auth.refresh(second.refresh_token!, account.clientId, account.clientSecret)),
            notValid
          )
          assert.strictEqual(yield* outcome(auth.verifyToken(second.access_token)), notValid)
          assert.strictEqual(yield* outcome(auth.verifyToken(first.access_token)), notValid)
          // The client itself is not locked out: client credentials start a new family.
          const fresh = yield* oauthTokens(account.clientId, account.clientSecret)
          assert.strictEqual(yield* outcome(auth.verifyToken(fresh.access_token)), "accepted")
        })
    )

    it.effect("of ten concurrent refreshes with one token exactly one succeeds", () =>
      Effect.gen(function* () {
        const auth = yield* Auth
        const account = yield* seedAccount()
        const first = yield* oauthTokens(account.clientId, account.clientSecret)
        const attempts = yield* Effect.all(
          Array.from({ length: 10 }, () =>
            Effect.either(auth.refresh(first.refresh_token!, account.clientId, account.clientSecret))
          ),
          { concurrency: "unbounded" }
        )
        const succeeded = attempts.filter(Either.isRight)
        assert.strictEqual(succeeded.length, 1)
        for (const failed of attempts.filter(Either.isLeft)) assert.strictEqual(failed.left.message, notValid)
        // Exactly one successor was written, and the nine replays revoked the family it belongs to:
        // concurrent use of a one-time token is treated as theft (docs/auth.md).
        const rows = yield* refreshRowsOfClient(account.clientId)
        assert.strictEqual(rows.length, 2)
        assert.isTrue(rows.every((row) => row.revoked))
        const winner = succeeded[0]!.right
        assert.strictEqual(
          yield* outcome(auth.refresh(winner.refresh_token!, account.clientId, account.clientSecret)),
          notValid
        )
      })
    )

    it.effect("a refresh token is bound to its client; another client's credentials cannot use it", () =>
      Effect.gen(function* () {
        const auth = yield* Auth
        const owner = yield* seedAccount()
        const other = yield* seedAccount()
        const issued = yield* oauthTokens(owner.clientId, owner.clientSecret)
        assert.strictEqual(
          yield* outcome(auth.refresh(issued.refresh_token!, other.clientId, other.clientSecret)),
          notValid
        )
        assert.strictEqual(
          yield* outcome(auth.refresh(issued.refresh_token!, owner.clientId, "wrong")),
          "invalid client ID"
        )
        // Neither attempt used the token up.
        assert.strictEqual(
          yield* outcome(auth.refresh(issued.refresh_token!, owner.clientId, owner.clientSecret)),
          "accepted"
        )
      })
    )

    it.effect("a session refresh (no secret) works for the token's own client only", () =>
      Effect.gen(function* () {
        const auth = yield* Auth
        const owner = yield* seedAccount()
        const other = yield* seedAccount()
        const issued = yield* oauthTokens(owner.clientId, owner.clientSecret)
        assert.strictEqual(yield* outcome(auth.refresh(issued.refresh_token!, other.clientId)), notValid)
        assert.strictEqual(
          yield* outcome(auth.refresh(issued.refresh_token!, unique("nobody"))),
          "invalid client ID"
        )
        assert.strictEqual(yield* outcome(auth.refresh(issued.refresh_token!, owner.clientId)), "accepted")
      })
    )

    it.effect("refresh is refused for an expired token, an access token and an inactive account", () =>
      Effect.gen(function* () {
        const auth = yield* Auth
        const account = yield* seedAccount()
        const issued = yield* oauthTokens(account.clientId, account.clientSecret)
        assert.strictEqual(
          yield* outcome(auth.refresh(issued.access_token, account.clientId, account.clientSecret)),
          "invalid token claims"
        )
        yield* setUserActive(account.userId, false)
        assert.strictEqual(
          yield* outcome(auth.refresh(issued.refresh_token!, account.clientId, account.clientSecret)),
          "account is inactive"
        )
        yield* setUserActive(account.userId, true)
        yield* TestClock.adjust(REFRESH_TOKEN_SECONDS * 1000)
        assert.strictEqual(
          yield* outcome(auth.refresh(issued.refresh_token!, account.clientId, account.clientSecret)),
          notValid
        )
      })
    )

    it.effect("purging deletes the rows of expired refresh tokens and keeps live ones", () =>
      Effect.gen(function* () {
        const auth = yield* Auth
        const old = yield* seedAccount()
        yield* oauthTokens(old.clientId, old.clientSecret)
        yield* TestClock.adjust(REFRESH_TOKEN_SECONDS * 1000 + 1)
        const live = yield* seedAccount()
        yield* oauthTokens(live.clientId, live.clientSecret)
        assert.isAtLeast(yield* auth.purgeExpiredRefreshTokens, 1)
        assert.deepStrictEqual(yield* refreshRowsOfClient(old.clientId), [])
        assert.strictEqual((yield* refreshRowsOfClient(live.clientId)).length, 1)
      })
    )
  })
})

import type * as SqlClient from "@effect/sql/SqlClient"
import { type AccessTokenLifetime, type ApiError, UserAccounts, UserAccountsLive } from "@rfq/engine"
import { Clock, Context, Effect, Either, Layer, Option, Redacted, Runtime, type Scope } from "effect"
import { AccountStanding, refusalOf } from "./AccountStanding.js"
import { parseBearerToken } from "./BearerToken.js"
import { LoginThrottle, type LoginThrottled, type LoginThrottleOptions } from "./LoginThrottle.js"
import { SharedState } from "../shared/SharedState.js"
import { defaultScryptParams, makeDummyHash, type ScryptParams } from "./SecretHash.js"
import { makeGrants, type TokenResponse } from "./TokenGrants.js"
import { type AuthenticatedCaller, Tokens, type VerifiedAccessToken } from "./Tokens.js"

export type { TokenResponse } from "./TokenGrants.js"

export interface AuthService {
  /**
   * Client credentials grant. Unknown client and wrong secret are the same 401 `invalid client
   * ID` and take the same time; an inactive client or user is 401 `account is inactive` (told
   * only to someone who knows the secret). With `withRefresh`, a one-time refresh token starts a
   * new family. Failed secret checks are limited per `remoteAddress` and per client id
   * (`LoginThrottle`); past the limit the secret is not verified and the answer is `LoginThrottled`.
   */
  readonly clientCredentials: (
    clientId: string,
    clientSecret: string,
    lifetime: AccessTokenLifetime,
    withRefresh: boolean,
    remoteAddress?: string
  ) => Effect.Effect<TokenResponse, ApiError | LoginThrottled>
  /**
   * Refresh grant: the token is used up and a successor of the same family comes back with a new
   * 300 s access token. `clientSecret` is checked when given (the token endpoint always gives it),
   * under the same limits as `clientCredentials`; without it the caller must already have
   * authenticated `clientId` (a WebSocket session). A token used twice revokes its family, the
   * successor and their access tokens included.
   */
  readonly refresh: (
    refreshToken: string,
    clientId: string,
    clientSecret?: string,
    remoteAddress?: string
  ) => Effect.Effect<TokenResponse, ApiError | LoginThrottled>
  /** The caller of an `Authorization` header value (`undefined` when the header is absent). */
  readonly authenticate: (
    authorizationHeader: string | undefined
  ) => Effect.Effect<AuthenticatedCaller, ApiError>
  /**
   * The caller of an `Authorization` header whose token was verified before and whose account
   * status is still cached, found synchronously: the path of nearly every request. `undefined`
   * means "not known here": call `authenticate`, which decides (and may well refuse).
   */
  readonly knownCaller: (
    authorizationHeader: string | undefined,
    now: number
  ) => AuthenticatedCaller | undefined
  /** The caller of a bare access token (WebSocket `auth` with `{token}`), by the same rules. */
  readonly verifyToken: (token: string) => Effect.Effect<AuthenticatedCaller, ApiError>
  /**
   * Whether the holder of a token verified earlier may still act, by the status cache alone:
   * `undefined` when allowed, the refusal when known refused, `"unknown"` when not cached (then
   * `checkStanding`). Synchronous: an open session asks it before every call.
   */
  readonly cachedStanding: (caller: AuthenticatedCaller, now: number) => ApiError | undefined | "unknown"
  /** The same answer, reading the database when the cache has none. */
  readonly checkStanding: (caller: AuthenticatedCaller) => Effect.Effect<void, ApiError>
  /**
   * Reads the standing of every caller from the database now (a few queries, however many) and
   * remembers it: the open sessions' periodic recheck. Answers the refusal per caller, in order.
   */
  readonly recheckStanding: (
    callers: ReadonlyArray<AuthenticatedCaller>
  ) => Effect.Effect<ReadonlyArray<ApiError | undefined>>
  /**
   * Deletes refresh-token rows that have expired (for a periodic job); answers how many. Safe at
   * any time: an expired refresh token is refused by its signature's `exp` before its row is read,
   * and the access tokens of a family never outlive its last refresh token.
   */
  readonly purgeExpiredRefreshTokens: Effect.Effect<number>
  /**
   * Forgets every cached standing: accounts were changed through this host by other means (its
   * admin socket), so the next use of any token, REST or WebSocket, reads the database.
   */
  readonly forgetStanding: Effect.Effect<void>
}

export class Auth extends Context.Tag("rfq/host/Auth")<Auth, AuthService>() {}

export interface AuthOptions {
  /** `JWT_SECRET`: the HMAC key of every token, at least 32 bytes. */
  readonly jwtSecret: Redacted.Redacted<Uint8Array> | Uint8Array
  /** Bound of the verified-access-token cache (default 100,000). */
  readonly verifiedCacheSize?: number | undefined
  /**
   * How long an account's active flag (and its refresh family's revocation) is remembered
   * between database reads (default 5 s): deactivating a user or revoking a family takes effect
   * on live tokens within this time.
   */
  readonly statusCacheMillis?: number | undefined
  readonly statusCacheSize?: number | undefined
  /** Cost of the dummy hash for unknown clients; match the cost stored hashes were made with. */
  readonly scryptParams?: ScryptParams | undefined
  /** Limits of failed client-secret checks (defaults in `LoginThrottle`). */
  readonly loginThrottle?: LoginThrottleOptions | undefined
  /** Told of every client secret verified (one scrypt each) and whether it matched; for metrics. */
  readonly onSecretVerified?: ((matched: boolean) => void) | undefined
}

export const DEFAULT_STATUS_CACHE_MILLIS = 5_000
const DEFAULT_STATUS_CACHE_SIZE = 10_000

/**
 * The `Auth` service. With `SharedState` in the context (multi-host mode) the failed-secret
 * throttle is the hosts' shared one, and refusals of a token's standing found here are told to the
 * other hosts and theirs heard here (`AccountStanding.ts#OnRefused`); without it, all is local.
 */
export const makeAuth = (
  options: AuthOptions
): Effect.Effect<AuthService, never, UserAccounts | Scope.Scope> =>
  Effect.gen(function* () {
    const accounts = yield* UserAccounts
    const shared = Option.getOrUndefined(yield* Effect.serviceOption(SharedState))
    const secret = Redacted.isRedacted(options.jwtSecret)
      ? Redacted.value(options.jwtSecret)
      : options.jwtSecret
    const tokens = new Tokens({ secret, verifiedCacheSize: options.verifiedCacheSize })
    const runtime = yield* Effect.runtime<never>()
    const runFork = Runtime.runFork(runtime)
    const standing = new AccountStanding(
      accounts,
      options.statusCacheMillis ?? DEFAULT_STATUS_CACHE_MILLIS,
      options.statusCacheSize ?? DEFAULT_STATUS_CACHE_SIZE,
      shared === undefined
        ? undefined
        : (key, status) =>
            runFork(
              shared.invalidation.broadcast({
                _tag: "StandingRefused",
                userId: key.userId,
                ...(key.clientId === undefined ? {} : { clientId: key.clientId }),
                ...(key.family === undefined ? {} : { family: key.family }),
                ...status
              })
            )
    )
    if (shared !== undefined) {
      yield* shared.invalidation.listen((notice) => {
        if (notice._tag === "StandingRefused") {
          const { _tag, active, familyRevoked, ...key } = notice
          standing.heard(key, { active, familyRevoked }, Runtime.runSync(runtime)(Clock.currentTimeMillis))
        } else if (notice._tag === "EverythingStale")
          standing.forgetAll(Runtime.runSync(runtime)(Clock.currentTimeMillis))
      })
    }

    const { clientCredentials, refresh } = makeGrants({
      accounts,
      tokens,
      standing,
      throttle:
        shared === undefined
          ? new LoginThrottle(options.loginThrottle)
          : shared.loginThrottle(options.loginThrottle),
      dummyHash: yield* makeDummyHash(options.scryptParams ?? defaultScryptParams),
      onSecretVerified: options.onSecretVerified
    })

    // A caller is its own status key (userId, clientId, family), so its key text is made once.
    const checkStanding = (caller: AuthenticatedCaller) =>
      Effect.clockWith((clock) =>
        Effect.flatMap(standing.status(caller, clock.unsafeCurrentTimeMillis()), (status) => {
          const refusal = refusalOf(status)
          return refusal === undefined ? Effect.void : Effect.fail(refusal)
        })
      )

    const cachedStanding = (caller: AuthenticatedCaller, now: number) => {
      const status = standing.cached(caller, now)
      return status === undefined ? "unknown" : refusalOf(status)
    }

    const recheckStanding = (callers: ReadonlyArray<AuthenticatedCaller>) =>
      Effect.clockWith((clock) =>
        Effect.map(standing.recheck(callers, clock.unsafeCurrentTimeMillis()), (statuses) =>
          statuses.map(refusalOf)
        )
      ).pipe(Effect.withSpan("Auth.recheckStanding"))

    const verifyToken = Effect.fn("Auth.verifyToken")(function* (token: string) {
      const now = yield* Clock.currentTimeMillis
      const { caller } = yield* tokens.verifyAccess(token, now)
      yield* checkStanding(caller)
      return caller
    })

    /**
     * The caller of a token verified before whose account status is still cached, without any
     * Effect machinery: the path of nearly every request. `undefined` means "take the full path".
     */
    const knownCaller = (token: string, now: number) => standingCaller(tokens.cachedAccess(token, now), now)

    /** `knownCaller` of a header's token; the token found by the header's text when it came recently. */
    const knownHeaderCaller = (authorizationHeader: string | undefined, now: number) =>
      authorizationHeader === undefined
        ? undefined
        : standingCaller(tokens.cachedAccessOfHeader(authorizationHeader, now), now)

    /** The caller of a verified token whose cached standing is active and not revoked. */
    const standingCaller = (verified: VerifiedAccessToken | undefined, now: number) => {
      if (verified === undefined) return undefined
      const status = standing.cached(verified.caller, now)
      return status?.active === true && !status.familyRevoked ? verified.caller : undefined
    }

    const authenticate = (authorizationHeader: string | undefined) =>
      Either.match(parseBearerToken(authorizationHeader), {
        onLeft: (error) => Effect.fail(error),
        onRight: (token) =>
          Effect.clockWith((clock) => {
            const known = knownCaller(token, clock.unsafeCurrentTimeMillis())
            return known === undefined ? verifyToken(token) : Effect.succeed(known)
          })
      })

    return {
      clientCredentials,
      refresh,
      authenticate,
      knownCaller: knownHeaderCaller,
      verifyToken,
      cachedStanding,
      checkStanding,
      recheckStanding,
      purgeExpiredRefreshTokens: Effect.flatMap(
        Clock.currentTimeMillis,
        accounts.deleteExpiredRefreshTokens
      ).pipe(Effect.withSpan("Auth.purgeExpiredRefreshTokens")),
      forgetStanding: Effect.clockWith((clock) =>
        Effect.sync(() => standing.forgetAll(clock.unsafeCurrentTimeMillis()))
      )
    } satisfies AuthService
  })

/** The `Auth` service over the engine's `UserAccounts` in SQL; needs a migrated `SqlClient`. */
export const AuthLive = (options: AuthOptions): Layer.Layer<Auth, never, SqlClient.SqlClient> =>
  Layer.scoped(Auth, makeAuth(options)).pipe(Layer.provide(UserAccountsLive))

import type * as SqlClient from "@effect/sql/SqlClient"
import { type ApiError, apiError } from "@rfq/engine"
import { Clock, Context, Effect, Either, Layer, Option, Redacted } from "effect"
import { type Access, requireRole } from "./Access.js"
import { type AccountStatus, type ClientAccount, AuthStore, AuthStoreLive } from "./AuthStore.js"
import { BoundedCache } from "./BoundedCache.js"
import { parseBearerToken } from "./BearerToken.js"
import { defaultScryptParams, makeDummyHash, type ScryptParams, verifySecret } from "./SecretHash.js"
import { type AuthenticatedCaller, randomId, Tokens } from "./Tokens.js"

/** `POST /oauth/token` access tokens (spec: identity provider flow). */
export const OAUTH_ACCESS_TOKEN_SECONDS = 300
/** `POST /v1/auth` and WebSocket `auth` with client credentials (spec: quickstart flow). */
export const API_ACCESS_TOKEN_SECONDS = 3600
export const REFRESH_TOKEN_SECONDS = 1800

export type AccessTokenLifetime = typeof OAUTH_ACCESS_TOKEN_SECONDS | typeof API_ACCESS_TOKEN_SECONDS

/** The body of a successful token request (RFC 6749 §5.1 names). */
export interface TokenResponse {
  readonly access_token: string
  readonly token_type: "Bearer"
  readonly expires_in: number
  readonly refresh_token?: string
  readonly refresh_expires_in?: number
}

export interface AuthService {
  /**
   * Client credentials grant. Unknown client and wrong secret are the same 401 `invalid client
   * ID` and take the same time; an inactive client or user is 401 `account is inactive` (told
   * only to someone who knows the secret). With `withRefresh`, a one-time refresh token starts a
   * new family.
   */
  readonly clientCredentials: (
    clientId: string,
    clientSecret: string,
    lifetime: AccessTokenLifetime,
    withRefresh: boolean
  ) => Effect.Effect<TokenResponse, ApiError>
  /**
   * Refresh grant: the token is used up and a successor of the same family comes back with a new
   * 300 s access token. `clientSecret` is checked when given (the token endpoint always gives it);
   * without it the caller must already have authenticated `clientId` (a WebSocket session).
   * A token used twice revokes its family, the successor and their access tokens included.
   */
  readonly refresh: (
    refreshToken: string,
    clientId: string,
    clientSecret?: string
  ) => Effect.Effect<TokenResponse, ApiError>
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
  readonly requireRole: (caller: AuthenticatedCaller, access: Access) => Effect.Effect<void, ApiError>
  /**
   * Deletes refresh-token rows that have expired (for a periodic job); answers how many. Safe at
   * any time: an expired refresh token is refused by its signature's `exp` before its row is read,
   * and the access tokens of a family never outlive its last refresh token.
   */
  readonly purgeExpiredRefreshTokens: Effect.Effect<number>
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
}

export const DEFAULT_STATUS_CACHE_MILLIS = 5_000
const DEFAULT_STATUS_CACHE_SIZE = 10_000

const statusKey = (userId: number, clientId: string | undefined, family: string | undefined): string =>
  `${userId}\u0000${clientId ?? ""}\u0000${family ?? ""}`

/** The expiry a token signed at `now` gets (JWT times are whole seconds), unix ms. */
const expiryOf = (now: number, lifetimeSeconds: number): number =>
  (Math.floor(now / 1000) + lifetimeSeconds) * 1000

export const makeAuth = (options: AuthOptions): Effect.Effect<AuthService, never, AuthStore> =>
  Effect.gen(function* () {
    const store = yield* AuthStore
    const secret = Redacted.isRedacted(options.jwtSecret)
      ? Redacted.value(options.jwtSecret)
      : options.jwtSecret
    const tokens = new Tokens({ secret, verifiedCacheSize: options.verifiedCacheSize })
    const statusCacheMillis = options.statusCacheMillis ?? DEFAULT_STATUS_CACHE_MILLIS
    const statuses = new BoundedCache<string, AccountStatus>(
      options.statusCacheSize ?? DEFAULT_STATUS_CACHE_SIZE
    )
    const dummyHash = yield* makeDummyHash(options.scryptParams ?? defaultScryptParams)

    /** The client's account if `clientSecret` is its secret; same cost and answer for both failures. */
    const authenticateClient = (clientId: string, clientSecret: string) =>
      Effect.gen(function* () {
        const account = yield* store.clientAccount(clientId)
        const hash = Option.match(account, { onNone: () => dummyHash, onSome: (a) => a.secretHash })
        const matches = yield* verifySecret(clientSecret, hash)
        if (Option.isNone(account) || !matches) return yield* Effect.fail(apiError("invalidClientId"))
        return account.value
      })

    const requireActive = (account: ClientAccount) =>
      account.clientActive && account.userActive ? Effect.void : Effect.fail(apiError("accountInactive"))

    const issue = (account: ClientAccount, now: number, lifetime: number, family: string | undefined) =>
      Effect.tap(
        tokens.signAccess(
          {
            userId: account.userId,
            deskId: account.deskId,
            roles: account.roles,
            makerId: account.makerId,
            clientId: account.clientId,
            family
          },
          now,
          lifetime
        ),
        () =>
          statuses.set(
            statusKey(account.userId, account.clientId, family),
            { active: true, familyRevoked: false },
            now + statusCacheMillis
          )
      )

    const clientCredentials = Effect.fn("Auth.clientCredentials")(function* (
      clientId: string,
      clientSecret: string,
      lifetime: AccessTokenLifetime,
      withRefresh: boolean
    ) {
      const account = yield* authenticateClient(clientId, clientSecret)
      yield* requireActive(account)
      const now = yield* Clock.currentTimeMillis
      if (!withRefresh) {
        const access = yield* issue(account, now, lifetime, undefined)
        return {
          access_token: access.token,
          token_type: "Bearer",
          expires_in: lifetime
        } satisfies TokenResponse
      }
      const family = randomId()
      const jti = randomId()
      yield* store.insertRefreshToken({
        jti,
        family,
        userId: account.userId,
        clientId: account.clientId,
        createdAt: now,
        expiresAt: expiryOf(now, REFRESH_TOKEN_SECONDS)
      })
      const access = yield* issue(account, now, lifetime, family)
      const refreshToken = yield* tokens.signRefresh(
        { jti, family, userId: account.userId, clientId: account.clientId },
        now,
        REFRESH_TOKEN_SECONDS
      )
      return {
        access_token: access.token,
        token_type: "Bearer",
        expires_in: lifetime,
        refresh_token: refreshToken.token,
        refresh_expires_in: REFRESH_TOKEN_SECONDS
      } satisfies TokenResponse
    })

    const refresh = Effect.fn("Auth.refresh")(function* (
      refreshToken: string,
      clientId: string,
      clientSecret?: string
    ) {
      const account =
        clientSecret === undefined
          ? yield* Effect.flatMap(store.clientAccount(clientId), (found) =>
              Option.match(found, {
                onNone: () => Effect.fail(apiError("invalidClientId")),
                onSome: Effect.succeed
              })
            )
          : yield* authenticateClient(clientId, clientSecret)
      const now = yield* Clock.currentTimeMillis
      const presented = yield* tokens.verifyRefresh(refreshToken, now)
      // Issued to another client, or the client now belongs to another user: not this caller's grant.
      if (presented.clientId !== account.clientId || presented.userId !== account.userId) {
        return yield* Effect.fail(apiError("tokenExpiredOrInvalid"))
      }
      yield* requireActive(account)
      const next = { jti: randomId(), createdAt: now, expiresAt: expiryOf(now, REFRESH_TOKEN_SECONDS) }
      const outcome = yield* store.rotateRefreshToken(presented.jti, next, now)
      switch (outcome._tag) {
        case "Rotated":
          break
        case "Replayed":
          statuses.delete(statusKey(account.userId, account.clientId, outcome.family))
          yield* Effect.logWarning("refresh token replayed; family revoked").pipe(
            Effect.annotateLogs({ clientId: account.clientId, userId: account.userId })
          )
          return yield* Effect.fail(apiError("tokenExpiredOrInvalid"))
        case "Expired":
        case "Unknown":
          return yield* Effect.fail(apiError("tokenExpiredOrInvalid"))
      }
      const access = yield* issue(account, now, OAUTH_ACCESS_TOKEN_SECONDS, outcome.family)
      const successor = yield* tokens.signRefresh(
        { jti: next.jti, family: outcome.family, userId: account.userId, clientId: account.clientId },
        now,
        REFRESH_TOKEN_SECONDS
      )
      return {
        access_token: access.token,
        token_type: "Bearer",
        expires_in: OAUTH_ACCESS_TOKEN_SECONDS,
        refresh_token: successor.token,
        refresh_expires_in: REFRESH_TOKEN_SECONDS
      } satisfies TokenResponse
    })

    const accountStatus = (
      userId: number,
      clientId: string | undefined,
      family: string | undefined,
      now: number
    ) => {
      const key = statusKey(userId, clientId, family)
      const cached = statuses.get(key, now)
      if (cached !== undefined) return Effect.succeed(cached)
      return Effect.tap(store.accountStatus(userId, clientId, family), (status) =>
        statuses.set(key, status, now + statusCacheMillis)
      )
    }

    const verifyToken = Effect.fn("Auth.verifyToken")(function* (token: string) {
      const now = yield* Clock.currentTimeMillis
      const verified = yield* tokens.verifyAccess(token, now)
      const { caller } = verified
      const status = yield* accountStatus(caller.userId, caller.clientId, verified.family, now)
      if (status.familyRevoked) return yield* Effect.fail(apiError("tokenExpiredOrInvalid"))
      if (!status.active) return yield* Effect.fail(apiError("accountInactive"))
      return caller
    })

    /**
     * The caller of a token verified before whose account status is still cached, without any
     * Effect machinery: the path of nearly every request. `undefined` means "take the full path".
     */
    const knownCaller = (token: string, now: number) => {
      const verified = tokens.cachedAccess(token, now)
      if (verified === undefined) return undefined
      const status = statuses.get(
        statusKey(verified.caller.userId, verified.caller.clientId, verified.family),
        now
      )
      return status?.active === true && !status.familyRevoked ? verified.caller : undefined
    }

    const knownHeaderCaller = (authorizationHeader: string | undefined, now: number) => {
      if (authorizationHeader === undefined) return undefined
      const token = parseBearerToken(authorizationHeader)
      return Either.isRight(token) ? knownCaller(token.right, now) : undefined
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
      requireRole: (caller, access) => requireRole(caller, access),
      purgeExpiredRefreshTokens: Effect.flatMap(
        Clock.currentTimeMillis,
        store.deleteExpiredRefreshTokens
      ).pipe(Effect.withSpan("Auth.purgeExpiredRefreshTokens"))
    } satisfies AuthService
  })

/** The `Auth` service with its SQL store; needs a migrated `SqlClient`. */
export const AuthLive = (options: AuthOptions): Layer.Layer<Auth, never, SqlClient.SqlClient> =>
  Layer.effect(Auth, makeAuth(options)).pipe(Layer.provide(AuthStoreLive))

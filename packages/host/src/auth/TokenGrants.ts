import {
  type AccessTokenLifetime,
  apiError,
  type ClientAccount,
  OAUTH_ACCESS_TOKEN_SECONDS,
  REFRESH_TOKEN_SECONDS,
  type UserAccountsService
} from "@rfq/engine"
import { Clock, Effect, Exit, Option } from "effect"
import type { AccountStanding } from "./AccountStanding.js"
import { type LoginLimiter, LoginThrottled } from "./LoginThrottle.js"
import { verifySecret } from "./SecretHash.js"
import type { Tokens } from "./Tokens.js"

/**
 * The two grants that issue tokens: client credentials (with or without a refresh family) and the
 * refresh grant. Part of `Auth` (AuthService.ts); here because they are its whole write path. The
 * lifetimes and the refresh-token rows (one-time use, replay revoking the family) are the engine's
 * `UserAccounts`; here the tokens are signed and the host's status cache told.
 */

/** The body of a successful token request (RFC 6749 §5.1 names). */
export interface TokenResponse {
  readonly access_token: string
  readonly token_type: "Bearer"
  readonly expires_in: number
  readonly refresh_token?: string
  readonly refresh_expires_in?: number
}

export interface GrantDependencies {
  readonly accounts: Pick<UserAccountsService, "clientAccount" | "startRefreshFamily" | "rotateRefreshToken">
  readonly tokens: Tokens
  readonly standing: AccountStanding
  readonly throttle: LoginLimiter
  /** A hash of the same cost as stored ones, verified for unknown client ids. */
  readonly dummyHash: string
  readonly onSecretVerified?: ((matched: boolean) => void) | undefined
}

export const makeGrants = ({
  accounts,
  tokens,
  standing,
  throttle,
  dummyHash,
  onSecretVerified
}: GrantDependencies) => {
  /**
   * The client's account if `clientSecret` is its secret; same cost and answer for both failures.
   * The attempt is reserved with the throttle before anything is read, and given back on a match,
   * or when the check fails without a verdict (the account could not be read: the database is
   * down). An interrupted check (the client went away) stays counted: its scrypt may still run.
   */
  const authenticateClient = (clientId: string, clientSecret: string, remoteAddress: string | undefined) =>
    Effect.gen(function* () {
      const reserved = throttle.attempt(clientId, remoteAddress, yield* Clock.currentTimeMillis)
      if (reserved instanceof LoginThrottled) return yield* Effect.fail(reserved)
      // Shared by several hosts, the reservation is a round trip.
      const attempt = Effect.isEffect(reserved) ? yield* reserved : reserved
      let verdict = false
      return yield* Effect.gen(function* () {
        const account = yield* accounts.clientAccount(clientId)
        const hash = Option.match(account, { onNone: () => dummyHash, onSome: (a) => a.secretHash })
        const matches = yield* verifySecret(clientSecret, hash)
        const ok = Option.isSome(account) && matches
        verdict = true
        onSecretVerified?.(ok)
        attempt.settle(ok)
        if (!ok) return yield* Effect.fail(apiError("invalidClientId"))
        return account.value
      }).pipe(
        Effect.onExit((exit) =>
          Effect.sync(() => {
            if (!verdict && Exit.isFailure(exit) && !Exit.isInterrupted(exit)) attempt.release()
          })
        )
      )
    })

  const requireActive = (account: ClientAccount) =>
    account.clientActive && account.userActive ? Effect.void : Effect.fail(apiError("accountInactive"))

  /** `readAt`: when the account was read (before `now`), for the status it proves. */
  const issue = (
    account: ClientAccount,
    readAt: number,
    now: number,
    lifetime: number,
    family: string | undefined
  ) =>
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
        standing.remember(
          { userId: account.userId, clientId: account.clientId, family },
          { active: true, familyRevoked: false },
          readAt
        )
    )

  const clientCredentials = Effect.fn("Auth.clientCredentials")(function* (
    clientId: string,
    clientSecret: string,
    lifetime: AccessTokenLifetime,
    withRefresh: boolean,
    remoteAddress?: string
  ) {
    const readAt = yield* Clock.currentTimeMillis
    const account = yield* authenticateClient(clientId, clientSecret, remoteAddress)
    yield* requireActive(account)
    const now = yield* Clock.currentTimeMillis
    if (!withRefresh) {
      const access = yield* issue(account, readAt, now, lifetime, undefined)
      return {
        access_token: access.token,
        token_type: "Bearer",
        expires_in: lifetime
      } satisfies TokenResponse
    }
    const first = yield* accounts.startRefreshFamily(account, now)
    const access = yield* issue(account, readAt, now, lifetime, first.family)
    const refreshToken = yield* tokens.signRefresh(first, now, REFRESH_TOKEN_SECONDS)
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
    clientSecret?: string,
    remoteAddress?: string
  ) {
    const readAt = yield* Clock.currentTimeMillis
    const account =
      clientSecret === undefined
        ? yield* Effect.flatMap(accounts.clientAccount(clientId), (found) =>
            Option.match(found, {
              onNone: () => Effect.fail(apiError("invalidClientId")),
              onSome: Effect.succeed
            })
          )
        : yield* authenticateClient(clientId, clientSecret, remoteAddress)
    const now = yield* Clock.currentTimeMillis
    const presented = yield* tokens.verifyRefresh(refreshToken, now)
    // Issued to another client, or the client now belongs to another user: not this caller's grant.
    if (presented.clientId !== account.clientId || presented.userId !== account.userId) {
      return yield* Effect.fail(apiError("tokenExpiredOrInvalid"))
    }
    yield* requireActive(account)
    const outcome = yield* accounts.rotateRefreshToken(presented.jti, now)
    switch (outcome._tag) {
      case "Rotated":
        break
      case "Replayed":
        // Known at once on this host: REST and open sessions refuse the family's tokens from now.
        standing.remember(
          { userId: account.userId, clientId: account.clientId, family: outcome.family },
          { active: true, familyRevoked: true },
          now
        )
        yield* Effect.logWarning("refresh token replayed; family revoked").pipe(
          Effect.annotateLogs({ clientId: account.clientId, userId: account.userId })
        )
        return yield* Effect.fail(apiError("tokenExpiredOrInvalid"))
      case "Expired":
      case "Unknown":
        return yield* Effect.fail(apiError("tokenExpiredOrInvalid"))
    }
    const access = yield* issue(account, readAt, now, OAUTH_ACCESS_TOKEN_SECONDS, outcome.next.family)
    const successor = yield* tokens.signRefresh(outcome.next, now, REFRESH_TOKEN_SECONDS)
    return {
      access_token: access.token,
      token_type: "Bearer",
      expires_in: OAUTH_ACCESS_TOKEN_SECONDS,
      refresh_token: successor.token,
      refresh_expires_in: REFRESH_TOKEN_SECONDS
    } satisfies TokenResponse
  })

  return { clientCredentials, refresh }
}

import type { Caller } from "@rfq/engine"
import { Context, Effect, Layer, type Scope } from "effect"
import { LoginThrottle, type LoginLimiter, type LoginThrottleOptions } from "../auth/LoginThrottle.js"
import { type RateLimit, RateLimiter } from "../RateLimiter.js"
import { CancelOnDisconnect, type CancelOnDisconnectService } from "../ws/CancelOnDisconnect.js"
import type { SharedInvalidation } from "./Invalidation.js"

/**
 * The state that the hosts of one service must hold together: the per-user rate limits, the
 * failed-secret throttle, the cancel-on-disconnect counts, and the notices that keep their caches
 * honest. Each concern has two implementations: this host's memory (`localSharedState`, today's
 * code, the one a single host uses) and Redis (`RedisSharedState.ts#makeSharedState`, multi-host
 * mode).
 *
 * The consumers (`App.ts#rateLimitAround`, `auth/AuthService.ts#makeAuth`,
 * `ws/WebSocketEndpoint.ts#attachWebSocket`) read this service with `Effect.serviceOption`: where
 * it is not provided they build today's local objects themselves, so a single host runs exactly
 * as before, at the same speed. Providing `SharedStateRedis` (or `SharedStateLocal`) to the app's
 * layer is the whole switch.
 */
export interface SharedStateService {
  /** The rate limit `name` ("http", "ws"): `limit` per key per window (a minute by default). */
  readonly rateLimit: (name: string, limit: number, windowMs?: number) => RateLimit
  /** The limits of failed client-secret checks, over every path that verifies a secret. */
  readonly loginThrottle: (options?: LoginThrottleOptions) => LoginLimiter
  /**
   * The count of protected sessions, with `cancel` run when a user's last one ends (on any host,
   * or with a host that died), for the scope's lifetime.
   */
  readonly cancelOnDisconnect: (
    cancel: (caller: Caller) => Effect.Effect<void>
  ) => Effect.Effect<CancelOnDisconnectService, never, Scope.Scope>
  /** Notices between hosts: revoked tokens, deactivated accounts, changed reference data. */
  readonly invalidation: SharedInvalidation
}

export class SharedState extends Context.Tag("rfq/host/SharedState")<SharedState, SharedStateService>() {}

/** No other host to tell or hear from. */
const noInvalidation: SharedInvalidation = {
  broadcast: () => Effect.void,
  listen: () => Effect.void
}

/** Today's single-host state: everything in this process's memory. */
export const localSharedState: SharedStateService = {
  rateLimit: (_name, limit, windowMs) => new RateLimiter(limit, windowMs),
  loginThrottle: (options) => new LoginThrottle(options),
  cancelOnDisconnect: (cancel) => Effect.succeed(new CancelOnDisconnect(cancel)),
  invalidation: noInvalidation
}

/** `SharedState` in this process's memory (what a host without it does anyway). */
export const SharedStateLocal: Layer.Layer<SharedState> = Layer.succeed(SharedState, localSharedState)

import { Clock, Effect, Fiber } from "effect"
import { CloseCode } from "./SessionEnvironment.js"

/**
 * The session's two deadlines: no heartbeat for `heartbeatTimeoutMs` closes it with 4000, and its
 * token's expiry with 4001. One fiber watches both; heartbeats only move its deadline later, so
 * it re-reads them on waking. A new token may shorten the session, so adopting one re-arms it.
 */
export interface Watchdog {
  /** A heartbeat was received at `at` (it counts when it arrives, not when its turn comes). */
  readonly heartbeat: (at: number) => void
  /** The session's token now expires at `expiresAt`. */
  readonly expireAt: (expiresAt: number) => Effect.Effect<void>
  /** Whether the token has expired at `now` (the fiber wakes on a timer; a call may arrive first). */
  readonly expired: (now: number) => boolean
  readonly stop: Effect.Effect<void>
}

export const startWatchdog = (
  heartbeatTimeoutMs: number,
  isOpen: () => boolean,
  terminate: (code: number, reason: string) => void
): Effect.Effect<Watchdog> =>
  Effect.gen(function* () {
    let lastHeartbeatAt = yield* Clock.currentTimeMillis
    let expiresAt = Number.POSITIVE_INFINITY

    const watch = Effect.gen(function* () {
      while (isOpen()) {
        const now = yield* Clock.currentTimeMillis
        const heartbeatDeadline = lastHeartbeatAt + heartbeatTimeoutMs
        if (now >= heartbeatDeadline) return terminate(CloseCode.heartbeatTimeout, "heartbeat timeout")
        if (now >= expiresAt) return terminate(CloseCode.tokenExpired, "token expired")
        yield* Effect.sleep(Math.min(heartbeatDeadline, expiresAt) - now)
      }
    })
    let fiber = yield* Effect.forkDaemon(watch)

    return {
      heartbeat: (at) => {
        lastHeartbeatAt = at
      },
      expireAt: (at) =>
        Effect.gen(function* () {
          expiresAt = at
          yield* Fiber.interruptFork(fiber)
          fiber = yield* Effect.forkDaemon(watch)
        }),
      expired: (now) => now >= expiresAt,
      stop: Effect.suspend(() => Fiber.interrupt(fiber))
    } satisfies Watchdog
  })

import type { Caller } from "@rfq/engine"
import { Effect } from "effect"

/**
 * `v1/cancel-on-disconnect`: counts, per user, the open sessions that asked for it. When the last
 * of them ends (closed, timed out, expired or cut off), the user's active quotes are cancelled
 * through the engine, whose quote events then tell the takers.
 *
 * The count is per user, not per desk, so that one desk's second trading session keeps its own
 * protection: a user whose last protected session drops never leaves quotes behind because a
 * colleague is still connected.
 */
export interface CancelOnDisconnectService {
  /** A session of `userId` asked for protection (`caller`: whom to cancel for if its host dies). */
  readonly enable: (userId: number, caller?: Caller) => void
  /** Undoes `enable` without cancelling anything (the client turned it off). */
  readonly disable: (userId: number) => void
  /** A protected session of `caller` ended; cancels when it was the user's last one. */
  readonly release: (caller: Caller) => Effect.Effect<void>
  /** How many protected sessions `userId` has open on this host. */
  readonly count: (userId: number) => number
  /** How many protected sessions `userId` has open on every host (this one's count alone here). */
  readonly total: (userId: number) => Effect.Effect<number, unknown>
}

/**
 * The count of one host (today's): the user's last protected session is the last one here. The
 * count over several hosts is `shared/RedisCancelOnDisconnect.ts`.
 */
export class CancelOnDisconnect implements CancelOnDisconnectService {
  private readonly sessions = new Map<number, number>()

  constructor(private readonly cancel: (caller: Caller) => Effect.Effect<void>) {}

  enable(userId: number, _caller?: Caller): void {
    this.sessions.set(userId, (this.sessions.get(userId) ?? 0) + 1)
  }

  /** Undoes `enable` without cancelling anything (the client turned it off). */
  disable(userId: number): void {
    const count = (this.sessions.get(userId) ?? 0) - 1
    if (count > 0) this.sessions.set(userId, count)
    else this.sessions.delete(userId)
  }

  /** A protected session of `caller` ended; cancels when it was the user's last one. */
  release(caller: Caller): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.disable(caller.userId)
      return this.sessions.has(caller.userId) ? Effect.void : this.cancel(caller)
    })
  }

  /** How many protected sessions `userId` has open. */
  count(userId: number): number {
    return this.sessions.get(userId) ?? 0
  }

  total(userId: number): Effect.Effect<number> {
    return Effect.sync(() => this.count(userId))
  }
}

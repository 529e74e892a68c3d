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
export class CancelOnDisconnect {
  private readonly sessions = new Map<number, number>()

  constructor(private readonly cancel: (caller: Caller) => Effect.Effect<void>) {}

  enable(userId: number): void {
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
}

import { Effect } from "effect"

/**
 * An RFQ actor's mailbox: runs one body at a time, the others waiting. The same rules as Effect's
 * `Semaphore` with one permit, which it replaces for memory: Effect's holds eight closures, an
 * `Effect` and a `Set` of its own (818 bytes measured, a quarter of an open RFQ's 3 KB, issue 15);
 * this one is two fields, its wait list made when someone first waits.
 *
 * - The wait is interruptible, the hold is not cut short: a body's fiber interrupted while it
 *   waits leaves the list; once it holds the mailbox, the mailbox is given back however the body
 *   ends (success, failure, defect, interruption).
 * - The mailbox is claimed by the waiting fiber itself, in the same uninterrupted run as its next
 *   step (as `Semaphore.take` does): a hand-over to a fiber interrupted before it runs could
 *   otherwise leave the mailbox held by nobody.
 * - A release wakes every waiter and each tries again; the first to run holds it, the others wait
 *   again. An RFQ has a few commands waiting at most, so this costs little and no wake-up is ever
 *   lost to a waiter interrupted after it was woken.
 */
export class Mailbox {
  private held = false
  private waiters: Set<() => void> | undefined = undefined

  /** Whether a body holds the mailbox now (for tests). */
  get busy(): boolean {
    return this.held
  }

  /** Runs `body` once no other body of this mailbox runs, and none other until it ends. */
  run<A, E, R>(body: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(restore(this.take()), () => Effect.ensuring(restore(body), this.release()))
    )
  }

  private take(): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (!this.held) {
        this.held = true
        return Effect.void
      }
      return Effect.async<void>((resume) => {
        const wake = () => {
          this.leave(wake)
          resume(this.take())
        }
        this.waiters ??= new Set()
        this.waiters.add(wake)
        // Interrupted while waiting: off the list.
        return Effect.sync(() => this.leave(wake))
      })
    })
  }

  private release(): Effect.Effect<void> {
    return Effect.sync(() => {
      this.held = false
      const waiters = this.waiters
      if (waiters !== undefined) for (const wake of [...waiters]) wake()
    })
  }

  /** Off the wait list; an empty list is dropped (an RFQ waits rarely and lives long). */
  private leave(wake: () => void): void {
    if (this.waiters === undefined) return
    this.waiters.delete(wake)
    if (this.waiters.size === 0) this.waiters = undefined
  }
}

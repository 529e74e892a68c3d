import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { waitSpan } from "../services/WaitProbe.js"
import { deadlineError } from "./StatementDeadline.js"

/** The wait for the permit, as a span under a wait profile only (free otherwise). */
const permitSpan = waitSpan("db.permit")

/**
 * The one permit of a single-session database (PGlite), handed out first come, first served, with
 * a deadline on the wait. Plain callbacks rather than an Effect semaphore under a timeout: a
 * permit granted at the very moment the timeout fires must never be lost (one lost permit and the
 * database is locked for good), and here a wait ends exactly once, granted or withdrawn.
 */
export class PermitQueue {
  private held = false
  private readonly waiters: Array<{ grant: (() => void) | undefined }> = []

  /** Waits for the permit; `grant` runs once it is ours. Returns the withdrawal: false if already granted. */
  request(grant: () => void): () => boolean {
    if (!this.held) {
      this.held = true
      grant()
      return () => false
    }
    const waiter = { grant: grant as (() => void) | undefined }
    this.waiters.push(waiter)
    return () => {
      if (waiter.grant === undefined) return false
      waiter.grant = undefined
      return true
    }
  }

  /** Hands the permit to the next waiter still waiting, or frees it. */
  release(): void {
    for (;;) {
      const next = this.waiters.shift()
      if (next === undefined) {
        this.held = false
        return
      }
      const grant = next.grant
      if (grant === undefined) continue
      next.grant = undefined
      grant()
      return
    }
  }

  /** Waiters still waiting (withdrawn ones are skipped lazily). */
  get waiting(): number {
    return this.waiters.filter((w) => w.grant !== undefined).length
  }

  /**
   * Takes the permit, failing with a deadline error after `deadlineMs` (no limit when undefined).
   * Interrupted after the grant, it gives the permit back: the caller never received it.
   */
  take(deadlineMs: number | undefined): Effect.Effect<void, SqlError> {
    return permitSpan(this.wait(deadlineMs))
  }

  private wait(deadlineMs: number | undefined): Effect.Effect<void, SqlError> {
    return Effect.async<void, SqlError>((resume) => {
      let granted = false
      let timer: ReturnType<typeof setTimeout> | undefined
      const withdraw = this.request(() => {
        granted = true
        if (timer !== undefined) clearTimeout(timer)
        resume(Effect.void)
      })
      if (!granted && deadlineMs !== undefined) {
        timer = setTimeout(() => {
          if (withdraw()) resume(Effect.fail(deadlineError(deadlineMs, "connect")))
        }, deadlineMs)
      }
      return Effect.sync(() => {
        if (timer !== undefined) clearTimeout(timer)
        if (!withdraw() && granted) this.release()
      })
    })
  }

  /** Runs `effect` holding the permit (waiting at most `deadlineMs` for it). */
  withPermit(deadlineMs: number | undefined) {
    return <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
      Effect.acquireUseRelease(
        this.take(deadlineMs),
        () => effect,
        () => Effect.sync(() => this.release())
      )
  }
}

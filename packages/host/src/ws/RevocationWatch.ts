import { Duration, Effect } from "effect"
import type { AuthService } from "../auth/AuthService.js"
import type { Session } from "./SessionEnvironment.js"

/** How often open sessions are checked against the database by default. */
export const DEFAULT_REVOCATION_CHECK_MS = 1_000

export interface RevocationWatchOptions {
  /** The open sessions at this moment. */
  readonly sessions: () => Iterable<Session>
  readonly auth: Pick<AuthService, "recheckStanding">
  readonly intervalMs: number
}

/**
 * Ends open sessions whose token no longer stands, even idle ones: every `intervalMs` the
 * standing of every authenticated session is read from the database in a few queries (however
 * many sessions) and each refused one is closed with 4003. This is what reaches a change made
 * by another process (`npm run admin -- client deactivate`), which the host hears of only through
 * the database; a change made here (a refresh-token replay) is refused by the next call at once.
 *
 * The read also refreshes the status cache, so a session's calls and REST see the change no later
 * than this check. A check that fails or takes longer than a few intervals (the database is down
 * or stalled) is logged and skipped; the sessions' calls meet the database's own answer then.
 */
export const watchRevocations = (options: RevocationWatchOptions): Effect.Effect<never> => {
  const round = Effect.gen(function* () {
    const open = [...options.sessions()].flatMap((session) => {
      const caller = session.caller()
      return caller === undefined ? [] : [{ session, caller }]
    })
    if (open.length === 0) return
    const refusals = yield* options.auth.recheckStanding(open.map((o) => o.caller))
    open.forEach(({ session, caller }, i) => {
      const refusal = refusals[i]
      // A session that re-authenticated meanwhile is judged at its next check.
      if (refusal !== undefined && session.caller() === caller) session.revoke(refusal)
    })
  }).pipe(
    Effect.timeout(Duration.millis(Math.max(2_000, 3 * options.intervalMs))),
    Effect.catchAllCause((cause) => Effect.logWarning("session revocation check failed", cause))
  )
  return Effect.forever(Effect.zipRight(Effect.sleep(Duration.millis(options.intervalMs)), round))
}

import { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, FiberRef, Option } from "effect"

/**
 * Every statement has a deadline: a database that stops answering (its backends stopped, a network
 * that drops packets without resetting the connection) must cost a request a bounded wait and a
 * 503, not an answer that never comes. Both clients enforce it themselves, with a timer inside the
 * statement, so the bound holds in uninterruptible regions too (`withTransaction` commits and
 * rolls back uninterruptibly).
 *
 * The default comes from the client's configuration (`DATABASE_QUERY_TIMEOUT_MS`); work that is
 * slow by nature (migrations at start) widens it for its own fiber with `withStatementDeadline`.
 *
 * A request may run several statements, and may first wait for an RFQ's mailbox held by a command
 * that is itself waiting on the database. So a request marked with `withRequestBudget` gets one
 * budget for all of it: the statement deadline plus `REQUEST_SLACK_MS` from its start, and each
 * statement only what is left of it. A command that waited for the mailbox behind a stalled one
 * then fails when the budget runs out instead of waiting a whole deadline of its own, so however
 * many commands queue on one RFQ, each is answered within the budget of its own start.
 */

/** The default deadline of one statement, when the client is not configured otherwise. */
export const DEFAULT_STATEMENT_DEADLINE_MS = 3000

/** What a request may spend beyond one statement deadline (waiting for a mailbox, a second statement). */
export const REQUEST_SLACK_MS = 1000

/** When the current request started (epoch ms), if the fiber serves one. */
export const requestStartedAt: FiberRef.FiberRef<Option.Option<number>> = FiberRef.unsafeMake(Option.none())

/** Runs `effect` as one request: its statements share a budget from now (see above). */
export const withRequestBudget = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => Effect.locally(effect, requestStartedAt, Option.some(Date.now())))

/** A deadline for statements run by the current fiber, overriding the client's own. */
export const statementDeadlineOverride: FiberRef.FiberRef<Option.Option<Duration.Duration>> =
  FiberRef.unsafeMake(Option.none())

/** Runs `effect` with every statement it sends given `deadline` instead of the client's default. */
export const withStatementDeadline =
  (deadline: Duration.DurationInput) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.locally(effect, statementDeadlineOverride, Option.some(Duration.decode(deadline)))

/**
 * The deadline in milliseconds for a statement of the current fiber, given the client's default:
 * the override or the default, cut to what is left of the request's budget (0: nothing is left).
 */
export const statementDeadlineMs = (defaultMs: number): Effect.Effect<number> =>
  Effect.zipWith(
    FiberRef.get(statementDeadlineOverride),
    FiberRef.get(requestStartedAt),
    (override, started) => {
      const own = Option.match(override, { onNone: () => defaultMs, onSome: Duration.toMillis })
      if (Option.isNone(started)) return own
      const left = started.value + defaultMs + REQUEST_SLACK_MS - Date.now()
      return Math.max(0, Math.min(own, left))
    }
  )

/**
 * The cause of a statement that passed its deadline. `code` is `ETIMEDOUT`, the code Node gives a
 * socket that timed out, so the host answers it like every other unreachable database: 503
 * `database is not reachable` (see the host's `isDatabaseUnreachable`).
 */
export class StatementDeadlineExceeded extends Error {
  readonly code = "ETIMEDOUT"
  constructor(
    readonly deadlineMs: number,
    readonly stage: "connect" | "statement" | "fence"
  ) {
    super(`the database did not answer within ${deadlineMs} ms (${stage})`)
    this.name = "StatementDeadlineExceeded"
  }
}

export const deadlineError = (deadlineMs: number, stage: StatementDeadlineExceeded["stage"]): SqlError =>
  new SqlError({
    cause: new StatementDeadlineExceeded(deadlineMs, stage),
    message: `statement deadline of ${deadlineMs} ms exceeded`
  })

/** Whether `error` (or an error it was caused by) is a statement that passed its deadline. */
export const isDeadlineExceeded = (error: unknown): boolean => {
  for (let e: unknown = error, depth = 0; e !== null && typeof e === "object" && depth < 8; depth++) {
    if (e instanceof StatementDeadlineExceeded) return true
    e = (e as { cause?: unknown }).cause
  }
  return false
}

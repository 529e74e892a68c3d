import { SqlError } from "@effect/sql/SqlError"
import { isDatabaseUnreachable, StatementDeadlineExceeded } from "@rfq/engine"
import { Cause, FiberId } from "effect"
import { describe, expect, it } from "vitest"

/**
 * Regression of the outage run: with PostgreSQL stopped every request was answered 500
 * `internal server error`; the contract wants 503 and the standard body, as `/readyz` says.
 * The host tells an unreachable database from a bug by the error chain.
 */
const pgError = (message: string, code: string) => Object.assign(new Error(message), { code })
const sqlDefect = (cause: unknown) =>
  Cause.die(new SqlError({ cause, message: "Failed to execute statement" }))

describe("isDatabaseUnreachable", () => {
  it.each([
    ["connection refused", sqlDefect(pgError("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"))],
    [
      "server shut down (57P01)",
      sqlDefect(pgError("terminating connection due to administrator command", "57P01"))
    ],
    ["connection cut", sqlDefect(new Error("Connection terminated unexpectedly"))],
    ["connection exception class 08", sqlDefect(pgError("connection failure", "08006"))],
    // Issue 12: a database that hangs rather than refuses.
    ["a statement past its deadline", sqlDefect(new StatementDeadlineExceeded(3000, "statement"))],
    [
      "a pool that could not hand out a connection in time",
      sqlDefect(new Error("timeout exceeded when trying to connect"))
    ]
  ])("%s is an outage", (_name, cause) => {
    expect(isDatabaseUnreachable(cause)).toBe(true)
  })

  it.each([
    ["a syntax error", sqlDefect(pgError("syntax error at or near", "42601"))],
    ["a unique violation", sqlDefect(pgError("duplicate key value", "23505"))],
    ["a plain bug", Cause.die(new TypeError("x is undefined"))],
    ["an interruption", Cause.interrupt(FiberId.none)]
  ])("%s is not", (_name, cause) => {
    expect(isDatabaseUnreachable(cause)).toBe(false)
  })
})

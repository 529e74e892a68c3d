import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Option } from "effect"
import { StorageConstraints } from "./Migrations.js"

/**
 * Both clients fail with a `SqlError` whose `cause` is the server's error message object
 * (node-postgres and PGlite share pg-protocol's `DatabaseError`): SQLSTATE in `code`, the
 * violated constraint in `constraint`.
 */
interface DatabaseErrorFields {
  readonly code?: unknown
  readonly constraint?: unknown
}

const fieldsOf = (error: SqlError): DatabaseErrorFields =>
  typeof error.cause === "object" && error.cause !== null ? (error.cause as DatabaseErrorFields) : {}

export const sqlState = (error: SqlError): Option.Option<string> => {
  const code = fieldsOf(error).code
  return typeof code === "string" ? Option.some(code) : Option.none()
}

/** The name of the unique constraint or index the statement violated (SQLSTATE 23505), if any. */
export const uniqueViolation = (error: SqlError): Option.Option<string> => {
  const { code, constraint } = fieldsOf(error)
  return code === "23505" && typeof constraint === "string" ? Option.some(constraint) : Option.none()
}

export const isUniqueViolation = (error: SqlError, constraint: string): boolean =>
  Option.contains(uniqueViolation(error), constraint)

/**
 * The statement put a label on an active quote of a desk that another of the desk's active quotes
 * holds (`quotes_maker_active_label_key`): refused by the index, so nothing of it was written. The
 * index decides between RFQs quoting on different hosts at the same time.
 */
export const isLabelTaken = (error: SqlError): boolean =>
  isUniqueViolation(error, StorageConstraints.activeQuoteLabelPerMaker)

/**
 * The statement inserted an RFQ under a (user, request id) an RFQ already holds
 * (`rfqs_user_request_key`): two creates of one request raced, on different hosts.
 */
export const isRequestIdTaken = (error: SqlError): boolean =>
  isUniqueViolation(error, StorageConstraints.rfqRequestIdPerUser)

/**
 * The statement wrote an RFQ's event under a sequence number already written
 * (`rfq_events_rfq_seq_key`): another owner stepped the RFQ first.
 */
export const isEventSeqTaken = (error: SqlError): boolean =>
  isUniqueViolation(error, StorageConstraints.rfqEventSeq)

// Node's socket errors and PostgreSQL's connection-exception class (08xxx) and shutdown codes.
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "57P01",
  "57P02",
  "57P03"
])
const UNREACHABLE_MESSAGE =
  /ECONNREFUSED|Connection terminated|connection timeout|timeout exceeded when trying to connect|terminating connection|the database system is (shutting down|starting up)/i

/**
 * Whether a failure comes from the database being unreachable (PostgreSQL stopped, restarting, or
 * its connections cut, or a statement past its deadline), as opposed to a bug: the host answers
 * such a call 503 at once, like `/readyz`, and the client may retry. The error chain (`cause`
 * links) of every defect and failure is searched.
 */
/**
 * Whether a failed call's cause is a step refused by its guard (`StaleStep`: its event did not
 * follow the RFQ's last).
 */
export const isStaleStep = (cause: Cause.Cause<unknown>): boolean =>
  Cause.defects(cause).pipe((defects) =>
    [...defects].some((d) => {
      const message = typeof d === "object" && d !== null ? (d as { message?: unknown }).message : undefined
      return typeof message === "string" && message.includes("RfqStore.applyStep: stale step:")
    })
  )

export const isDatabaseUnreachable = (cause: Cause.Cause<unknown>): boolean => {
  const stack: Array<unknown> = [...Cause.defects(cause), ...Cause.failures(cause)]
  const seen = new Set<unknown>()
  while (stack.length > 0) {
    const error = stack.pop()
    if (error === null || typeof error !== "object" || seen.has(error)) continue
    seen.add(error)
    const { code, message } = error as { code?: unknown; message?: unknown }
    if (typeof code === "string" && (UNREACHABLE_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true
    if (typeof message === "string" && UNREACHABLE_MESSAGE.test(message)) return true
    stack.push((error as { cause?: unknown }).cause)
  }
  return false
}

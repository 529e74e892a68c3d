import type { SqlError } from "@effect/sql/SqlError"
import { Option } from "effect"

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

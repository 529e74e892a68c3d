import type { ParseResult } from "effect"
import type { ErrorKey } from "../domain/Errors.js"
import { cutText } from "../domain/TextCut.js"

/**
 * The vocabulary of `reason`s: every schema of the API carries the message a client reads (Decode.ts
 * prefixes it with the field's path), so an error body never shows Effect's internal type syntax.
 */

/**
 * Annotation naming the catalog entry a failure of this schema maps to (default "invalidRequest"):
 * a key, or a function of the offending value.
 */
export const ErrorKeyId: unique symbol = Symbol.for("rfq/api/ErrorKey")
export type ErrorKeyAnnotation = ErrorKey | ((actual: unknown) => ErrorKey | undefined)

export const emptyMessage = "must not be empty"

/** An empty or whitespace-only string: the spec's `empty value`. */
export const isBlank = (u: unknown): boolean => typeof u === "string" && u.trim() === ""

/** `empty value` for a blank string, else `key` (undefined: `invalid request`). */
export const blankIsEmptyValue =
  (key?: ErrorKey) =>
  (actual: unknown): ErrorKey | undefined =>
    isBlank(actual) ? "emptyValue" : key

const maxShownChars = 40

/** A short, safe rendering of a client value: never serialises objects (they may be deeply nested). */
export const showValue = (u: unknown): string => {
  switch (typeof u) {
    case "string":
      return JSON.stringify(cutText(u, maxShownChars))
    case "number":
    case "boolean":
      return String(u)
    case "bigint":
      return `${String(u)}n`
    case "undefined":
      return "nothing"
    case "object":
      return u === null ? "null" : Array.isArray(u) ? "an array" : "an object"
    default:
      return `a ${typeof u}`
  }
}

/** A message used for every failure inside the annotated schema (except a missing key). */
export const wholeMessage = (message: (actual: unknown) => string) => ({
  message: (issue: ParseResult.ParseIssue) => ({ message: message(issue.actual), override: true })
})

/** "must be "a" or "b"" / "must be one of "a", "b", "c"" */
export const mustBeOneOf = (values: ReadonlyArray<string>): string => {
  const quoted = values.map((v) => JSON.stringify(v))
  if (quoted.length <= 2) return `must be ${quoted.join(" or ")}`
  return `must be one of ${quoted.join(", ")}`
}

import { ParseResult, Schema } from "effect"
import type { CredentialsId, RfqId } from "../domain/Primitives.js"
import { emptyMessage, ErrorKeyId, isBlank, showValue, wholeMessage } from "./Messages.js"

/** Integers of paths and query strings. */

const canonicalDigits = /^(0|[1-9][0-9]*)$/

/** Carries the `empty value` key for a parameter sent empty (`?limit=`). */
const blankAst = Schema.String.annotations({ [ErrorKeyId]: "emptyValue" }).ast

/**
 * An integer parameter that arrives either as a string (path segment, query string) or as a JSON
 * number (JSON-RPC params). Strings must be canonical digits: `12abc`, ` 12`, `1e3`, `012`, `-1`
 * are refused. `-0` becomes `0`.
 */
export const integerParam = (range: {
  readonly min: number
  readonly max?: number
  readonly what: string
}) => {
  const max = range.max ?? Number.MAX_SAFE_INTEGER
  return Schema.transformOrFail(
    Schema.Union(Schema.String, Schema.Number).annotations({
      ...wholeMessage((actual) => `expected ${range.what}, got ${showValue(actual)}`),
      jsonSchema: {
        type: "integer",
        minimum: range.min,
        ...(range.max === undefined ? {} : { maximum: max })
      }
    }),
    Schema.Number,
    {
      strict: true,
      decode: (u, _, ast) => {
        if (isBlank(u)) return ParseResult.fail(new ParseResult.Type(blankAst, u, emptyMessage))
        const n = typeof u === "number" ? u : canonicalDigits.test(u) ? Number(u) : Number.NaN
        if (Number.isNaN(n)) {
          return ParseResult.fail(new ParseResult.Type(ast, u, `expected ${range.what}, got ${showValue(u)}`))
        }
        if (!Number.isSafeInteger(n) || n < range.min || n > max) {
          return ParseResult.fail(new ParseResult.Type(ast, u, `must be ${range.what}`))
        }
        return ParseResult.succeed(n + 0)
      },
      encode: ParseResult.succeed
    }
  )
}

export const PositiveIntParam = integerParam({ min: 1, what: "a positive integer" })
export const NonNegativeIntParam = integerParam({ min: 0, what: "a non-negative integer" })
export const TimestampParam = NonNegativeIntParam.annotations({ description: "Unix time in milliseconds." })
export const RfqIdParam = PositiveIntParam.pipe(Schema.brand("RfqId")) satisfies Schema.Schema<
  RfqId,
  string | number
>
export const CredentialsIdParam = PositiveIntParam.pipe(
  Schema.brand("CredentialsId")
) satisfies Schema.Schema<CredentialsId, string | number>
export const LimitParam = integerParam({ min: 1, max: 1000, what: "an integer from 1 to 1000" }).annotations({
  description: "Page size, 1 to 1000 (default 100)."
})

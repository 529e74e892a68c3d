import { BigDecimal, Option, ParseResult, Schema } from "effect"
import type { ErrorKey } from "../domain/Errors.js"
import {
  BaseCurrency,
  type CredentialsId,
  Direction,
  type MakerId,
  QuoteCurrency,
  type QuoteId,
  Role,
  type RfqId,
  SettlementOption
} from "../domain/Primitives.js"

/**
 * Field building blocks shared by the request and response schemas. Every leaf carries the message
 * a client reads in `reason` (Decode.ts prefixes it with the field's path), so a schema never leaks
 * Effect's internal type syntax into an error body.
 */

/** Annotation naming the catalog entry a failure of this schema maps to (default "invalidRequest"). */
export const ErrorKeyId: unique symbol = Symbol.for("rfq/api/ErrorKey")

const maxShownChars = 40

/** A short, safe rendering of a client value: never serialises objects (they may be deeply nested). */
export const showValue = (u: unknown): string => {
  switch (typeof u) {
    case "string":
      return JSON.stringify(u.length > maxShownChars ? `${u.slice(0, maxShownChars)}…` : u)
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
const wholeMessage = (message: (actual: unknown) => string) => ({
  message: (issue: ParseResult.ParseIssue) => ({ message: message(issue.actual), override: true })
})

/** "must be "a" or "b"" / "must be one of "a", "b", "c"" */
export const mustBeOneOf = (values: ReadonlyArray<string>): string => {
  const quoted = values.map((v) => JSON.stringify(v))
  if (quoted.length <= 2) return `must be ${quoted.join(" or ")}`
  return `must be one of ${quoted.join(", ")}`
}

/** A literal union with a readable message; `key` picks a catalog entry other than "invalid request". */
export const literalField = <const L extends readonly [string, ...Array<string>]>(
  schema: Schema.Literal<L>,
  key?: ErrorKey
): Schema.Literal<L> =>
  schema.annotations({
    ...wholeMessage(() => mustBeOneOf(schema.literals)),
    ...(key === undefined ? {} : { [ErrorKeyId]: key })
  })

export const DirectionField = literalField(Direction).annotations({
  description: "`buy` or `sell`."
})
export const SettlementOptionField = literalField(SettlementOption).annotations({
  description: "Settlement option (venue): `BULL` or `DBT`."
})
export const BaseCurrencyField = literalField(BaseCurrency).annotations({
  description: "Base currency: `BTC` or `ETH`."
})
export const QuoteCurrencyField = literalField(QuoteCurrency).annotations({
  description: "Quote currency: the base currency (inverse contracts) or `USDC` (linear contracts)."
})
export const RoleField = literalField(Role).annotations({ description: "`taker` or `maker`." })
/** An unknown venue code is the spec's `exchange not found`. */
export const ExchangeCodeField = literalField(SettlementOption, "exchangeNotFound").annotations({
  description: "Exchange short code: `BULL` or `DBT`."
})

const emptyFailure = { message: () => "must not be empty", [ErrorKeyId]: "emptyValue" as ErrorKey }

/**
 * A required (or present optional) string: not empty, not blank, at most `max` characters. An empty
 * or blank value is the spec's `empty value`; the value is kept as sent (no trimming).
 */
export const textField = (max: number) =>
  Schema.String.annotations({ message: (issue) => `expected a string, got ${showValue(issue.actual)}` }).pipe(
    Schema.minLength(1, emptyFailure),
    Schema.pattern(/\S/, emptyFailure),
    Schema.maxLength(max, { message: () => `must be at most ${max} characters` })
  )

/** Instrument names are parsed by the engine; here only their presence and size are checked. */
export const InstrumentNameField = textField(64).annotations({
  description: "Venue-neutral instrument name, e.g. `BTC-27DEC30-100000-C`, `BTC-27DEC30`, `BTC-PERPETUAL`."
})
export const LabelField = textField(64).annotations({ description: "Client-provided label." })
export const MakerIdField = textField(64)
  .pipe(Schema.brand("MakerId"))
  .annotations({ description: "Maker id as listed by `GET /exchange/maker`." }) satisfies Schema.Schema<
  MakerId,
  string
>

export const BooleanField = Schema.Boolean.annotations({
  message: (issue) => `expected a boolean, got ${showValue(issue.actual)}`
})

// ---- numbers of JSON bodies --------------------------------------------------------------------

const jsonNumber = Schema.Number.annotations({
  message: (issue) => `expected a number, got ${showValue(issue.actual)}`
}).pipe(Schema.finite({ message: () => "must be a finite number" }))

/** Decimal places of a finite number as written in its shortest representation (exact). */
export const decimalPlaces = (n: number): number =>
  Option.match(BigDecimal.safeFromNumber(n), {
    onNone: () => Number.POSITIVE_INFINITY,
    onSome: (d) => Math.max(0, BigDecimal.normalize(d).scale)
  })

/**
 * number → BigDecimal without float arithmetic: the shortest decimal representation of the number
 * (what `JSON.parse` read) is converted digit by digit, so `0.1` stays exactly 0.1.
 */
export const toDecimal = (from: Schema.Schema<number, number>) =>
  Schema.transformOrFail(from, Schema.BigDecimalFromSelf, {
    strict: true,
    decode: (n, _, ast) =>
      Option.match(BigDecimal.safeFromNumber(n), {
        onNone: () => ParseResult.fail(new ParseResult.Type(ast, n, "must be a finite number")),
        onSome: ParseResult.succeed
      }),
    // The only place a decimal becomes a float again: the JSON edge.
    encode: (d) => ParseResult.succeed(BigDecimal.unsafeToNumber(d))
  })

/** Any finite decimal (structure prices may be negative: a credit). */
export const DecimalField = toDecimal(jsonNumber)

/** > 0: amounts, hedge prices. */
export const PositiveDecimalField = toDecimal(
  jsonNumber.pipe(Schema.greaterThan(0, { message: () => "must be greater than 0" }))
)

/**
 * Leg prices: any finite decimal here; the sign rule needs the instrument name and is checked on
 * the leg object (`legPriceIssue`).
 */
export const LegPriceField = DecimalField.annotations({
  description: "Price of the leg in the RFQ's quote currency; negative only for a future spread."
})

/** Leg ratios: > 0 with at most 2 decimal places (the spec's `failed to convert ratio to int`). */
export const RatioField = toDecimal(
  jsonNumber.pipe(
    Schema.greaterThan(0, { message: () => "must be greater than 0" }),
    Schema.filter((n) => decimalPlaces(n) <= 2, {
      message: () => "must have at most 2 decimal places",
      [ErrorKeyId]: "failedToConvertRatio",
      jsonSchema: { multipleOf: 0.01 }
    })
  )
).annotations({ description: "Ratio of the leg: greater than 0, at most 2 decimal places." })

/** A settlement split share: 0 < percentage ≤ 100. */
export const PercentageField = toDecimal(
  jsonNumber.pipe(
    Schema.greaterThan(0, { message: () => "must be greater than 0" }),
    Schema.lessThanOrEqualTo(100, { message: () => "must be at most 100" })
  )
).annotations({ description: "Share of the trade for this account, in percent (0 < p ≤ 100)." })

/**
 * Future spreads are the only instruments whose price can be negative. The naming scheme
 * (`BTC-FS-27DEC30_PERP`) is the contract's; the engine validates the full name later.
 */
export const isFutureSpreadName = (instrumentName: string): boolean => instrumentName.split("-")[1] === "FS"

/** The price-sign rule of a leg, as a filter issue (or undefined when the price is fine). */
export const legPriceIssue = (leg: {
  readonly instrumentName: string
  readonly price?: BigDecimal.BigDecimal | undefined
}): { readonly path: ReadonlyArray<PropertyKey>; readonly message: string } | undefined =>
  leg.price !== undefined && BigDecimal.isNegative(leg.price) && !isFutureSpreadName(leg.instrumentName)
    ? { path: ["price"], message: "must not be negative (only a future spread can be priced below 0)" }
    : undefined

// ---- integers of JSON bodies -------------------------------------------------------------------

const positiveIntMessage = "must be a positive integer"
const jsonPositiveInt = Schema.Number.annotations({
  message: (issue) => `expected a positive integer, got ${showValue(issue.actual)}`
}).pipe(
  Schema.int({ message: () => positiveIntMessage }),
  Schema.positive({ message: () => positiveIntMessage })
)

/** Ids in JSON bodies: JSON integers only (a numeric string is refused), 1 … 2^53 − 1. */
export const RfqIdField = jsonPositiveInt.pipe(Schema.brand("RfqId")) satisfies Schema.Schema<RfqId, number>
export const QuoteIdField = jsonPositiveInt.pipe(Schema.brand("QuoteId")) satisfies Schema.Schema<
  QuoteId,
  number
>
export const CredentialsIdField = jsonPositiveInt.pipe(Schema.brand("CredentialsId")) satisfies Schema.Schema<
  CredentialsId,
  number
>
export const PositiveIntField = jsonPositiveInt

/** Unix milliseconds in a JSON body. */
export const TimestampField = Schema.Number.annotations({
  message: (issue) => `expected a timestamp in milliseconds, got ${showValue(issue.actual)}`
})
  .pipe(
    Schema.int({ message: () => "must be a non-negative integer" }),
    Schema.nonNegative({ message: () => "must be a non-negative integer" })
  )
  .annotations({ description: "Unix time in milliseconds." })

// ---- integers of paths and query strings -------------------------------------------------------

const canonicalDigits = /^(0|[1-9][0-9]*)$/

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

// ---- containers --------------------------------------------------------------------------------

/** An array with readable type and size messages. */
export const arrayOf = <A, I>(
  item: Schema.Schema<A, I>,
  size: { readonly min: number; readonly max: number }
) =>
  Schema.Array(item)
    .annotations({ message: (issue) => `expected an array, got ${showValue(issue.actual)}` })
    .pipe(
      Schema.minItems(size.min, {
        message: () => (size.min === 1 ? "must not be empty" : `must have at least ${size.min} elements`)
      }),
      Schema.maxItems(size.max, { message: () => `must have at most ${size.max} elements` })
    )

/** A JSON object with a readable "expected an object" message. */
export const object = <F extends Schema.Struct.Fields>(fields: F) =>
  Schema.Struct(fields).annotations({
    message: (issue) => `expected an object, got ${showValue(issue.actual)}`
  })

/**
 * Names a schema in the generated document (apply once, on the outermost schema). The `jsonSchema`
 * copy keeps title and description on refined objects, whose own annotations JSONSchema.make skips.
 */
export const named = (identifier: string, description: string) => ({
  identifier,
  title: identifier,
  description,
  jsonSchema: { title: identifier, description }
})

/**
 * A map keyed by settlement option. Unlike request objects, an unknown key here is refused
 * (a typo such as `"dbt"` would otherwise silently drop makers or accounts), and `__proto__` is
 * just an unknown key.
 */
export const settlementOptionMap = <S extends Schema.Schema.Any>(value: S) =>
  Schema.Struct({
    BULL: Schema.optionalWith(value, { exact: true }),
    DBT: Schema.optionalWith(value, { exact: true })
  }).annotations({
    parseOptions: { onExcessProperty: "error" },
    message: (issue) => `expected an object keyed by settlement option, got ${showValue(issue.actual)}`
  })

/** Keys of a settlement-option map that are present. */
export const mapKeys = (map: { readonly BULL?: unknown; readonly DBT?: unknown }): Array<SettlementOption> =>
  (["BULL", "DBT"] as const).filter((k) => map[k] !== undefined)

/** Paths of the elements whose `keyOf` repeats an earlier element's. */
export const duplicateIssues = <A>(
  items: ReadonlyArray<A>,
  keyOf: (a: A) => string,
  field: string
): Array<{ readonly path: ReadonlyArray<PropertyKey>; readonly message: string }> => {
  const seen = new Map<string, number>()
  const issues: Array<{ readonly path: ReadonlyArray<PropertyKey>; readonly message: string }> = []
  items.forEach((item, i) => {
    const key = keyOf(item)
    const first = seen.get(key)
    if (first === undefined) seen.set(key, i)
    else issues.push({ path: field === "" ? [i] : [i, field], message: `duplicates element ${first}` })
  })
  return issues
}

export const optional = <S extends Schema.Schema.Any>(schema: S) =>
  Schema.optionalWith(schema, { exact: true })

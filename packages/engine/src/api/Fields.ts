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
import {
  blankIsEmptyValue,
  emptyMessage,
  ErrorKeyId,
  isBlank,
  mustBeOneOf,
  showValue,
  wholeMessage
} from "./Messages.js"
import { textIssue } from "./StorableText.js"

/** Leaf fields of JSON bodies: literals, strings, booleans, decimals, ids, timestamps. */

/**
 * A literal union with a readable message. A blank string is the spec's `empty value`; any other
 * wrong value is `key` (default `invalid request`).
 */
export const literalField = <const L extends readonly [string, ...Array<string>]>(
  schema: Schema.Literal<L>,
  key?: ErrorKey
): Schema.Literal<L> =>
  schema.annotations({
    ...wholeMessage((actual) => (isBlank(actual) ? emptyMessage : mustBeOneOf(schema.literals))),
    [ErrorKeyId]: blankIsEmptyValue(key)
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

const emptyFailure = { message: () => emptyMessage, [ErrorKeyId]: "emptyValue" as ErrorKey }

/**
 * A required (or present optional) string: not empty, not blank, at most `max` characters, no
 * text the service refuses to store (U+0000, lone surrogates, control characters: `textIssue`).
 * An empty or blank value is the spec's `empty value`; the value is kept as sent (no trimming).
 */
export const textField = (max: number) =>
  Schema.String.annotations({ message: (issue) => `expected a string, got ${showValue(issue.actual)}` }).pipe(
    Schema.minLength(1, emptyFailure),
    Schema.pattern(/\S/, emptyFailure),
    Schema.maxLength(max, { message: () => `must be at most ${max} characters` }),
    Schema.filter((text) => textIssue(text))
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

/**
 * A settlement split share: 0 < percentage ≤ 100. The range is checked by the account list
 * (`SettlementAccountsInput`) with the other split rules, so that every violation is reported: a
 * field check here would stop the list's rules from running.
 */
export const PercentageField = toDecimal(
  jsonNumber.annotations({ jsonSchema: { exclusiveMinimum: 0, maximum: 100 } })
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

/** Unix milliseconds in a JSON body. */
export const TimestampField = Schema.Number.annotations({
  message: (issue) => `expected a timestamp in milliseconds, got ${showValue(issue.actual)}`
})
  .pipe(
    Schema.int({ message: () => "must be a non-negative integer" }),
    Schema.nonNegative({ message: () => "must be a non-negative integer" })
  )
  .annotations({ description: "Unix time in milliseconds." })

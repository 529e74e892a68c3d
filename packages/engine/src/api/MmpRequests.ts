import { Schema } from "effect"
import { MAX_FROZEN_MS, MAX_INTERVAL_MS } from "../mmp/MmpRules.js"
import { BaseCurrencyField, decimalPlaces, toDecimal } from "./Fields.js"
import { showValue } from "./Messages.js"
import { named, object, optional } from "./Objects.js"

/** Request schemas of market-maker protection (docs/api.md, "Market-maker protection"). */

/** Decimal places a limit may carry (amounts and deltas are kept exactly to this). */
export const MMP_LIMIT_DECIMALS = 8
/** The largest limit accepted (beyond it a limit protects nothing). */
export const MMP_MAX_LIMIT = 1_000_000_000
export const MMP_MAX_TRADE_COUNT = 1_000_000

/** A JSON integer in `min … max` (a numeric string is refused), with the range in the message. */
const integerIn = (min: number, max: number) => {
  const message = `must be an integer from ${min} to ${max}`
  return Schema.Number.annotations({
    message: (issue) => `expected an integer, got ${showValue(issue.actual)}`
  }).pipe(Schema.int({ message: () => message }), Schema.between(min, max, { message: () => message }))
}

/** A limit: > 0, at most `MMP_MAX_LIMIT`, at most 8 decimal places, read exactly. */
const LimitField = toDecimal(
  Schema.Number.annotations({ message: (issue) => `expected a number, got ${showValue(issue.actual)}` }).pipe(
    Schema.finite({ message: () => "must be a finite number" }),
    Schema.greaterThan(0, { message: () => "must be greater than 0" }),
    Schema.lessThanOrEqualTo(MMP_MAX_LIMIT, { message: () => `must be at most ${MMP_MAX_LIMIT}` }),
    Schema.filter((n) => decimalPlaces(n) <= MMP_LIMIT_DECIMALS, {
      message: () => `must have at most ${MMP_LIMIT_DECIMALS} decimal places`
    })
  )
)

const atLeastOneLimit = (c: {
  readonly amountLimit?: unknown
  readonly deltaLimit?: unknown
  readonly tradeCountLimit?: unknown
}) =>
  c.amountLimit !== undefined || c.deltaLimit !== undefined || c.tradeCountLimit !== undefined
    ? undefined
    : "at least one of amountLimit, deltaLimit, tradeCountLimit is required"

export const MmpConfigRequest = object({
  baseCurrency: BaseCurrencyField,
  intervalMs: integerIn(1, MAX_INTERVAL_MS).annotations({
    description: "The rolling window in ms (1 … 86400000): a fill counts while less than this has passed."
  }),
  frozenMs: integerIn(0, MAX_FROZEN_MS).annotations({
    description: "How long a trip freezes the desk in ms (0 … 86400000); 0: until `POST /mmp/reset`."
  }),
  amountLimit: optional(
    LimitField.annotations({ description: "Trips when the traded amounts in the window reach it." })
  ),
  deltaLimit: optional(
    LimitField.annotations({
      description: "Trips when the absolute deltas of the fills in the window reach it (base currency)."
    })
  ),
  tradeCountLimit: optional(
    integerIn(1, MMP_MAX_TRADE_COUNT).annotations({
      description: "Trips when the number of fills in the window reaches it."
    })
  )
})
  .pipe(Schema.filter(atLeastOneLimit))
  .annotations(named("MmpConfigRequest", "Body of `PUT /mmp/config`: one base currency's protection."))
export type MmpConfigRequest = typeof MmpConfigRequest.Type

export const MmpCurrencyRequest = object({
  baseCurrency: BaseCurrencyField
}).annotations(
  named("MmpCurrencyRequest", "`DELETE /mmp/config?baseCurrency=` and the body of `POST /mmp/reset`.")
)
export type MmpCurrencyRequest = typeof MmpCurrencyRequest.Type

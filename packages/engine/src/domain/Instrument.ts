import { BigDecimal, Either, ParseResult, Schema } from "effect"
import { type ApiError, apiError, catalog, type ErrorKey } from "./Errors.js"
import { BaseCurrency } from "./Primitives.js"
import { safePrefix } from "./TextCut.js"

/**
 * Venue-neutral instrument names (docs/instruments.md has the grammar):
 *   option        BTC-27DEC30-100000-C      future  BTC-27DEC30
 *   perpetual     BTC-PERPETUAL             spread  BTC-FS-27DEC30_PERP, BTC-FS-27DEC30_28MAR31
 * Every instrument has exactly one name: the parser accepts only the canonical spelling that
 * `formatInstrument` produces (no leading zero on the day, no redundant zeros in the strike), so a
 * name can be compared as a string and `parse ∘ format` / `format ∘ parse` are identities.
 *
 * Over 300 lines on purpose: the grammar of every instrument kind, with its parser and formatter
 * side by side so that parse ∘ format stays an identity.
 */

export const EXPIRY_MONTHS = [
  "JAN",
  "FEB",
  "MAR",
  "APR",
  "MAY",
  "JUN",
  "JUL",
  "AUG",
  "SEP",
  "OCT",
  "NOV",
  "DEC"
] as const

/** Two-digit years map to 2000–2099. */
export const MIN_EXPIRY_YEAR = 2000
export const MAX_EXPIRY_YEAR = 2099
/** Strikes: at most this many digits before and after the decimal point. */
export const MAX_STRIKE_INTEGER_DIGITS = 12
export const MAX_STRIKE_DECIMALS = 8
/** Longer inputs are rejected before any other work (and never echoed whole in a reason). */
export const MAX_INSTRUMENT_NAME_LENGTH = 64
/** Crypto venues settle expiring contracts at 08:00 UTC on the expiry date. */
export const EXPIRY_HOUR_UTC = 8

const daysInMonth = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate()

const isCalendarDate = (e: { year: number; month: number; day: number }): boolean =>
  e.day >= 1 && e.day <= daysInMonth(e.year, e.month)

export const Expiry = Schema.Struct({
  year: Schema.Int.pipe(Schema.between(MIN_EXPIRY_YEAR, MAX_EXPIRY_YEAR)),
  month: Schema.Int.pipe(Schema.between(1, 12)),
  day: Schema.Int.pipe(Schema.between(1, 31))
}).pipe(Schema.filter((e) => isCalendarDate(e) || "not a calendar date"))
export type Expiry = typeof Expiry.Type

const strikeIsValid = (strike: BigDecimal.BigDecimal): boolean => {
  if (!BigDecimal.isPositive(strike)) return false
  const n = BigDecimal.normalize(strike)
  return (
    n.scale <= MAX_STRIKE_DECIMALS &&
    formatDecimal(BigDecimal.truncate(n)).length <= MAX_STRIKE_INTEGER_DIGITS
  )
}

export const Strike = Schema.BigDecimalFromSelf.pipe(
  Schema.filter((s) => strikeIsValid(s) || "a positive decimal with at most 12 integer and 8 decimal digits")
)

export const OptionType = Schema.Literal("call", "put")
export type OptionType = typeof OptionType.Type

export const OptionInstrument = Schema.Struct({
  kind: Schema.Literal("option"),
  base: BaseCurrency,
  expiry: Expiry,
  strike: Strike,
  optionType: OptionType
})
export const FutureInstrument = Schema.Struct({
  kind: Schema.Literal("future"),
  base: BaseCurrency,
  expiry: Expiry
})
export const PerpetualInstrument = Schema.Struct({ kind: Schema.Literal("perpetual"), base: BaseCurrency })
/** Long a future spread = buy the far leg, sell the near leg (the venues' convention). */
export const FutureSpreadInstrument = Schema.Struct({
  kind: Schema.Literal("future_spread"),
  base: BaseCurrency,
  near: Expiry,
  far: Schema.Union(Expiry, Schema.Literal("perpetual"))
}).pipe(Schema.filter((s) => s.far === "perpetual" || compareExpiry(s.near, s.far) < 0 || "near before far"))

export const Instrument = Schema.Union(
  OptionInstrument,
  FutureInstrument,
  PerpetualInstrument,
  FutureSpreadInstrument
)
export type Instrument = typeof Instrument.Type
export type InstrumentKind = Instrument["kind"]

// ---------------------------------------------------------------------------------------------
// Expiries

export const compareExpiry = (a: Expiry, b: Expiry): number =>
  a.year - b.year || a.month - b.month || a.day - b.day

/** `27DEC30`: day without leading zero, upper-case month, two-digit year. Also the Leg `expiry` form. */
export const formatExpiryCode = (e: Expiry): string =>
  `${e.day}${EXPIRY_MONTHS[e.month - 1]}${String(e.year % 100).padStart(2, "0")}`

/** Parses an expiry code; the Left is a human-readable reason (callers pick the catalog message). */
export const parseExpiryCode = (code: string): Either.Either<Expiry, string> => {
  const m = /^([0-9]{1,2})([A-Za-z]{3})([0-9]{2})$/.exec(code)
  if (m === null) return Either.left(`${show(code)} is not a date of the form DMMMYY such as 27DEC30`)
  const [, dayToken = "", monthToken = "", yearToken = ""] = m
  if (dayToken.startsWith("0")) {
    return Either.left(
      `day ${show(dayToken)} has a leading zero; write ${Number(dayToken)}${monthToken}${yearToken}`
    )
  }
  const month = EXPIRY_MONTHS.indexOf(monthToken as (typeof EXPIRY_MONTHS)[number]) + 1
  if (month === 0) {
    return Either.left(
      EXPIRY_MONTHS.includes(monthToken.toUpperCase() as (typeof EXPIRY_MONTHS)[number])
        ? `month ${show(monthToken)} must be upper case`
        : `${show(monthToken)} is not a month; expected one of ${EXPIRY_MONTHS.join(", ")}`
    )
  }
  const expiry = { year: MIN_EXPIRY_YEAR + Number(yearToken), month, day: Number(dayToken) }
  return isCalendarDate(expiry)
    ? Either.right(expiry)
    : Either.left(`day ${expiry.day} is not a valid day of ${monthToken} ${expiry.year}`)
}

/** Settlement instant of an expiry: 08:00 UTC on that date, unix ms. */
export const expiryTimestamp = (e: Expiry): number => Date.UTC(e.year, e.month - 1, e.day, EXPIRY_HOUR_UTC)

/** The UTC calendar date of an instant, as an expiry (for catalogs built relative to today). */
export const expiryOfDate = (date: Date): Expiry => ({
  year: date.getUTCFullYear(),
  month: date.getUTCMonth() + 1,
  day: date.getUTCDate()
})

/** The first settlement of an instrument; perpetuals have none. */
export const instrumentExpiry = (i: Instrument): Expiry | undefined =>
  i.kind === "perpetual" ? undefined : i.kind === "future_spread" ? i.near : i.expiry

/**
 * The Leg `expiry` field ("day, abbreviated month, two-digit year"): the expiry code, the near
 * expiry for a future spread, and `PERPETUAL` for a perpetual (which never expires).
 */
export const legExpiryField = (i: Instrument): string => {
  const e = instrumentExpiry(i)
  return e === undefined ? "PERPETUAL" : formatExpiryCode(e)
}

// ---------------------------------------------------------------------------------------------
// Formatting

/** Plain decimal string of a BigDecimal (no exponent, no redundant zeros). */
export const formatDecimal = (d: BigDecimal.BigDecimal): string => {
  const n = BigDecimal.normalize(d)
  const sign = n.value < 0n ? "-" : ""
  const digits = (n.value < 0n ? -n.value : n.value).toString()
  if (n.scale <= 0) return sign + digits + "0".repeat(-n.scale)
  const padded = digits.padStart(n.scale + 1, "0")
  return `${sign}${padded.slice(0, padded.length - n.scale)}.${padded.slice(padded.length - n.scale)}`
}

const formatFar = (far: Expiry | "perpetual"): string =>
  far === "perpetual" ? "PERP" : formatExpiryCode(far)

export const formatInstrument = (i: Instrument): string => {
  switch (i.kind) {
    case "option":
      return `${i.base}-${formatExpiryCode(i.expiry)}-${formatDecimal(i.strike)}-${i.optionType === "call" ? "C" : "P"}`
    case "future":
      return `${i.base}-${formatExpiryCode(i.expiry)}`
    case "perpetual":
      return `${i.base}-PERPETUAL`
    case "future_spread":
      return `${i.base}-FS-${formatExpiryCode(i.near)}_${formatFar(i.far)}`
  }
}

/** Structural equality (BigDecimal objects must not be compared by reference or deep equality). */
export const instrumentEquals = (a: Instrument, b: Instrument): boolean =>
  formatInstrument(a) === formatInstrument(b)

// ---------------------------------------------------------------------------------------------
// Parsing

const show = (s: string): string => JSON.stringify(s)

const failWith =
  (name: string) =>
  (key: ErrorKey, detail: string): Either.Either<never, ApiError> =>
    Either.left(apiError(key, `${show(name)}: ${detail}`))

const CANONICAL_DECIMAL = /^(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$/
const NUMERIC = /^[0-9]*\.?[0-9]*$/

const parseStrike = (token: string): Either.Either<BigDecimal.BigDecimal, string> => {
  if (!CANONICAL_DECIMAL.test(token)) {
    if (token !== "" && token !== "." && NUMERIC.test(token)) {
      const canonical = formatDecimal(BigDecimal.unsafeFromString(token))
      return Either.left(`strike ${show(token)} is not written canonically; write ${canonical}`)
    }
    return Either.left(`strike ${show(token)} is not a positive decimal number`)
  }
  const [integer = "", fraction = ""] = token.split(".")
  const strike = BigDecimal.make(BigInt(integer + fraction), fraction.length)
  if (!BigDecimal.isPositive(strike)) return Either.left("strike must be greater than 0")
  if (integer.length > MAX_STRIKE_INTEGER_DIGITS || fraction.length > MAX_STRIKE_DECIMALS) {
    return Either.left(
      `strike ${show(token)} has more than ${MAX_STRIKE_INTEGER_DIGITS} integer or ${MAX_STRIKE_DECIMALS} decimal digits`
    )
  }
  return Either.right(BigDecimal.normalize(strike))
}

const parseBase = (token: string): Either.Either<BaseCurrency, string> => {
  if (Schema.is(BaseCurrency)(token)) return Either.right(token)
  if (token.endsWith("_USDC")) {
    return Either.left(
      `${show(token)} is a venue contract prefix; legs use venue-neutral names such as BTC-27DEC30`
    )
  }
  return Either.left(`unknown base currency ${show(token)}; expected BTC or ETH`)
}

/**
 * Parses a venue-neutral name. Which error: nothing recognisable → `invalid instrument format`;
 * bad base currency → `unable to parse instrument`; bad date of an option or future → `invalid
 * expiry date format`; bad strike or C/P → `invalid option format`; `-FS-` with a bad shape →
 * `invalid future spread format`, with bad dates or near ≥ far → `invalid future spread dates format`.
 */
export const parseInstrument = (name: string): Either.Either<Instrument, ApiError> => {
  if (name.length === 0) return Either.left(apiError("emptyValue", "instrument name is empty"))
  if (name.length > MAX_INSTRUMENT_NAME_LENGTH) {
    const shown = `${show(safePrefix(name, 24))}…`
    return Either.left(
      apiError("invalidInstrumentFormat", `${shown}: longer than ${MAX_INSTRUMENT_NAME_LENGTH} characters`)
    )
  }
  const fail = failWith(name)
  if (!/^[A-Za-z0-9._-]+$/.test(name)) {
    return fail("invalidInstrumentFormat", `only letters, digits, ".", "_" and "-" are allowed`)
  }
  const parts = name.split("-")
  const [baseToken = "", second = "", third = "", fourth = ""] = parts
  // Markers are recognised in any case so that a lower-cased name gets the error of its shape.
  const marker = second.toUpperCase()
  const shape =
    marker === "FS"
      ? "future_spread"
      : parts.length === 2
        ? marker === "PERPETUAL"
          ? "perpetual"
          : "future"
        : parts.length === 4
          ? "option"
          : undefined
  if (shape === undefined) {
    return fail(
      "invalidInstrumentFormat",
      "expected BASE-DMMMYY-STRIKE-C|P, BASE-DMMMYY, BASE-PERPETUAL or BASE-FS-DMMMYY_DMMMYY|PERP"
    )
  }
  const base = parseBase(baseToken)
  if (Either.isLeft(base)) return fail("unableToParseInstrument", base.left)

  switch (shape) {
    case "perpetual":
      if (second !== marker) return fail("invalidInstrumentFormat", "write PERPETUAL in upper case")
      return Either.right({ kind: "perpetual", base: base.right })
    case "future": {
      if (second.includes("_")) {
        return fail(
          "invalidFutureSpreadFormat",
          "a future spread is written BASE-FS-NEAR_FAR such as BTC-FS-27DEC30_PERP"
        )
      }
      const expiry = parseExpiryCode(second)
      if (Either.isLeft(expiry)) return fail("invalidExpiryDateFormat", expiry.left)
      return Either.right({ kind: "future", base: base.right, expiry: expiry.right })
    }
    case "option": {
      const expiry = parseExpiryCode(second)
      if (Either.isLeft(expiry)) return fail("invalidExpiryDateFormat", expiry.left)
      const strike = parseStrike(third)
      if (Either.isLeft(strike)) return fail("invalidOptionFormat", strike.left)
      if (fourth !== "C" && fourth !== "P") {
        return fail("invalidOptionFormat", `option type ${show(fourth)} must be C (call) or P (put)`)
      }
      return Either.right({
        kind: "option",
        base: base.right,
        expiry: expiry.right,
        strike: strike.right,
        optionType: fourth === "C" ? "call" : "put"
      })
    }
    case "future_spread": {
      const dates = third.split("_")
      const [nearToken = "", farToken = ""] = dates
      if (second !== marker) return fail("invalidFutureSpreadFormat", "write FS in upper case")
      if (parts.length !== 3 || dates.length !== 2 || nearToken === "" || farToken === "") {
        return fail("invalidFutureSpreadFormat", "expected BASE-FS-NEAR_FAR such as BTC-FS-27DEC30_PERP")
      }
      if (nearToken === "PERP") {
        return fail("invalidFutureSpreadDatesFormat", "PERP can only be the far leg")
      }
      const near = parseExpiryCode(nearToken)
      if (Either.isLeft(near)) return fail("invalidFutureSpreadDatesFormat", `near leg: ${near.left}`)
      if (farToken === "PERP") {
        return Either.right({ kind: "future_spread", base: base.right, near: near.right, far: "perpetual" })
      }
      const far = parseExpiryCode(farToken)
      if (Either.isLeft(far)) return fail("invalidFutureSpreadDatesFormat", `far leg: ${far.left}`)
      if (compareExpiry(near.right, far.right) >= 0) {
        return fail(
          "invalidFutureSpreadDatesFormat",
          `near leg ${nearToken} must expire before far leg ${farToken}`
        )
      }
      return Either.right({ kind: "future_spread", base: base.right, near: near.right, far: far.right })
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Schemas for request bodies

/** The catalog keys `parseInstrument` can fail with. */
export const instrumentErrorKeys = [
  "emptyValue",
  "invalidInstrumentFormat",
  "invalidOptionFormat",
  "invalidExpiryDateFormat",
  "invalidFutureSpreadFormat",
  "invalidFutureSpreadDatesFormat",
  "unableToParseInstrument"
] as const satisfies ReadonlyArray<ErrorKey>

/** Schema issue message of a failed name: `<spec message>: <reason>`; read back by `instrumentErrorFromIssueMessage`. */
export const instrumentIssueMessage = (e: ApiError): string =>
  e.reason === undefined ? e.message : `${e.message}: ${e.reason.join("; ")}`

/** Recovers the catalog error from an issue message of `InstrumentName` / `InstrumentFromName`. */
export const instrumentErrorFromIssueMessage = (message: string): ApiError | undefined => {
  for (const key of instrumentErrorKeys) {
    const specMessage = catalog[key].message
    if (message === specMessage) return apiError(key)
    if (message.startsWith(`${specMessage}: `)) return apiError(key, message.slice(specMessage.length + 2))
  }
  return undefined
}

/** A string that is a valid venue-neutral name; decodes to the same (canonical) string. */
export const InstrumentName = Schema.String.pipe(
  Schema.filter(
    (s) => Either.match(parseInstrument(s), { onLeft: instrumentIssueMessage, onRight: () => true }),
    {
      identifier: "InstrumentName",
      description: "venue-neutral instrument name such as BTC-27DEC30-100000-C"
    }
  )
)

/** Decodes a name to its parsed Instrument; encodes back to the canonical name. */
export const InstrumentFromName = Schema.transformOrFail(Schema.String, Schema.typeSchema(Instrument), {
  strict: true,
  decode: (name, _, ast) =>
    Either.mapLeft(parseInstrument(name), (e) => new ParseResult.Type(ast, name, instrumentIssueMessage(e))),
  encode: (instrument) => ParseResult.succeed(formatInstrument(instrument))
})

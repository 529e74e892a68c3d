import { BigDecimal } from "effect"
import * as fc from "fast-check"
import {
  compareExpiry,
  type Expiry,
  type Instrument,
  MAX_EXPIRY_YEAR,
  MAX_STRIKE_DECIMALS,
  MAX_STRIKE_INTEGER_DIGITS,
  MIN_EXPIRY_YEAR
} from "../../src/domain/Instrument.js"
import type { BaseCurrency } from "../../src/domain/Primitives.js"

/** Days per month computed independently of the code under test (Gregorian leap rule). */
export const calendarDays = (year: number, month: number): number => {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!
}

export const arbBase: fc.Arbitrary<BaseCurrency> = fc.constantFrom("BTC", "ETH")

export const arbExpiry: fc.Arbitrary<Expiry> = fc
  .record({
    year: fc.integer({ min: MIN_EXPIRY_YEAR, max: MAX_EXPIRY_YEAR }),
    month: fc.integer({ min: 1, max: 12 })
  })
  .chain(({ year, month }) =>
    fc.integer({ min: 1, max: calendarDays(year, month) }).map((day) => ({ year, month, day }))
  )

/** Positive strikes within the documented digit limits, integers more often than fractions. */
export const arbStrike: fc.Arbitrary<BigDecimal.BigDecimal> = fc
  .oneof(
    { arbitrary: fc.constant(0), weight: 3 },
    { arbitrary: fc.integer({ min: 1, max: MAX_STRIKE_DECIMALS }), weight: 1 }
  )
  .chain((scale) =>
    fc
      .bigInt({ min: 1n, max: 10n ** BigInt(MAX_STRIKE_INTEGER_DIGITS + scale) - 1n })
      .map((value) => BigDecimal.normalize(BigDecimal.make(value, scale)))
  )

const arbTwoExpiries = fc
  .tuple(arbExpiry, arbExpiry)
  .filter(([a, b]) => compareExpiry(a, b) !== 0)
  .map(([a, b]) => (compareExpiry(a, b) < 0 ? ([a, b] as const) : ([b, a] as const)))

export const arbOption = fc.record({
  kind: fc.constant("option" as const),
  base: arbBase,
  expiry: arbExpiry,
  strike: arbStrike,
  optionType: fc.constantFrom("call" as const, "put" as const)
})
export const arbFuture = fc.record({ kind: fc.constant("future" as const), base: arbBase, expiry: arbExpiry })
export const arbPerpetual = fc.record({ kind: fc.constant("perpetual" as const), base: arbBase })
export const arbFutureSpread = fc.oneof(
  fc.record({ base: arbBase, near: arbExpiry }).map(({ base, near }) => ({
    kind: "future_spread" as const,
    base,
    near,
    far: "perpetual" as const
  })),
  fc
    .record({ base: arbBase, dates: arbTwoExpiries })
    .map(({ base, dates: [near, far] }) => ({ kind: "future_spread" as const, base, near, far }))
)

export const arbInstrument: fc.Arbitrary<Instrument> = fc.oneof(
  arbOption,
  arbFuture,
  arbPerpetual,
  arbFutureSpread
)

/** Field-by-field equality, independent of `formatInstrument`. */
export const sameInstrument = (a: Instrument, b: Instrument): boolean => {
  const sameExpiry = (x: Expiry, y: Expiry) => x.year === y.year && x.month === y.month && x.day === y.day
  if (a.kind !== b.kind || a.base !== b.base) return false
  switch (a.kind) {
    case "perpetual":
      return true
    case "future":
      return b.kind === "future" && sameExpiry(a.expiry, b.expiry)
    case "option":
      return (
        b.kind === "option" &&
        sameExpiry(a.expiry, b.expiry) &&
        BigDecimal.equals(a.strike, b.strike) &&
        a.optionType === b.optionType
      )
    case "future_spread":
      return (
        b.kind === "future_spread" &&
        sameExpiry(a.near, b.near) &&
        (a.far === "perpetual" ? b.far === "perpetual" : b.far !== "perpetual" && sameExpiry(a.far, b.far))
      )
  }
}

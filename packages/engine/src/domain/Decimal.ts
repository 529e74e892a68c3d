import { BigDecimal, Option } from "effect"

/**
 * Exact decimal helpers over Effect's `BigDecimal`, for money and amounts.
 *
 * Anything that must be exact on a step (amount steps, price ticks) is turned into a whole number of
 * steps (`bigint`) first: integer arithmetic has no rounding, so splits and leg-price searches stay
 * exact however many terms they add up.
 */

const ten = 10n

const pow10 = (exponent: number): bigint => ten ** BigInt(exponent)

/** ⌊a / b⌋ for bigints of any sign (`/` on bigints truncates toward zero). */
export const bigintFloorDiv = (a: bigint, b: bigint): bigint => {
  if (b === 0n) throw new RangeError("division by zero")
  const q = a / b
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q
}

/** ⌈a / b⌉ for bigints of any sign. */
export const bigintCeilDiv = (a: bigint, b: bigint): bigint => -bigintFloorDiv(-a, b)

/** a / b rounded to the nearest integer, a tie (exactly .5) away from zero. */
export const bigintRoundDiv = (a: bigint, b: bigint): bigint => {
  if (b === 0n) throw new RangeError("division by zero")
  const negative = a < 0n !== b < 0n
  const absA = a < 0n ? -a : a
  const absB = b < 0n ? -b : b
  const q = (2n * absA + absB) / (2n * absB)
  return negative ? -q : q
}

/**
 * The number as a decimal, digit for digit as JavaScript prints it (its shortest round-trip form),
 * so `0.1` becomes exactly 0.1 and not the binary double nearest to it. `None` for NaN and ±Infinity.
 */
export const decimalFromNumber = (n: number): Option.Option<BigDecimal.BigDecimal> =>
  Option.map(BigDecimal.safeFromNumber(n), BigDecimal.normalize)

/** Like `decimalFromNumber`, also accepting a decimal string; throws a `RangeError` on bad input. Meant for constants. */
export const unsafeDecimal = (value: number | string): BigDecimal.BigDecimal => {
  const parsed = typeof value === "number" ? decimalFromNumber(value) : BigDecimal.fromString(value.trim())
  if (Option.isNone(parsed) || (typeof value === "string" && value.trim() === "")) {
    throw new RangeError(`not a finite decimal: ${String(value)}`)
  }
  return BigDecimal.normalize(parsed.value)
}

/** The decimal as a JS number, for JSON output only (never compute with the result). */
export const decimalToNumber = (d: BigDecimal.BigDecimal): number => BigDecimal.unsafeToNumber(d)

/** Digits after the decimal point once trailing zeros are dropped: 2 for 1.50, 0 for 100. */
export const decimalPlaces = (d: BigDecimal.BigDecimal): number => Math.max(0, BigDecimal.normalize(d).scale)

/** The smallest scale at which every given decimal is a whole number (0 for none). */
export const commonScale = (ds: Iterable<BigDecimal.BigDecimal>): number => {
  let scale = 0
  for (const d of ds) scale = Math.max(scale, decimalPlaces(d))
  return scale
}

/** `d × 10^scale` as a bigint; throws a `RangeError` if that is not a whole number. */
export const toScaledInteger = (d: BigDecimal.BigDecimal, scale: number): bigint => {
  const n = BigDecimal.normalize(d)
  if (n.scale > scale) throw new RangeError(`${BigDecimal.format(d)} has more than ${scale} decimals`)
  return n.value * pow10(scale - n.scale)
}

/** `units × 10^−scale` as a decimal. */
export const fromScaledInteger = (units: bigint, scale: number): BigDecimal.BigDecimal =>
  BigDecimal.normalize(BigDecimal.make(units, scale))

const requirePositiveStep = (step: BigDecimal.BigDecimal): void => {
  if (!BigDecimal.isPositive(step)) throw new RangeError(`step must be > 0, got ${BigDecimal.format(step)}`)
}

/** x / step as the fraction numerator / denominator of two bigints, denominator > 0. */
const ratioToStep = (x: BigDecimal.BigDecimal, step: BigDecimal.BigDecimal): [bigint, bigint] => {
  requirePositiveStep(step)
  const scale = commonScale([x, step])
  return [toScaledInteger(x, scale), toScaledInteger(step, scale)]
}

/** x in whole steps, if x is on the step grid (a multiple of `step`). */
export const toUnits = (x: BigDecimal.BigDecimal, step: BigDecimal.BigDecimal): Option.Option<bigint> => {
  const [num, den] = ratioToStep(x, step)
  return num % den === 0n ? Option.some(num / den) : Option.none()
}

/** ⌊x / step⌋: the number of whole steps at or below x. */
export const floorUnits = (x: BigDecimal.BigDecimal, step: BigDecimal.BigDecimal): bigint => {
  const [num, den] = ratioToStep(x, step)
  return bigintFloorDiv(num, den)
}

/** ⌈x / step⌉: the number of whole steps at or above x. */
export const ceilUnits = (x: BigDecimal.BigDecimal, step: BigDecimal.BigDecimal): bigint => {
  const [num, den] = ratioToStep(x, step)
  return bigintCeilDiv(num, den)
}

/** x / step rounded to the nearest whole step, half a step away from zero. */
export const roundUnits = (x: BigDecimal.BigDecimal, step: BigDecimal.BigDecimal): bigint => {
  const [num, den] = ratioToStep(x, step)
  return bigintRoundDiv(num, den)
}

/** `units × step`, exact. */
export const fromUnits = (units: bigint, step: BigDecimal.BigDecimal): BigDecimal.BigDecimal =>
  BigDecimal.normalize(BigDecimal.multiply(BigDecimal.fromBigInt(units), step))

/** Whether x is a whole multiple of `step` (step > 0). Zero is a multiple of every step. */
export const isMultipleOf = (x: BigDecimal.BigDecimal, step: BigDecimal.BigDecimal): boolean =>
  Option.isSome(toUnits(x, step))

/** The largest multiple of `step` at or below x (toward −∞, also for negative x). */
export const floorToStep = (x: BigDecimal.BigDecimal, step: BigDecimal.BigDecimal): BigDecimal.BigDecimal =>
  fromUnits(floorUnits(x, step), step)

/** The smallest multiple of `step` at or above x. */
export const ceilToStep = (x: BigDecimal.BigDecimal, step: BigDecimal.BigDecimal): BigDecimal.BigDecimal =>
  fromUnits(ceilUnits(x, step), step)

/** The nearest multiple of `step`; exactly half-way rounds away from zero (2.5 → 3, −2.5 → −3 for step 1). */
export const roundToStep = (x: BigDecimal.BigDecimal, step: BigDecimal.BigDecimal): BigDecimal.BigDecimal =>
  fromUnits(roundUnits(x, step), step)

/** The exact sum (0 for an empty list). */
export const sumDecimals = (xs: Iterable<BigDecimal.BigDecimal>): BigDecimal.BigDecimal =>
  BigDecimal.normalize(BigDecimal.sumAll(xs))

/** −1, 0 or 1 as a is below, equal to or above b (by value: 1.50 equals 1.5). */
export const compareDecimals = (a: BigDecimal.BigDecimal, b: BigDecimal.BigDecimal): -1 | 0 | 1 =>
  BigDecimal.Order(a, b)

/** Equality by value (1.50 equals 1.5). */
export const decimalEquals = (a: BigDecimal.BigDecimal, b: BigDecimal.BigDecimal): boolean =>
  BigDecimal.equals(a, b)

/** The smallest of one or more decimals (the first one on a tie). */
export const minDecimal = (
  first: BigDecimal.BigDecimal,
  ...rest: ReadonlyArray<BigDecimal.BigDecimal>
): BigDecimal.BigDecimal => rest.reduce((m, x) => (BigDecimal.lessThan(x, m) ? x : m), first)

/** The largest of one or more decimals (the first one on a tie). */
export const maxDecimal = (
  first: BigDecimal.BigDecimal,
  ...rest: ReadonlyArray<BigDecimal.BigDecimal>
): BigDecimal.BigDecimal => rest.reduce((m, x) => (BigDecimal.greaterThan(x, m) ? x : m), first)

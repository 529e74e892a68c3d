import { BigDecimal, Either } from "effect"
import { type ApiError, apiError } from "./Errors.js"
import { formatDecimal } from "./Instrument.js"

/** Leg ratios: greater than 0, at most this many decimal places (spec limits). */
export const MAX_RATIO_DECIMALS = 2

/** JSON numbers become decimals through their shortest string, which is exact for what was sent. */
const ratioFromNumber = (n: number): BigDecimal.BigDecimal | undefined => {
  const d = BigDecimal.safeFromNumber(n)
  return d._tag === "Some" ? BigDecimal.normalize(d.value) : undefined
}

const toDecimal = (r: number | BigDecimal.BigDecimal): BigDecimal.BigDecimal | undefined =>
  typeof r === "number" ? ratioFromNumber(r) : BigDecimal.normalize(r)

/** Why a ratio breaks the rules, or undefined when it is valid. */
const ratioProblem = (r: number | BigDecimal.BigDecimal): string | undefined => {
  const d = toDecimal(r)
  if (d === undefined) return `${r} is not a finite number`
  if (!BigDecimal.isPositive(d)) return `${formatDecimal(d)} must be greater than 0`
  if (d.scale > MAX_RATIO_DECIMALS)
    return `${formatDecimal(d)} has more than ${MAX_RATIO_DECIMALS} decimal places`
  return undefined
}

/** Validates one ratio; `label` names it in the reason (e.g. `legs[1].ratio`). */
export const parseRatio = (
  r: number | BigDecimal.BigDecimal,
  label = "ratio"
): Either.Either<BigDecimal.BigDecimal, ApiError> => {
  const problem = ratioProblem(r)
  return problem === undefined
    ? Either.right(toDecimal(r)!)
    : Either.left(apiError("failedToConvertRatio", `${label}: ${problem}`))
}

export const bigintGcd = (a: bigint, b: bigint): bigint => {
  a = a < 0n ? -a : a
  b = b < 0n ? -b : b
  while (b !== 0n) [a, b] = [b, a % b]
  return a
}

/** A value as an integer number of 10^-scale units (scale ≥ the value's own decimal places). */
const unitsAt = (d: BigDecimal.BigDecimal, scale: number): bigint => BigDecimal.scale(d, scale).value

/**
 * The smallest positive integers in the same proportion as `ratios` (any number of decimals),
 * e.g. [0.5, 1, 0.5] → [1, 2, 1]. Used to compare shapes of structures; all ratios must be > 0.
 */
export const ratioProportions = (ratios: ReadonlyArray<BigDecimal.BigDecimal>): Array<bigint> => {
  const scale = Math.max(0, ...ratios.map((r) => BigDecimal.normalize(r).scale))
  const units = ratios.map((r) => unitsAt(r, scale))
  const g = units.reduce(bigintGcd, 0n)
  return g === 0n ? units : units.map((u) => u / g)
}

export interface NormalisedRatios {
  /** Coprime positive integers in the ratios' proportions. */
  readonly integers: ReadonlyArray<bigint>
  /** ratioᵢ = integersᵢ × scale. */
  readonly scale: BigDecimal.BigDecimal
}

/**
 * Validates leg ratios (> 0, at most 2 decimals) and converts them to integers: each × 100, then
 * divided by the gcd of all. An empty list gives no integers and scale 1.
 */
export const normaliseRatios = (
  ratios: ReadonlyArray<number | BigDecimal.BigDecimal>
): Either.Either<NormalisedRatios, ApiError> => {
  const problems = ratios.flatMap((r, i) => {
    const problem = ratioProblem(r)
    return problem === undefined ? [] : [`legs[${i}].ratio: ${problem}`]
  })
  if (problems.length > 0) return Either.left(apiError("failedToConvertRatio", problems))
  const units = ratios.map((r) => unitsAt(toDecimal(r)!, MAX_RATIO_DECIMALS))
  const g = units.reduce(bigintGcd, 0n)
  if (g === 0n) return Either.right({ integers: [], scale: BigDecimal.fromBigInt(1n) })
  return Either.right({
    integers: units.map((u) => u / g),
    scale: BigDecimal.normalize(BigDecimal.make(g, MAX_RATIO_DECIMALS))
  })
}

/** Leg amount = RFQ amount × leg ratio, exact. */
export const legAmount = (
  rfqAmount: BigDecimal.BigDecimal,
  ratio: BigDecimal.BigDecimal
): BigDecimal.BigDecimal => BigDecimal.normalize(BigDecimal.multiply(rfqAmount, ratio))

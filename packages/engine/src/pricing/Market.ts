import type { BaseCurrency } from "../domain/Primitives.js"
import { black76, type OptionType } from "./Black76.js"

/**
 * The simulated market: a pure function of (seed, time). Floating point throughout (a model, not
 * money); `SimulatedPricing` rounds what leaves it. docs/pricing.md has the formulas and numbers.
 */

export const MS_PER_DAY = 86_400_000
export const MS_PER_YEAR = 365 * MS_PER_DAY

export interface CurrencyModel {
  /** Centre of the index path, USD. */
  readonly referenceIndex: number
  /** Amplitude (fraction of the reference) and period of the slow swing of the index. */
  readonly slowSwing: number
  readonly slowPeriodDays: number
  /** Amplitude and period of the intraday wiggle. */
  readonly fastSwing: number
  readonly fastPeriodDays: number
  /** Annualised basis of futures over the index: F = S·exp(basis·T). */
  readonly basis: number
  /** At-the-money volatility of the shortest and of long expiries, and how fast it moves between them (years). */
  readonly shortVol: number
  readonly longVol: number
  readonly termDecayYears: number
  /** σ = atm·(1 + skew·x + curvature·x²), x = ln(K/F)/√max(T, minSmileYears). */
  readonly skew: number
  readonly curvature: number
}

export const currencyModels: Record<BaseCurrency, CurrencyModel> = {
  BTC: {
    referenceIndex: 100_000,
    slowSwing: 0.03,
    slowPeriodDays: 29.5,
    fastSwing: 0.004,
    fastPeriodDays: 1,
    basis: 0.05,
    shortVol: 0.5,
    longVol: 0.6,
    termDecayYears: 0.25,
    skew: -0.06,
    curvature: 0.04
  },
  ETH: {
    referenceIndex: 3_500,
    slowSwing: 0.03,
    slowPeriodDays: 29.5,
    fastSwing: 0.004,
    fastPeriodDays: 1,
    basis: 0.06,
    shortVol: 0.6,
    longVol: 0.7,
    termDecayYears: 0.25,
    skew: -0.08,
    curvature: 0.04
  }
}

/** Below a week the smile would explode as 1/√T; it is held at its one-week shape. */
export const MIN_SMILE_YEARS = 7 / 365
export const MIN_VOL = 0.1
export const MAX_VOL = 3

/** mulberry32: a tiny deterministic generator, enough to turn a seed into phases. */
const mulberry32 = (seed: number): (() => number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export interface Phases {
  readonly slow: number
  readonly fast: number
}

/** The seed's phases of the two index swings, per currency. */
export const phasesOf = (seed: number): Record<BaseCurrency, Phases> => {
  const next = mulberry32(seed)
  const phase = () => next() * 2 * Math.PI
  return { BTC: { slow: phase(), fast: phase() }, ETH: { slow: phase(), fast: phase() } }
}

/** Index in USD at `now` (unix ms), rounded to the cent so that everything priced from it agrees. */
export const indexAt = (base: BaseCurrency, phases: Phases, now: number): number => {
  const m = currencyModels[base]
  const days = now / MS_PER_DAY
  const swing =
    m.slowSwing * Math.sin((2 * Math.PI * days) / m.slowPeriodDays + phases.slow) +
    m.fastSwing * Math.sin((2 * Math.PI * days) / m.fastPeriodDays + phases.fast)
  return Math.round(m.referenceIndex * (1 + swing) * 100) / 100
}

export const yearsBetween = (now: number, expiresAt: number): number =>
  Math.max(0, (expiresAt - now) / MS_PER_YEAR)

/** Futures price for an expiry: the index plus a basis that grows with time to expiry. */
export const forwardPrice = (base: BaseCurrency, index: number, years: number): number =>
  index * Math.exp(currencyModels[base].basis * years)

/** Implied volatility: a term structure at the money and a quadratic smile in normalised log-moneyness. */
export const impliedVolatility = (
  base: BaseCurrency,
  forward: number,
  strike: number,
  years: number
): number => {
  const m = currencyModels[base]
  const atm = m.longVol + (m.shortVol - m.longVol) * Math.exp(-years / m.termDecayYears)
  const x = Math.log(strike / forward) / Math.sqrt(Math.max(years, MIN_SMILE_YEARS))
  const smile = atm * (1 + m.skew * x + m.curvature * x * x)
  return Math.min(MAX_VOL, Math.max(MIN_VOL, smile))
}

/** Option premium in USD per unit of base currency. Premiums are not discounted (crypto venues pay them upfront). */
export const optionValueUsd = (
  base: BaseCurrency,
  index: number,
  option: { readonly type: OptionType; readonly strike: number; readonly years: number }
): number => {
  const forward = forwardPrice(base, index, option.years)
  return black76({
    type: option.type,
    forward,
    strike: option.strike,
    years: option.years,
    volatility: impliedVolatility(base, forward, option.strike, option.years)
  })
}

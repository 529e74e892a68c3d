import { BigDecimal } from "effect"
import { ceilToStep, floorToStep, maxDecimal, unsafeDecimal } from "../domain/Decimal.js"
import type { BaseCurrency } from "../domain/Primitives.js"
import type { ContractType } from "../domain/VenueContract.js"
import type { InstrumentKind } from "../services/Venues.js"

/**
 * The simulated venues' trading rules: ONE table, the same on DBT and BULL (docs/venues.md
 * repeats it). Option amounts are in the base currency; futures, perpetual and future-spread
 * amounts are in USD (quote-currency units), as are their prices on both contract types.
 */
export interface KindParameters {
  readonly amountStep: BigDecimal.BigDecimal
  readonly minBlockAmount: BigDecimal.BigDecimal
  /** Price tick by contract type: inverse option premiums are in the coin, linear ones in USDC. */
  readonly tickSize: Readonly<Record<ContractType, BigDecimal.BigDecimal>>
}

const kind = (
  amountStep: string,
  minBlockAmount: string,
  inverseTick: string,
  linearTick: string
): KindParameters => ({
  amountStep: unsafeDecimal(amountStep),
  minBlockAmount: unsafeDecimal(minBlockAmount),
  tickSize: { inverse: unsafeDecimal(inverseTick), linear: unsafeDecimal(linearTick) }
})

export const venueParameters: Readonly<
  Record<BaseCurrency, Readonly<Record<InstrumentKind, KindParameters>>>
> = {
  BTC: {
    option: kind("0.1", "25", "0.0001", "5"),
    future: kind("10", "200000", "0.5", "0.5"),
    perpetual: kind("10", "200000", "0.5", "0.5"),
    future_spread: kind("10", "200000", "0.5", "0.5")
  },
  ETH: {
    option: kind("1", "250", "0.0001", "5"),
    future: kind("10", "100000", "0.05", "0.05"),
    perpetual: kind("10", "100000", "0.05", "0.05"),
    future_spread: kind("10", "100000", "0.05", "0.05")
  }
}

/**
 * The band a quoted leg price may not leave: mark ± max(fraction·|mark|, minTicks·tick), both
 * bounds inclusive and moved inward onto the tick grid (so each bound is itself a valid price).
 * Outright prices are positive, so their low bound is never below one tick; a future spread's
 * price is a difference and may be negative, so it has no floor.
 */
export interface BandRule {
  readonly fraction: BigDecimal.BigDecimal
  readonly minTicks: bigint
  readonly floorAtOneTick: boolean
}

export const priceBandRules: Readonly<Record<InstrumentKind, BandRule>> = {
  option: { fraction: unsafeDecimal("0.15"), minTicks: 10n, floorAtOneTick: true },
  future: { fraction: unsafeDecimal("0.025"), minTicks: 10n, floorAtOneTick: true },
  perpetual: { fraction: unsafeDecimal("0.025"), minTicks: 10n, floorAtOneTick: true },
  future_spread: { fraction: unsafeDecimal("0.2"), minTicks: 100n, floorAtOneTick: false }
}

export interface PriceBand {
  readonly low: BigDecimal.BigDecimal
  readonly high: BigDecimal.BigDecimal
}

export const priceBand = (
  kind: InstrumentKind,
  tick: BigDecimal.BigDecimal,
  mark: BigDecimal.BigDecimal
): PriceBand => {
  const rule = priceBandRules[kind]
  const width = maxDecimal(
    BigDecimal.multiply(rule.fraction, BigDecimal.abs(mark)),
    BigDecimal.multiply(BigDecimal.fromBigInt(rule.minTicks), tick)
  )
  const low = ceilToStep(BigDecimal.subtract(mark, width), tick)
  const high = floorToStep(BigDecimal.sum(mark, width), tick)
  return { low: rule.floorAtOneTick ? maxDecimal(low, tick) : low, high }
}

/**
 * Option strikes: a fixed grid around each currency's reference index (docs/pricing.md), fine
 * near the money and wider further out. The index swings a few percent around the reference, so
 * the fine part stays around the money. Segments overlap; the grid is their union.
 */
export interface StrikeSegment {
  readonly step: number
  readonly from: number
  readonly to: number
}

export const strikeSegments: Readonly<Record<BaseCurrency, ReadonlyArray<StrikeSegment>>> = {
  BTC: [
    { step: 1_000, from: 80_000, to: 120_000 },
    { step: 5_000, from: 50_000, to: 200_000 },
    { step: 10_000, from: 20_000, to: 300_000 }
  ],
  ETH: [
    { step: 50, from: 2_800, to: 4_200 },
    { step: 100, from: 2_000, to: 6_000 },
    { step: 250, from: 1_000, to: 10_000 }
  ]
}

const gridOf = (segments: ReadonlyArray<StrikeSegment>): ReadonlyArray<number> => {
  const strikes = new Set<number>()
  for (const s of segments) for (let k = s.from; k <= s.to; k += s.step) strikes.add(k)
  return [...strikes].sort((a, b) => a - b)
}

/** Every listed strike, ascending. */
export const strikeGrid: Readonly<Record<BaseCurrency, ReadonlyArray<number>>> = {
  BTC: gridOf(strikeSegments.BTC),
  ETH: gridOf(strikeSegments.ETH)
}

const gridSets: Record<BaseCurrency, ReadonlySet<string>> = {
  BTC: new Set(strikeGrid.BTC.map(String)),
  ETH: new Set(strikeGrid.ETH.map(String))
}

/** Whether a strike (canonical decimal string, as instrument names write it) is on the grid. */
export const isGridStrike = (base: BaseCurrency, strike: string): boolean => gridSets[base].has(strike)

import { BigDecimal, Clock, Effect, Either, Layer } from "effect"
import { expiryTimestamp, type Instrument, parseInstrument } from "../domain/Instrument.js"
import type { BaseCurrency } from "../domain/Primitives.js"
import { Pricing, type PricingService } from "../services/Pricing.js"
import type { VenueInstrument } from "../services/Venues.js"
import { black76Delta } from "./Black76.js"
import {
  forwardPrice,
  impliedVolatility,
  indexAt,
  optionValueUsd,
  type Phases,
  phasesOf,
  yearsBetween
} from "./Market.js"

/**
 * Deterministic simulated marks (docs/pricing.md): a function of the seed and the Effect clock
 * only, so a test that fixes both gets the same numbers on every run and machine.
 */

export interface SimulatedPricingOptions {
  /** Picks the phases of the index swings; the same seed and time give the same marks. */
  readonly seed?: number
}

export const DEFAULT_PRICING_SEED = 1
/** Marks carry this many decimals (half-even); the index is in whole cents. */
export const MARK_DECIMALS = 8

const toDecimal = (x: number, scale: number): BigDecimal.BigDecimal => {
  if (!Number.isFinite(x)) throw new RangeError(`simulated price is not finite: ${x}`)
  return BigDecimal.normalize(BigDecimal.round(BigDecimal.unsafeFromNumber(x), { scale, mode: "half-even" }))
}

/** Parsed names, remembered: the same few thousand contracts are marked over and over. */
const PARSED_MEMORY = 50_000

const futureValue = (base: BaseCurrency, index: number, now: number, expiresAt: number): number =>
  forwardPrice(base, index, yearsBetween(now, expiresAt))

/** The prices of a future spread's two ends; a perpetual far end is at the index. */
const spreadEnds = (
  spread: Extract<Instrument, { readonly kind: "future_spread" }>,
  index: number,
  now: number
): { readonly near: number; readonly far: number } => ({
  near: futureValue(spread.base, index, now, expiryTimestamp(spread.near)),
  far: spread.far === "perpetual" ? index : futureValue(spread.base, index, now, expiryTimestamp(spread.far))
})

/** A contract's mark in its own price currency, unrounded. */
export const markValue = (
  contract: Instrument,
  priceCurrency: "base" | "usd",
  phases: Readonly<Record<BaseCurrency, Phases>>,
  now: number
): number => {
  const base = contract.base
  const index = indexAt(base, phases[base], now)
  switch (contract.kind) {
    case "perpetual":
      return index
    case "future":
      return futureValue(base, index, now, expiryTimestamp(contract.expiry))
    case "future_spread": {
      const { near, far } = spreadEnds(contract, index, now)
      return far - near
    }
    case "option": {
      const usd = optionValueUsd(base, index, {
        type: contract.optionType,
        strike: BigDecimal.unsafeToNumber(contract.strike),
        years: yearsBetween(now, expiryTimestamp(contract.expiry))
      })
      // Inverse premiums are quoted in the coin: the USD value over the index.
      return priceCurrency === "base" ? usd / index : usd
    }
  }
}

/**
 * A contract's delta in its base currency per unit of its amount (see `PricingService.delta`):
 * futures amounts are in USD, so one USD of a future is 1/F of the coin.
 */
export const deltaValue = (
  contract: Instrument,
  phases: Readonly<Record<BaseCurrency, Phases>>,
  now: number
): number => {
  const base = contract.base
  const index = indexAt(base, phases[base], now)
  switch (contract.kind) {
    case "perpetual":
      return 1 / index
    case "future":
      return 1 / futureValue(base, index, now, expiryTimestamp(contract.expiry))
    case "future_spread": {
      const { near, far } = spreadEnds(contract, index, now)
      return 1 / far - 1 / near
    }
    case "option": {
      const years = yearsBetween(now, expiryTimestamp(contract.expiry))
      const strike = BigDecimal.unsafeToNumber(contract.strike)
      const forward = forwardPrice(base, index, years)
      return black76Delta({
        type: contract.optionType,
        forward,
        strike,
        years,
        volatility: impliedVolatility(base, forward, strike, years)
      })
    }
  }
}

export const makeSimulatedPricing = (options: SimulatedPricingOptions = {}): PricingService => {
  const phases = phasesOf(options.seed ?? DEFAULT_PRICING_SEED)
  const parsed = new Map<string, Instrument>()

  const contractOf = (instrument: VenueInstrument): Instrument => {
    const known = parsed.get(instrument.instrumentName)
    if (known !== undefined) return known
    const result = parseInstrument(instrument.instrumentName)
    if (Either.isLeft(result))
      throw new RangeError(`cannot price ${instrument.instrumentName}: ${result.left.message}`)
    if (parsed.size >= PARSED_MEMORY) parsed.clear()
    parsed.set(instrument.instrumentName, result.right)
    return result.right
  }

  return {
    index: (currency) =>
      Effect.map(Clock.currentTimeMillis, (now) => toDecimal(indexAt(currency, phases[currency], now), 2)),
    mark: (instrument) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        // Only option premiums differ by contract type; futures are priced in USD on both.
        const priceCurrency =
          instrument.kind === "option" && instrument.quoteCurrency !== "USDC" ? "base" : "usd"
        return toDecimal(markValue(contractOf(instrument), priceCurrency, phases, now), MARK_DECIMALS)
      }),
    delta: (instrument) =>
      Effect.map(Clock.currentTimeMillis, (now) =>
        toDecimal(deltaValue(contractOf(instrument), phases, now), MARK_DECIMALS)
      )
  }
}

export const SimulatedPricing = {
  layer: (options: SimulatedPricingOptions = {}): Layer.Layer<Pricing> =>
    Layer.sync(Pricing, () => makeSimulatedPricing(options))
}

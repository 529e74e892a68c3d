import { BigDecimal } from "effect"
import { sumDecimals } from "./Decimal.js"
import type { Direction } from "./Primitives.js"

/** A priced leg, as the structure price needs it. */
export interface PricedLeg {
  readonly direction: Direction
  readonly ratio: BigDecimal.BigDecimal
  readonly price: BigDecimal.BigDecimal
}

/** sᵢ·ratioᵢ·pᵢ: what one leg adds to the structure price (negative for a sell leg). */
export const legContribution = (leg: PricedLeg): BigDecimal.BigDecimal => {
  const value = BigDecimal.multiply(leg.ratio, leg.price)
  return leg.direction === "buy" ? value : BigDecimal.negate(value)
}

/**
 * The contract's structure price P = Σ sᵢ·ratioᵢ·pᵢ, sᵢ = +1 for a buy leg and −1 for a sell leg,
 * computed exactly. The hedge is priced on its own and is not part of P. The one structure price:
 * a quote's price, an RFQ's mark price and the leg-price search all use it.
 */
export const structurePrice = (legs: ReadonlyArray<PricedLeg>): BigDecimal.BigDecimal =>
  sumDecimals(legs.map(legContribution))

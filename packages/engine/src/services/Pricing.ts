import type { BigDecimal, Effect } from "effect"
import { Context } from "effect"
import type { BaseCurrency } from "../domain/Primitives.js"
import type { VenueInstrument } from "./Venues.js"

export interface PricingService {
  /** Index price of a base currency in USD, at the clock's current time. */
  readonly index: (currency: BaseCurrency) => Effect.Effect<BigDecimal.BigDecimal>
  /**
   * Mark price of a venue contract in its own quote currency (BTC/ETH for inverse options, USDC for
   * linear ones, USD-equivalent for futures), at the clock's current time. Not rounded to tick.
   */
  readonly mark: (instrument: VenueInstrument) => Effect.Effect<BigDecimal.BigDecimal>
}

export class Pricing extends Context.Tag("rfq/Pricing")<Pricing, PricingService>() {}

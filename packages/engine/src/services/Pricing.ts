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
  /**
   * Delta of a venue contract in its base currency per unit of the contract's amount, at the clock's
   * current time: per 1 of base currency for an option (its forward delta, −1 … 1), per 1 USD of
   * amount for a future or perpetual (1 / its price) and for a future spread (1 / far − 1 / near).
   * A long position of `amount` has delta `amount × delta`. Market-maker protection sums it.
   */
  readonly delta: (instrument: VenueInstrument) => Effect.Effect<BigDecimal.BigDecimal>
}

export class Pricing extends Context.Tag("rfq/Pricing")<Pricing, PricingService>() {}

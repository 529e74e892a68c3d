import { BigDecimal, Effect } from "effect"
import { venueInstrumentOf } from "../engine/QuoteBuilder.js"
import type { Direction } from "../domain/Primitives.js"
import { dec } from "../rfq/Dec.js"
import { makerLegDirection } from "../rfq/QuoteRules.js"
import type { QuoteRecord, RfqRecord } from "../rfq/RfqRecord.js"
import { Pricing } from "../services/Pricing.js"
import { DELTA_DECIMALS } from "./MmpRules.js"

const zero = BigDecimal.unsafeFromString("0")
const signOf = (d: Direction) => BigDecimal.unsafeFromNumber(d === "buy" ? 1 : -1)

/**
 * The maker's delta from a fill of `amount` of the RFQ against `quote`, in the base currency, as an
 * absolute value: |Σ over legs of direction·ratio·legDelta·amount + the hedge's direction·delta·its
 * share of the hedge amount|, with each contract's delta from the pricing service at the clock's
 * time, on the maker's side of each leg. The hedge counts: it is part of the fill, there to offset
 * the legs' delta. A contract the venue no longer lists counts 0 (the fill fails at settlement).
 */
export const fillDelta = (rfq: RfqRecord, quote: QuoteRecord, amount: BigDecimal.BigDecimal) =>
  Effect.gen(function* () {
    const pricing = yield* Pricing
    const option = quote.settlementOption
    const deltaOf = (
      instrumentName: string,
      contract: RfqRecord["legs"][number]["contracts"][typeof option]
    ) =>
      venueInstrumentOf(option, instrumentName, contract).pipe(
        Effect.flatMap(pricing.delta),
        Effect.orElseSucceed(() => zero)
      )
    let total = zero
    for (const leg of rfq.legs) {
      const delta = yield* deltaOf(leg.instrumentName, leg.contracts[option])
      const legAmount = BigDecimal.multiply(dec(leg.ratio), amount)
      total = BigDecimal.sum(
        total,
        BigDecimal.multiply(
          signOf(makerLegDirection(quote.direction, leg)),
          BigDecimal.multiply(delta, legAmount)
        )
      )
    }
    const hedge = rfq.hedge
    if (hedge !== undefined && BigDecimal.isPositive(dec(rfq.amount))) {
      const delta = yield* deltaOf(hedge.instrumentName, hedge.contracts[option])
      const share = BigDecimal.unsafeDivide(BigDecimal.multiply(dec(hedge.amount), amount), dec(rfq.amount))
      total = BigDecimal.sum(
        total,
        BigDecimal.multiply(
          signOf(makerLegDirection(quote.direction, hedge)),
          BigDecimal.multiply(delta, share)
        )
      )
    }
    return BigDecimal.normalize(
      BigDecimal.round(BigDecimal.abs(total), { scale: DELTA_DECIMALS, mode: "half-even" })
    )
  })

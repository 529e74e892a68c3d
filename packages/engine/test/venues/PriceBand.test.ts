import { assert, describe, it } from "@effect/vitest"
import { BigDecimal } from "effect"
import * as fc from "fast-check"
import { isMultipleOf } from "../../src/domain/Decimal.js"
import type { InstrumentKind } from "../../src/services/Venues.js"
import { priceBand, priceBandRules, venueParameters } from "../../src/venues/VenueParameters.js"

/** Marks as the pricing service produces them: up to 8 decimals. */
const MARK_DECIMALS = 8
const MAX_MARK_UNITS = 10n ** 15n

const ticks = [
  ...new Set(
    (["BTC", "ETH"] as const).flatMap((base) =>
      Object.values(venueParameters[base]).flatMap((k) => [k.tickSize.inverse, k.tickSize.linear])
    )
  )
]
const arbTick = fc.constantFrom(...ticks)
const arbKind = fc.constantFrom<InstrumentKind>("option", "future", "perpetual", "future_spread")
const arbOutrightKind = fc.constantFrom<InstrumentKind>("option", "future", "perpetual")
const arbMark = (min: bigint) =>
  fc.bigInt({ min, max: MAX_MARK_UNITS }).map((units) => BigDecimal.make(units, MARK_DECIMALS))

const { lessThanOrEqualTo: le } = BigDecimal

describe("priceBand", () => {
  it("contains the mark whenever the mark is at least one tick", () => {
    fc.assert(
      fc.property(arbKind, arbTick, arbMark(1n), (kind, tick, mark) => {
        fc.pre(BigDecimal.greaterThanOrEqualTo(mark, tick))
        const band = priceBand(kind, tick, mark)
        assert.isTrue(le(band.low, mark) && le(mark, band.high))
      })
    )
  })

  it("contains a spread's mark of any sign", () => {
    fc.assert(
      fc.property(arbTick, arbMark(-MAX_MARK_UNITS), (tick, mark) => {
        const band = priceBand("future_spread", tick, mark)
        assert.isTrue(le(band.low, mark) && le(mark, band.high))
      })
    )
  })

  it("puts both bounds on the tick grid, so each bound is a valid price", () => {
    fc.assert(
      fc.property(arbKind, arbTick, arbMark(-MAX_MARK_UNITS), (kind, tick, mark) => {
        const band = priceBand(kind, tick, mark)
        assert.isTrue(isMultipleOf(band.low, tick) && isMultipleOf(band.high, tick))
      })
    )
  })

  it("never puts an outright's low bound below one tick", () => {
    fc.assert(
      fc.property(arbOutrightKind, arbTick, arbMark(0n), (kind, tick, mark) => {
        assert.isTrue(BigDecimal.greaterThanOrEqualTo(priceBand(kind, tick, mark).low, tick))
      })
    )
  })

  it("is at least the rule's minimum number of ticks wide above the mark", () => {
    fc.assert(
      fc.property(arbKind, arbTick, arbMark(0n), (kind, tick, mark) => {
        const minWidth = BigDecimal.multiply(BigDecimal.fromBigInt(priceBandRules[kind].minTicks), tick)
        const high = priceBand(kind, tick, mark).high
        // high = mark + width rounded down to the tick: at most one tick short of mark + minWidth
        assert.isTrue(BigDecimal.greaterThan(high, BigDecimal.subtract(BigDecimal.sum(mark, minWidth), tick)))
      })
    )
  })

  it("stays within the rule's fraction of the mark when that is wider than the minimum", () => {
    fc.assert(
      fc.property(arbKind, arbTick, arbMark(1n), (kind, tick, mark) => {
        const rule = priceBandRules[kind]
        const width = BigDecimal.multiply(rule.fraction, mark)
        fc.pre(BigDecimal.greaterThan(width, BigDecimal.multiply(BigDecimal.fromBigInt(rule.minTicks), tick)))
        const band = priceBand(kind, tick, mark)
        assert.isTrue(le(band.high, BigDecimal.sum(mark, width)))
        assert.isTrue(BigDecimal.greaterThanOrEqualTo(band.low, BigDecimal.subtract(mark, width)))
      })
    )
  })

  it("allows an option ±15 % and a future ±2.5 % around a typical mark", () => {
    const optionBand = priceBand(
      "option",
      BigDecimal.unsafeFromString("0.0001"),
      BigDecimal.unsafeFromString("0.05")
    )
    assert.strictEqual(BigDecimal.format(optionBand.low), "0.0425")
    assert.strictEqual(BigDecimal.format(optionBand.high), "0.0575")
    const futureBand = priceBand(
      "future",
      BigDecimal.unsafeFromString("0.5"),
      BigDecimal.unsafeFromString("100000.3")
    )
    assert.strictEqual(BigDecimal.format(futureBand.low), "97500.5")
    assert.strictEqual(BigDecimal.format(futureBand.high), "102500")
  })
})

import { assert, describe, it } from "@effect/vitest"
import { BigDecimal } from "effect"
import * as fc from "fast-check"
import { unsafeDecimal } from "../../src/domain/Decimal.js"
import { oppositeDirection } from "../../src/domain/Primitives.js"
import { type PricedLeg, structurePrice } from "../../src/domain/StructurePrice.js"

const MAX_LEGS = 8
/** Ratios > 0 with at most 2 decimals, up to 100.00. */
const MAX_RATIO_HUNDREDTHS = 10_000n
/** Prices with up to 4 decimals, |price| ≤ 10^8. */
const MAX_PRICE_UNITS = 10n ** 12n

const arbLeg: fc.Arbitrary<PricedLeg> = fc.record({
  direction: fc.constantFrom("buy" as const, "sell" as const),
  ratio: fc.bigInt({ min: 1n, max: MAX_RATIO_HUNDREDTHS }).map((h) => BigDecimal.make(h, 2)),
  price: fc.bigInt({ min: -MAX_PRICE_UNITS, max: MAX_PRICE_UNITS }).map((u) => BigDecimal.make(u, 4))
})
const arbLegs = fc.array(arbLeg, { minLength: 1, maxLength: MAX_LEGS })

const d = unsafeDecimal
const eq = (actual: BigDecimal.BigDecimal, expected: BigDecimal.BigDecimal) =>
  assert.isTrue(
    BigDecimal.equals(actual, expected),
    `${BigDecimal.format(actual)} !== ${BigDecimal.format(expected)}`
  )

describe("structurePrice", () => {
  it("is invariant under leg order", () => {
    fc.assert(
      fc.property(
        arbLegs.chain((legs) =>
          fc.tuple(fc.constant(legs), fc.shuffledSubarray(legs, { minLength: legs.length }))
        ),
        ([legs, shuffled]) => eq(structurePrice(shuffled), structurePrice(legs))
      )
    )
  })

  it("changes sign when every leg changes direction", () => {
    fc.assert(
      fc.property(arbLegs, (legs) => {
        const flipped = legs.map((leg) => ({ ...leg, direction: oppositeDirection(leg.direction) }))
        eq(structurePrice(flipped), BigDecimal.negate(structurePrice(legs)))
      })
    )
  })

  it("adds up over a structure split into two parts", () => {
    fc.assert(
      fc.property(arbLegs, arbLegs, (left, right) =>
        eq(structurePrice([...left, ...right]), BigDecimal.sum(structurePrice(left), structurePrice(right)))
      )
    )
  })

  it("prices a call spread, a ratio spread and a butterfly exactly", () => {
    // Buy 1 × 0.0505, sell 1 × 0.0195: 0.031.
    eq(
      structurePrice([
        { direction: "buy", ratio: d("1"), price: d("0.0505") },
        { direction: "sell", ratio: d("1"), price: d("0.0195") }
      ]),
      d("0.031")
    )
    // 1×2 ratio spread in USDC: 1 × 3105 − 2 × 1210 = 685.
    eq(
      structurePrice([
        { direction: "buy", ratio: d("1"), price: d("3105") },
        { direction: "sell", ratio: d("2"), price: d("1210") }
      ]),
      d("685")
    )
    // Call fly with a fractional ratio: 0.1 − 2 × 0.07 + 0.05 = 0.01; 0.1 × 0.3 has no float error.
    eq(
      structurePrice([
        { direction: "buy", ratio: d("1"), price: d("0.1") },
        { direction: "sell", ratio: d("2"), price: d("0.07") },
        { direction: "buy", ratio: d("1"), price: d("0.05") }
      ]),
      d("0.01")
    )
    eq(structurePrice([{ direction: "buy", ratio: d("0.3"), price: d("0.1") }]), d("0.03"))
  })
})

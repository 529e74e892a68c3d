import { assert, describe, it } from "@effect/vitest"
import { BigDecimal, Either } from "effect"
import * as fc from "fast-check"
import {
  bigintGcd,
  legAmount,
  normaliseRatios,
  parseRatio,
  ratioProportions
} from "../../src/domain/Ratio.js"

const RUNS = 1_000
const MAX_LEGS = 8
/** Ratios up to 1,000,000.00, expressed in hundredths. */
const MAX_RATIO_HUNDREDTHS = 100_000_000n

const arbRatio = fc
  .bigInt({ min: 1n, max: MAX_RATIO_HUNDREDTHS })
  .map((h) => BigDecimal.normalize(BigDecimal.make(h, 2)))
const arbRatios = fc.array(arbRatio, { minLength: 1, maxLength: MAX_LEGS })
const arbAmount = fc
  .tuple(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.integer({ min: 0, max: 8 }))
  .map(([v, s]) => BigDecimal.make(v, s))

const normalised = (ratios: ReadonlyArray<BigDecimal.BigDecimal>) =>
  Either.getOrThrow(normaliseRatios(ratios))

describe("normaliseRatios", () => {
  it("each ratio equals its integer times the scale", () => {
    fc.assert(
      fc.property(arbRatios, (ratios) => {
        const { integers, scale } = normalised(ratios)
        return ratios.every((r, i) =>
          BigDecimal.equals(r, BigDecimal.multiply(BigDecimal.fromBigInt(integers[i]!), scale))
        )
      }),
      { numRuns: RUNS }
    )
  })

  it("preserves proportions: rᵢ·nⱼ = rⱼ·nᵢ for every pair", () => {
    fc.assert(
      fc.property(arbRatios, (ratios) => {
        const { integers } = normalised(ratios)
        return ratios.every((ri, i) =>
          ratios.every((rj, j) =>
            BigDecimal.equals(
              BigDecimal.multiply(ri, BigDecimal.fromBigInt(integers[j]!)),
              BigDecimal.multiply(rj, BigDecimal.fromBigInt(integers[i]!))
            )
          )
        )
      }),
      { numRuns: RUNS }
    )
  })

  it("gives positive coprime integers", () => {
    fc.assert(
      fc.property(arbRatios, (ratios) => {
        const { integers } = normalised(ratios)
        return integers.every((n) => n > 0n) && integers.reduce(bigintGcd, 0n) === 1n
      }),
      { numRuns: RUNS }
    )
  })

  it("does not depend on a common factor of all ratios", () => {
    fc.assert(
      fc.property(arbRatios, fc.integer({ min: 1, max: 1_000 }), (ratios, k) => {
        const scaled = ratios.map((r) => BigDecimal.multiply(r, BigDecimal.fromBigInt(BigInt(k))))
        return normalised(scaled).integers.join() === normalised(ratios).integers.join()
      }),
      { numRuns: RUNS }
    )
  })

  it("examples", () => {
    const n = (xs: ReadonlyArray<number>) => Either.getOrThrow(normaliseRatios(xs))
    assert.deepStrictEqual(n([1, 2, 1]).integers, [1n, 2n, 1n])
    assert.deepStrictEqual(n([0.5, 1, 0.5]).integers, [1n, 2n, 1n])
    assert.isTrue(BigDecimal.equals(n([0.5, 1, 0.5]).scale, BigDecimal.unsafeFromString("0.5")))
    assert.deepStrictEqual(n([0.25, 0.75]).integers, [1n, 3n])
    assert.deepStrictEqual(n([0.01, 1]).integers, [1n, 100n])
    assert.deepStrictEqual(n([3]).integers, [1n])
  })
})

describe("ratio rules", () => {
  it("rejects a ratio with more than 2 decimals, 0, negatives and non-finite numbers", () => {
    for (const bad of [0.125, 0, -1, Number.NaN, Number.POSITIVE_INFINITY, 1e-7]) {
      const e = Either.flip(parseRatio(bad, "legs[0].ratio")).pipe(Either.getOrThrow)
      assert.strictEqual(e.message, "failed to convert ratio to int")
      assert.isTrue(e.reason?.[0]?.startsWith("legs[0].ratio: ") === true)
    }
    const e = Either.flip(normaliseRatios([1, 0.125, -2])).pipe(Either.getOrThrow)
    assert.deepStrictEqual(e.reason, [
      "legs[1].ratio: 0.125 has more than 2 decimal places",
      "legs[2].ratio: -2 must be greater than 0"
    ])
  })

  it("accepts any positive number with at most 2 decimals, exactly as sent", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000_000 }), (hundredths) => {
        const sent = hundredths / 100
        return Either.match(parseRatio(sent), {
          onLeft: () => false,
          onRight: (r) => BigDecimal.equals(r, BigDecimal.make(BigInt(hundredths), 2))
        })
      }),
      { numRuns: RUNS }
    )
  })

  it("ratioProportions works for any number of decimals", () => {
    assert.deepStrictEqual(
      ratioProportions([BigDecimal.unsafeFromString("0.125"), BigDecimal.unsafeFromString("0.25")]),
      [1n, 2n]
    )
  })
})

describe("legAmount", () => {
  it("is the exact product: legAmount / ratio gives back the RFQ amount", () => {
    fc.assert(
      fc.property(arbAmount, arbRatio, (amount, ratio) => {
        const leg = legAmount(amount, ratio)
        const back = BigDecimal.unsafeDivide(leg, ratio)
        return BigDecimal.equals(back, amount)
      }),
      { numRuns: RUNS }
    )
  })

  it("has no more decimals than the amount and the ratio together", () => {
    fc.assert(
      fc.property(arbAmount, arbRatio, (amount, ratio) => {
        const leg = legAmount(amount, ratio)
        const places = (d: BigDecimal.BigDecimal) => Math.max(0, BigDecimal.normalize(d).scale)
        return places(leg) <= places(amount) + places(ratio)
      }),
      { numRuns: RUNS }
    )
  })

  it("example: 25 × 0.5 = 12.5 and 0.1 × 3 = 0.3 with no float error", () => {
    assert.strictEqual(
      BigDecimal.format(legAmount(BigDecimal.unsafeFromString("25"), BigDecimal.unsafeFromString("0.5"))),
      "12.5"
    )
    assert.strictEqual(
      BigDecimal.format(legAmount(BigDecimal.unsafeFromString("0.1"), BigDecimal.unsafeFromString("3"))),
      "0.3"
    )
  })
})

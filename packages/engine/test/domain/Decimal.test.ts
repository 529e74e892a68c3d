import { assert, describe, it } from "@effect/vitest"
import { BigDecimal, Option } from "effect"
import * as fc from "fast-check"
import {
  bigintCeilDiv,
  bigintFloorDiv,
  bigintRoundDiv,
  ceilToStep,
  compareDecimals,
  decimalEquals,
  decimalFromNumber,
  decimalPlaces,
  decimalToNumber,
  floorToStep,
  floorUnits,
  fromUnits,
  isMultipleOf,
  maxDecimal,
  minDecimal,
  roundToStep,
  sumDecimals,
  toUnits,
  unsafeDecimal
} from "../../src/domain/Decimal.js"

/** Decimals with up to MAX_SCALE places and |unscaled value| ≤ MAX_UNSCALED. */
const MAX_SCALE = 8
const MAX_UNSCALED = 10n ** 15n
const arbDecimal = fc
  .tuple(fc.bigInt({ min: -MAX_UNSCALED, max: MAX_UNSCALED }), fc.integer({ min: 0, max: MAX_SCALE }))
  .map(([v, s]) => BigDecimal.make(v, s))
/** Positive steps like the venues' ticks and amount steps: 0.0001, 2.5, 10, … */
const arbStep = fc
  .tuple(fc.bigInt({ min: 1n, max: 10_000n }), fc.integer({ min: 0, max: 6 }))
  .map(([v, s]) => BigDecimal.make(v, s))
const arbNonZeroBigint = fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }).filter((b) => b !== 0n)

const d = unsafeDecimal
const eq = (actual: BigDecimal.BigDecimal, expected: BigDecimal.BigDecimal) =>
  assert.isTrue(
    BigDecimal.equals(actual, expected),
    `${BigDecimal.format(actual)} !== ${BigDecimal.format(expected)}`
  )

describe("decimalFromNumber", () => {
  it("takes a number's shortest decimal form, so 0.1 is exactly one tenth", () => {
    eq(Option.getOrThrow(decimalFromNumber(0.1)), BigDecimal.make(1n, 1))
    eq(Option.getOrThrow(decimalFromNumber(10.3)), BigDecimal.make(103n, 1))
    eq(Option.getOrThrow(decimalFromNumber(1e-7)), BigDecimal.make(1n, 7))
    eq(Option.getOrThrow(decimalFromNumber(-2.5e21)), BigDecimal.make(-25n, -20))
  })

  it("rejects NaN and the infinities", () => {
    for (const n of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      assert.isTrue(Option.isNone(decimalFromNumber(n)))
      assert.throws(() => unsafeDecimal(n))
    }
    assert.throws(() => unsafeDecimal(""))
    assert.throws(() => unsafeDecimal("1.2.3"))
  })

  it("round-trips every finite double through decimalToNumber", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => {
        const back = decimalToNumber(Option.getOrThrow(decimalFromNumber(n)))
        assert.isTrue(back === n || (n === 0 && back === 0), `${n} came back as ${back}`)
      })
    )
  })
})

describe("bigint division helpers", () => {
  it("floor and ceiling bracket the exact quotient within one", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 18n), max: 10n ** 18n }), arbNonZeroBigint, (a, b) => {
        const f = bigintFloorDiv(a, b)
        const c = bigintCeilDiv(a, b)
        // f ≤ a/b ≤ c, compared without division: multiply through by b² > 0.
        assert.isTrue(f * b * b <= a * b && a * b <= c * b * b)
        assert.isTrue(c - f === (a % b === 0n ? 0n : 1n))
      })
    )
  })

  it("rounds to the nearest integer, exact halves away from zero", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 18n), max: 10n ** 18n }), arbNonZeroBigint, (a, b) => {
        const r = bigintRoundDiv(a, b)
        const twiceError = 2n * (a - r * b) // 2·(a − r·b), |·| ≤ |b|
        const absB = b < 0n ? -b : b
        const absErr = twiceError < 0n ? -twiceError : twiceError
        assert.isTrue(absErr <= absB)
        // On an exact half the result lies away from zero: |r·b| > |a|.
        if (absErr === absB) assert.isTrue((r < 0n ? -r : r) * absB > (a < 0n ? -a : a))
      })
    )
    assert.strictEqual(bigintRoundDiv(5n, 2n), 3n)
    assert.strictEqual(bigintRoundDiv(-5n, 2n), -3n)
    assert.strictEqual(bigintRoundDiv(7n, -2n), -4n)
  })
})

describe("steps", () => {
  it("floorToStep is the largest multiple of the step at or below x", () => {
    fc.assert(
      fc.property(arbDecimal, arbStep, (x, step) => {
        const f = floorToStep(x, step)
        assert.isTrue(isMultipleOf(f, step))
        assert.isTrue(BigDecimal.lessThanOrEqualTo(f, x))
        assert.isTrue(BigDecimal.lessThan(x, BigDecimal.sum(f, step)))
      })
    )
  })

  it("ceilToStep is the smallest multiple of the step at or above x", () => {
    fc.assert(
      fc.property(arbDecimal, arbStep, (x, step) => {
        const c = ceilToStep(x, step)
        assert.isTrue(isMultipleOf(c, step))
        assert.isTrue(BigDecimal.greaterThanOrEqualTo(c, x))
        assert.isTrue(BigDecimal.greaterThan(x, BigDecimal.subtract(c, step)))
      })
    )
  })

  it("roundToStep is a multiple of the step within half a step of x", () => {
    fc.assert(
      fc.property(arbDecimal, arbStep, (x, step) => {
        const r = roundToStep(x, step)
        assert.isTrue(isMultipleOf(r, step))
        const twiceError = BigDecimal.multiply(
          BigDecimal.abs(BigDecimal.subtract(x, r)),
          BigDecimal.fromBigInt(2n)
        )
        assert.isTrue(BigDecimal.lessThanOrEqualTo(twiceError, step))
      })
    )
  })

  it("roundToStep takes exact halves away from zero", () => {
    eq(roundToStep(d("2.5"), d("1")), d("3"))
    eq(roundToStep(d("-2.5"), d("1")), d("-3"))
    eq(roundToStep(d("0.00015"), d("0.0001")), d("0.0002"))
    eq(roundToStep(d("12.5"), d("5")), d("15"))
    eq(roundToStep(d("12.4999"), d("5")), d("10"))
  })

  it("a multiple of the step converts to whole units and back unchanged", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }), arbStep, (units, step) => {
        const x = fromUnits(units, step)
        assert.isTrue(isMultipleOf(x, step))
        assert.strictEqual(Option.getOrThrow(toUnits(x, step)), units)
        assert.strictEqual(floorUnits(x, step), units)
      })
    )
  })

  it("off the step there are no whole units", () => {
    assert.isTrue(Option.isNone(toUnits(d("0.15"), d("0.1"))))
    assert.isFalse(isMultipleOf(d("10.05"), d("0.1")))
    assert.isTrue(isMultipleOf(d("10.5"), d("0.1")))
    assert.isTrue(isMultipleOf(d("0"), d("2.5")))
    assert.isTrue(isMultipleOf(d("200000"), d("10")))
    assert.throws(() => floorToStep(d("1"), d("0")))
    assert.throws(() => floorToStep(d("1"), d("-0.1")))
  })
})

describe("sums, comparisons and places", () => {
  it("sums exactly where floating point does not", () => {
    eq(sumDecimals([d("0.1"), d("0.2")]), d("0.3"))
    eq(sumDecimals([]), d("0"))
    eq(sumDecimals(Array.from({ length: 10 }, () => d("0.1"))), d("1"))
  })

  it("sumDecimals agrees with adding the unscaled integers on a common scale", () => {
    fc.assert(
      fc.property(fc.array(arbDecimal, { maxLength: 20 }), (xs) => {
        const scaled = xs.reduce((acc, x) => acc + BigDecimal.scale(x, MAX_SCALE).value, 0n)
        eq(sumDecimals(xs), BigDecimal.make(scaled, MAX_SCALE))
      })
    )
  })

  it("compares by value, whatever the scale", () => {
    assert.strictEqual(compareDecimals(d("1.50"), d("1.5")), 0)
    assert.isTrue(decimalEquals(BigDecimal.make(150n, 2), d("1.5")))
    assert.strictEqual(compareDecimals(d("-0.01"), d("0")), -1)
    assert.strictEqual(compareDecimals(d("100"), d("99.999")), 1)
  })

  it("min and max pick a member that bounds every other", () => {
    fc.assert(
      fc.property(arbDecimal, fc.array(arbDecimal, { maxLength: 10 }), (first, rest) => {
        const all = [first, ...rest]
        const lo = minDecimal(first, ...rest)
        const hi = maxDecimal(first, ...rest)
        assert.isTrue(all.some((x) => x === lo) && all.some((x) => x === hi))
        for (const x of all) {
          assert.isTrue(BigDecimal.lessThanOrEqualTo(lo, x) && BigDecimal.lessThanOrEqualTo(x, hi))
        }
      })
    )
  })

  it("counts decimal places without trailing zeros", () => {
    assert.strictEqual(decimalPlaces(d("1.50")), 1)
    assert.strictEqual(decimalPlaces(d("100")), 0)
    assert.strictEqual(decimalPlaces(BigDecimal.make(1n, -3)), 0)
    assert.strictEqual(decimalPlaces(d("0.0001")), 4)
  })
})

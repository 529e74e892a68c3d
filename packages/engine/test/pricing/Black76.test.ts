import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { black76, normalCdf } from "../../src/pricing/Black76.js"

// Reference values of the standard normal CDF (statistical tables, 0.5·erfc(−x/√2)).
const cdfTable: ReadonlyArray<readonly [number, number]> = [
  [0, 0.5],
  [1, 0.8413447460685429],
  [-1, 0.15865525393145707],
  [-1.96, 0.024997895148220435],
  [3, 0.9986501019683699],
  [-5, 2.866515718791946e-7]
]
const CDF_TOLERANCE = 1e-14

const MIN_PRICE = 1
const MAX_PRICE = 1_000_000
const MAX_YEARS = 10
const MIN_VOL = 0.01
const MAX_VOL = 3
/** Relative to the larger of forward and strike: parity is exact up to floating-point rounding. */
const PARITY_TOLERANCE = 1e-9

const arbInput = fc.record({
  forward: fc.double({ min: MIN_PRICE, max: MAX_PRICE, noNaN: true }),
  strike: fc.double({ min: MIN_PRICE, max: MAX_PRICE, noNaN: true }),
  years: fc.double({ min: 1 / 365, max: MAX_YEARS, noNaN: true }),
  volatility: fc.double({ min: MIN_VOL, max: MAX_VOL, noNaN: true }),
  discount: fc.double({ min: 0.5, max: 1, noNaN: true })
})

describe("normalCdf", () => {
  it("matches the normal table", () => {
    for (const [x, expected] of cdfTable) {
      assert.approximately(normalCdf(x), expected, CDF_TOLERANCE, `N(${x})`)
    }
  })

  it("is symmetric: N(x) + N(−x) = 1", () => {
    fc.assert(
      fc.property(fc.double({ min: -40, max: 40, noNaN: true }), (x) => {
        assert.approximately(normalCdf(x) + normalCdf(-x), 1, 1e-15)
      })
    )
  })
})

describe("black76", () => {
  it("reproduces Hull's futures option example (F=K=20, r=9%, T=4 months, σ=25%: 1.1166)", () => {
    const input = {
      forward: 20,
      strike: 20,
      years: 4 / 12,
      volatility: 0.25,
      discount: Math.exp(-0.09 * (4 / 12))
    }
    assert.approximately(black76({ ...input, type: "call" }), 1.1166, 5e-5)
    assert.approximately(black76({ ...input, type: "put" }), 1.1166, 5e-5)
  })

  it("reproduces Hull's Black-Scholes example on the forward (S=42, K=40, r=10%, σ=20%, T=0.5: 4.76 / 0.81)", () => {
    const r = 0.1
    const t = 0.5
    const input = {
      forward: 42 * Math.exp(r * t),
      strike: 40,
      years: t,
      volatility: 0.2,
      discount: Math.exp(-r * t)
    }
    assert.approximately(black76({ ...input, type: "call" }), 4.76, 5e-3)
    assert.approximately(black76({ ...input, type: "put" }), 0.81, 5e-3)
  })

  it("satisfies put-call parity: C − P = df·(F − K)", () => {
    fc.assert(
      fc.property(arbInput, (input) => {
        const call = black76({ ...input, type: "call" })
        const put = black76({ ...input, type: "put" })
        const scale = Math.max(input.forward, input.strike)
        assert.approximately(
          call - put,
          input.discount * (input.forward - input.strike),
          PARITY_TOLERANCE * scale
        )
      })
    )
  })

  it("keeps a call between its discounted intrinsic value and the discounted forward", () => {
    fc.assert(
      fc.property(arbInput, (input) => {
        const call = black76({ ...input, type: "call" })
        const slack = PARITY_TOLERANCE * Math.max(input.forward, input.strike)
        assert.isAtLeast(call, input.discount * Math.max(input.forward - input.strike, 0) - slack)
        assert.isAtMost(call, input.discount * input.forward + slack)
      })
    )
  })

  it("is worth the intrinsic value at expiry", () => {
    assert.strictEqual(black76({ type: "call", forward: 110, strike: 100, years: 0, volatility: 0.5 }), 10)
    assert.strictEqual(black76({ type: "put", forward: 110, strike: 100, years: 0, volatility: 0.5 }), 0)
    assert.strictEqual(black76({ type: "put", forward: 90, strike: 100, years: -1, volatility: 0.5 }), 10)
  })

  it("rises with volatility", () => {
    fc.assert(
      fc.property(arbInput, fc.double({ min: 0.01, max: 1, noNaN: true }), (input, bump) => {
        const low = black76({ ...input, type: "call" })
        const high = black76({ ...input, type: "call", volatility: input.volatility + bump })
        assert.isAtLeast(high, low - PARITY_TOLERANCE * Math.max(input.forward, input.strike))
      })
    )
  })
})

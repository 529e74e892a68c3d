import { assert, describe, it } from "@effect/vitest"
import { BigDecimal, Effect, Either, TestClock } from "effect"
import * as fc from "fast-check"
import { parseInstrument } from "../../src/domain/Instrument.js"
import type { BaseCurrency } from "../../src/domain/Primitives.js"
import type { ContractType } from "../../src/domain/VenueContract.js"
import { currencyModels, indexAt, phasesOf } from "../../src/pricing/Market.js"
import { makeSimulatedPricing } from "../../src/pricing/SimulatedPricing.js"
import type { VenueInstrument } from "../../src/services/Venues.js"
import { makeVenueInstrument } from "../../src/venues/Catalog.js"

const NOW = Date.UTC(2026, 10, 22, 4, 53)
const MINUTE = 60_000

const arbSeed = fc.integer({ min: 0, max: 2 ** 31 - 1 })
const arbBase = fc.constantFrom<BaseCurrency>("BTC", "ETH")
const arbTime = fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2099, 0, 1) })

const contract = (name: string, type: ContractType = "linear"): VenueInstrument => {
  const parsed = parseInstrument(name)
  if (Either.isLeft(parsed)) throw new Error(`bad test name ${name}`)
  const made = makeVenueInstrument("DBT", parsed.right, type)
  if (made === undefined) throw new Error(`no contract for ${name}`)
  return made
}

const num = BigDecimal.unsafeToNumber
const at = <A, E, R>(time: number, effect: Effect.Effect<A, E, R>) =>
  Effect.zipRight(TestClock.setTime(time), effect)

const sample = [
  "BTC-27DEC30-100000-C",
  "BTC-27DEC30-100000-P",
  "BTC-26MAR27-80000-P",
  "ETH-25JUN27-3500-C",
  "BTC-27DEC30",
  "BTC-PERPETUAL",
  "BTC-FS-26MAR27_PERP",
  "ETH-FS-26MAR27_25JUN27"
]

describe("SimulatedPricing", () => {
  it.effect("gives the same marks for the same seed and time", () =>
    Effect.gen(function* () {
      const first = makeSimulatedPricing({ seed: 7 })
      const second = makeSimulatedPricing({ seed: 7 })
      for (const name of sample) {
        for (const type of ["inverse", "linear"] as const) {
          const a = yield* at(NOW, first.mark(contract(name, type)))
          const b = yield* at(NOW, second.mark(contract(name, type)))
          assert.isTrue(BigDecimal.equals(a, b), `${name} ${type}`)
        }
      }
    })
  )

  it.effect("moves the index with the seed", () =>
    Effect.gen(function* () {
      const indices = new Set<string>()
      for (const seed of [1, 2, 3]) {
        indices.add(BigDecimal.format(yield* at(NOW, makeSimulatedPricing({ seed }).index("BTC"))))
      }
      assert.strictEqual(indices.size, 3)
    })
  )

  it("keeps the index within its swing around the reference", () => {
    fc.assert(
      fc.property(arbSeed, arbBase, arbTime, (seed, base, t) => {
        const m = currencyModels[base]
        const limit = m.referenceIndex * (m.slowSwing + m.fastSwing) + 0.01
        assert.isAtMost(Math.abs(indexAt(base, phasesOf(seed)[base], t) - m.referenceIndex), limit)
      })
    )
  })

  it("drifts slowly: under 0.05 % a minute", () => {
    fc.assert(
      fc.property(arbSeed, arbBase, arbTime, (seed, base, t) => {
        const phases = phasesOf(seed)[base]
        const before = indexAt(base, phases, t)
        assert.isBelow(Math.abs(indexAt(base, phases, t + MINUTE) - before) / before, 0.0005)
      })
    )
  })

  it.effect("serves the model's index, to the cent", () =>
    Effect.gen(function* () {
      const index = yield* at(NOW, makeSimulatedPricing({ seed: 5 }).index("ETH"))
      assert.strictEqual(BigDecimal.unsafeToNumber(index), indexAt("ETH", phasesOf(5).ETH, NOW))
      assert.isAtMost(BigDecimal.normalize(index).scale, 2)
    })
  )

  it.effect("prices the perpetual at the index", () =>
    Effect.gen(function* () {
      const pricing = makeSimulatedPricing()
      const index = yield* at(NOW, pricing.index("BTC"))
      assert.isTrue(BigDecimal.equals(yield* pricing.mark(contract("BTC-PERPETUAL")), index))
    })
  )

  it.effect("prices futures above the index, with a basis growing with time to expiry", () =>
    Effect.gen(function* () {
      const pricing = makeSimulatedPricing()
      const index = yield* at(NOW, pricing.index("BTC"))
      const near = yield* pricing.mark(contract("BTC-26MAR27"))
      const far = yield* pricing.mark(contract("BTC-27DEC30"))
      assert.isTrue(BigDecimal.greaterThan(near, index))
      assert.isTrue(BigDecimal.greaterThan(far, near))
    })
  )

  it.effect("prices a future spread as far leg minus near leg", () =>
    Effect.gen(function* () {
      const pricing = makeSimulatedPricing()
      yield* TestClock.setTime(NOW)
      const perp = yield* pricing.mark(contract("BTC-PERPETUAL"))
      const mar = yield* pricing.mark(contract("BTC-26MAR27"))
      const jun = yield* pricing.mark(contract("BTC-25JUN27"))
      const perpSpread = yield* pricing.mark(contract("BTC-FS-26MAR27_PERP"))
      const calendar = yield* pricing.mark(contract("BTC-FS-26MAR27_25JUN27"))
      // Each mark is rounded on its own: the difference of two rounded marks is within 1e-8 of the spread's.
      assert.approximately(num(perpSpread), num(perp) - num(mar), 1e-8)
      assert.approximately(num(calendar), num(jun) - num(mar), 1e-8)
    })
  )

  it.effect("satisfies put-call parity in its option marks: C − P = F − K", () =>
    Effect.gen(function* () {
      const pricing = makeSimulatedPricing()
      yield* TestClock.setTime(NOW)
      for (const [expiry, strikes] of [
        ["26MAR27", [80_000, 100_000, 150_000]],
        ["27DEC30", [50_000, 100_000, 300_000]]
      ] as const) {
        const forward = num(yield* pricing.mark(contract(`BTC-${expiry}`)))
        for (const strike of strikes) {
          const call = num(yield* pricing.mark(contract(`BTC-${expiry}-${strike}-C`)))
          const put = num(yield* pricing.mark(contract(`BTC-${expiry}-${strike}-P`)))
          assert.approximately(call - put, forward - strike, 1e-6, `${expiry} ${strike}`)
        }
      }
    })
  )

  it.effect("quotes inverse option marks in the coin: the USD mark over the index", () =>
    Effect.gen(function* () {
      const pricing = makeSimulatedPricing()
      const index = num(yield* at(NOW, pricing.index("BTC")))
      for (const name of ["BTC-27DEC30-100000-C", "BTC-26MAR27-80000-P", "BTC-25JUN27-120000-C"]) {
        const inverse = num(yield* pricing.mark(contract(name, "inverse")))
        const linear = num(yield* pricing.mark(contract(name, "linear")))
        // Both are rounded to 1e-8: the inverse one in BTC, so its USD value is off by up to index·5e-9.
        assert.approximately(inverse * index, linear, index * 1e-8, name)
      }
    })
  )

  it.effect("marks carry at most 8 decimals", () =>
    Effect.gen(function* () {
      const pricing = makeSimulatedPricing()
      yield* TestClock.setTime(NOW)
      for (const name of sample) {
        const mark = yield* pricing.mark(contract(name, "inverse"))
        assert.isAtMost(BigDecimal.normalize(mark).scale, 8, name)
      }
    })
  )

  it.effect("prices a call higher for a lower strike (a smile cannot invert that)", () =>
    Effect.gen(function* () {
      const pricing = makeSimulatedPricing()
      yield* TestClock.setTime(NOW)
      let previous = Number.POSITIVE_INFINITY
      for (const strike of [20_000, 50_000, 80_000, 100_000, 120_000, 200_000, 300_000]) {
        const call = num(yield* pricing.mark(contract(`BTC-26MAR27-${strike}-C`)))
        assert.isBelow(call, previous, `strike ${strike}`)
        previous = call
      }
    })
  )
})

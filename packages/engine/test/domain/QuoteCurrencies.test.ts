import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import * as fc from "fast-check"
import type { SettlementOption } from "../../src/domain/Primitives.js"
import {
  defaultQuoteCurrency,
  quoteCurrenciesFor,
  resolveQuoteCurrency,
  validateQuoteCurrency
} from "../../src/domain/QuoteCurrencies.js"

const RUNS = 200
const arbBase = fc.constantFrom("BTC" as const, "ETH" as const)
const arbOptions = fc.subarray<SettlementOption>(["BULL", "DBT"])

describe("quoteCurrencies (spec examples)", () => {
  it("a BTC option RFQ quoted in BTC: DBT uses BTC, BULL uses USDC", () => {
    assert.deepStrictEqual(quoteCurrenciesFor("BTC", "BTC", ["BULL", "DBT"]), { BULL: "USDC", DBT: "BTC" })
  })

  it("a BTC option RFQ quoted in USDC: both use USDC", () => {
    assert.deepStrictEqual(quoteCurrenciesFor("BTC", "USDC", ["BULL", "DBT"]), { BULL: "USDC", DBT: "USDC" })
  })
})

describe("quoteCurrencies rules", () => {
  it("lists exactly the RFQ's settlement options", () => {
    fc.assert(
      fc.property(arbBase, fc.boolean(), arbOptions, (base, usdc, options) => {
        const listed = Object.keys(quoteCurrenciesFor(base, usdc ? "USDC" : base, options)).sort()
        return listed.join() === [...options].sort().join()
      }),
      { numRuns: RUNS }
    )
  })

  it("DBT gets the requested currency and BULL always USDC", () => {
    fc.assert(
      fc.property(arbBase, fc.boolean(), (base, usdc) => {
        const requested = usdc ? "USDC" : base
        const qc = quoteCurrenciesFor(base, requested, ["BULL", "DBT"])
        return qc.DBT === requested && qc.BULL === "USDC"
      }),
      { numRuns: RUNS }
    )
  })

  it("defaults: the base currency for options, USDC for futures", () => {
    assert.strictEqual(defaultQuoteCurrency("BTC", "option"), "BTC")
    assert.strictEqual(defaultQuoteCurrency("ETH", "option"), "ETH")
    assert.strictEqual(defaultQuoteCurrency("BTC", "future"), "USDC")
    assert.deepStrictEqual(resolveQuoteCurrency("ETH", "option", undefined), Either.right("ETH"))
    assert.deepStrictEqual(resolveQuoteCurrency("BTC", "future", "BTC"), Either.right("BTC"))
  })

  it("accepts only the base currency or USDC", () => {
    assert.deepStrictEqual(validateQuoteCurrency("BTC", "BTC"), Either.right("BTC"))
    assert.deepStrictEqual(validateQuoteCurrency("BTC", "USDC"), Either.right("USDC"))
    for (const bad of ["ETH", "USD", "usdc", "btc", ""]) {
      const e = Either.flip(validateQuoteCurrency("BTC", bad)).pipe(Either.getOrThrow)
      assert.strictEqual(e.message, "invalid request")
      assert.isTrue(e.reason?.[0]?.startsWith("quoteCurrency: ") === true)
    }
  })
})

import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { makeQuoteHomes } from "../../src/cluster/QuoteHomes.js"

describe("QuoteHomes", () => {
  it("answers only what it was told; a quote's RFQ, once known, is not replaced", () => {
    const homes = makeQuoteHomes()
    expect(homes.rfqOf(7)).toBeUndefined()
    homes.remember(7, 100)
    homes.remember(7, 200)
    expect(homes.rfqOf(7)).toBe(100)
    expect(homes.rfqOf(8)).toBeUndefined()
  })

  it("past its capacity it forgets the oldest entries first, never holding more than its capacity", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.integer({ min: 1, max: 60 }), { maxLength: 200 }),
        (capacity, quoteIds) => {
          const homes = makeQuoteHomes(capacity)
          // The model: first-remembered order, duplicates ignored while still held.
          let held: Array<number> = []
          for (const id of quoteIds) {
            homes.remember(id, id * 10)
            if (held.includes(id)) continue
            if (held.length >= capacity) held = held.slice(1)
            held.push(id)
          }
          for (let id = 1; id <= 60; id++)
            expect(homes.rfqOf(id)).toBe(held.includes(id) ? id * 10 : undefined)
        }
      ),
      { numRuns: 300 }
    )
  })
})

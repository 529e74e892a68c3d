import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { type Expiry, formatExpiryCode } from "../../src/domain/Instrument.js"
import {
  catalogStart,
  DAILY_COUNT,
  listedExpiries,
  MONTHLY_COUNT,
  QUARTERLY_COUNT,
  WEEKLY_COUNT
} from "../../src/venues/ExpirySchedule.js"
import { calendarDays } from "../domain/instrumentArbitraries.js"

const DAY = 86_400_000
const codes = (es: ReadonlyArray<Expiry>) => es.map(formatExpiryCode)
const utcDate = (e: Expiry) => new Date(Date.UTC(e.year, e.month - 1, e.day))
const isFriday = (e: Expiry) => utcDate(e).getUTCDay() === 5
/** Last Friday of the month, checked the long way: a Friday with no Friday after it in the month. */
const isLastFriday = (e: Expiry) => isFriday(e) && e.day + 7 > calendarDays(e.year, e.month)
const at8 = (e: Expiry) => Date.UTC(e.year, e.month - 1, e.day, 8)

/** Times in the years instrument names can write, away from both ends so every list is complete. */
const arbNow = fc.integer({ min: Date.UTC(2001, 0, 1), max: Date.UTC(2097, 0, 1) })

describe("listedExpiries", () => {
  // Sunday 22 Nov 2026, 04:53 UTC: before the 08:00 roll, so the catalog is Saturday's.
  const sunday = Date.UTC(2026, 10, 22, 4, 53)

  it("lists the next 3 days, 4 Fridays, 3 month-ends and 4 quarter-ends (22 Nov 2026)", () => {
    const listed = listedExpiries(sunday)
    assert.deepStrictEqual(codes(listed.dailies), ["22NOV26", "23NOV26", "24NOV26"])
    assert.deepStrictEqual(codes(listed.weeklies), ["27NOV26", "4DEC26", "11DEC26", "18DEC26"])
    assert.deepStrictEqual(codes(listed.monthlies), ["27NOV26", "25DEC26", "29JAN27"])
    assert.deepStrictEqual(codes(listed.quarterlies), ["25DEC26", "26MAR27", "25JUN27", "24SEP27"])
    assert.deepStrictEqual(codes(listed.futures), [
      "27NOV26",
      "25DEC26",
      "29JAN27",
      "26MAR27",
      "25JUN27",
      "24SEP27"
    ])
    assert.deepStrictEqual(codes(listed.options), [
      "22NOV26",
      "23NOV26",
      "24NOV26",
      "27NOV26",
      "4DEC26",
      "11DEC26",
      "18DEC26",
      "25DEC26",
      "29JAN27",
      "26MAR27",
      "25JUN27",
      "24SEP27"
    ])
  })

  it("rolls at 08:00 UTC: an expiry is listed until the instant it expires", () => {
    const friday = Date.UTC(2026, 10, 27, 8)
    assert.include(codes(listedExpiries(friday - 1).weeklies), "27NOV26")
    assert.notInclude(codes(listedExpiries(friday).options), "27NOV26")
    assert.deepStrictEqual(codes(listedExpiries(friday).dailies), ["28NOV26", "29NOV26", "30NOV26"])
    assert.deepStrictEqual(codes(listedExpiries(friday).monthlies), ["25DEC26", "29JAN27", "26FEB27"])
  })

  it("keeps the listing constant between two 08:00 UTC rolls", () => {
    fc.assert(
      fc.property(arbNow, fc.integer({ min: 0, max: DAY - 1 }), (now, offset) => {
        const start = catalogStart(now)
        assert.deepStrictEqual(listedExpiries(start + offset), listedExpiries(start))
      })
    )
  })

  it("lists only expiries after now, all at 08:00 UTC", () => {
    fc.assert(
      fc.property(arbNow, (now) => {
        for (const e of listedExpiries(now).options) assert.isAbove(at8(e), now)
      })
    )
  })

  it("lists the dailies on the days that follow", () => {
    fc.assert(
      fc.property(arbNow, (now) => {
        const { dailies } = listedExpiries(now)
        assert.strictEqual(dailies.length, DAILY_COUNT)
        dailies.forEach((e, i) => {
          assert.strictEqual(at8(e), catalogStart(now) + (i + 1) * DAY)
        })
      })
    )
  })

  it("lists weeklies on consecutive Fridays, the first within a week", () => {
    fc.assert(
      fc.property(arbNow, (now) => {
        const { weeklies } = listedExpiries(now)
        assert.strictEqual(weeklies.length, WEEKLY_COUNT)
        assert.isTrue(weeklies.every(isFriday))
        assert.isAtMost(at8(weeklies[0]!) - now, 7 * DAY)
        weeklies.slice(1).forEach((e, i) => {
          assert.strictEqual(at8(e) - at8(weeklies[i]!), 7 * DAY)
        })
      })
    )
  })

  it("lists monthlies on the last Fridays of consecutive months", () => {
    fc.assert(
      fc.property(arbNow, (now) => {
        const { monthlies } = listedExpiries(now)
        assert.strictEqual(monthlies.length, MONTHLY_COUNT)
        assert.isTrue(monthlies.every(isLastFriday))
        monthlies.slice(1).forEach((e, i) => {
          const prev = monthlies[i]!
          assert.strictEqual(e.year * 12 + e.month, prev.year * 12 + prev.month + 1)
        })
      })
    )
  })

  it("lists quarterlies on the last Fridays of March, June, September and December, one per quarter", () => {
    fc.assert(
      fc.property(arbNow, (now) => {
        const { quarterlies } = listedExpiries(now)
        assert.strictEqual(quarterlies.length, QUARTERLY_COUNT)
        assert.isTrue(quarterlies.every((e) => isLastFriday(e) && [3, 6, 9, 12].includes(e.month)))
        // At most 98 days: from the last Friday of September at its earliest (the 24th) to the
        // last Friday of December at its latest (the 31st). The bound was 93 days until fast-check
        // found a `now` just past a September quarterly with the next one 98 days away.
        assert.isAtMost(at8(quarterlies[0]!) - now, 98 * DAY)
        quarterlies.slice(1).forEach((e, i) => {
          const prev = quarterlies[i]!
          assert.strictEqual(e.year * 12 + e.month, prev.year * 12 + prev.month + 3)
        })
      })
    )
  })

  it("lists futures on exactly the monthly and quarterly expiries", () => {
    fc.assert(
      fc.property(arbNow, (now) => {
        const listed = listedExpiries(now)
        const expected = new Set(codes([...listed.monthlies, ...listed.quarterlies]))
        assert.deepStrictEqual(new Set(codes(listed.futures)), expected)
        assert.strictEqual(listed.futures.length, expected.size)
      })
    )
  })

  it("lists nothing dated before 2000, where names cannot write the year", () => {
    const listed = listedExpiries(0)
    assert.strictEqual(listed.options.length, 0)
    assert.strictEqual(listed.futures.length, 0)
  })
})

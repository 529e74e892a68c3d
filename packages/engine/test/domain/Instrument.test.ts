import { assert, describe, it } from "@effect/vitest"
import { BigDecimal, Either, Schema } from "effect"
import * as fc from "fast-check"
import type { ErrorKey } from "../../src/domain/Errors.js"
import {
  expiryOfDate,
  expiryTimestamp,
  formatExpiryCode,
  formatInstrument,
  Instrument,
  InstrumentFromName,
  InstrumentName,
  instrumentErrorFromIssueMessage,
  instrumentErrorKeys,
  legExpiryField,
  EXPIRY_MONTHS,
  parseExpiryCode,
  parseInstrument
} from "../../src/domain/Instrument.js"
import {
  arbBase,
  arbExpiry,
  arbInstrument,
  arbStrike,
  calendarDays,
  sameInstrument
} from "./instrumentArbitraries.js"

const ROUND_TRIP_RUNS = 2_000
const MUTATION_RUNS = 2_000
const JUNK_RUNS = 3_000

const keyOf = (name: string): ErrorKey | "ok" =>
  Either.match(parseInstrument(name), { onLeft: (e) => e.key, onRight: () => "ok" as const })

const yy = (year: number) => String(year % 100).padStart(2, "0")
const code = (day: number | string, month: string, year: number) => `${day}${month}${yy(year)}`

describe("parseInstrument / formatInstrument round trip", () => {
  it("parse ∘ format is the identity on instruments", () => {
    fc.assert(
      fc.property(arbInstrument, (i) => {
        const parsed = parseInstrument(formatInstrument(i))
        return Either.isRight(parsed) && sameInstrument(parsed.right, i)
      }),
      { numRuns: ROUND_TRIP_RUNS }
    )
  })

  it("format ∘ parse is the identity on canonical names", () => {
    fc.assert(
      fc.property(arbInstrument.map(formatInstrument), (name) =>
        Either.match(parseInstrument(name), {
          onLeft: () => false,
          onRight: (i) => formatInstrument(i) === name
        })
      ),
      { numRuns: ROUND_TRIP_RUNS }
    )
  })

  it("every parsed instrument satisfies the Instrument schema", () => {
    fc.assert(
      fc.property(arbInstrument, (i) =>
        Either.match(parseInstrument(formatInstrument(i)), {
          onLeft: () => false,
          onRight: Schema.is(Instrument)
        })
      ),
      { numRuns: ROUND_TRIP_RUNS }
    )
  })
})

/** A malformed name and the spec message its mutation must produce. */
interface Case {
  readonly name: string
  readonly expected: ErrorKey
}

const notMonth = fc
  .stringMatching(/^[A-Z]{3}$/)
  .filter((t) => !EXPIRY_MONTHS.includes(t as (typeof EXPIRY_MONTHS)[number]))

/** Date tokens that are not a valid DMMMYY date. */
const arbBadDate: fc.Arbitrary<string> = fc
  .oneof(
    arbExpiry.chain((e) =>
      fc
        .oneof(fc.constant(0), fc.integer({ min: calendarDays(e.year, e.month) + 1, max: 99 }))
        .map((day) => code(day, EXPIRY_MONTHS[e.month - 1]!, e.year))
    ),
    arbExpiry.filter((e) => e.day < 10).map((e) => code(`0${e.day}`, EXPIRY_MONTHS[e.month - 1]!, e.year)),
    fc.tuple(arbExpiry, notMonth).map(([e, m]) => code(e.day, m, e.year)),
    arbExpiry.map((e) => code(e.day, EXPIRY_MONTHS[e.month - 1]!.toLowerCase(), e.year)),
    fc
      .tuple(arbExpiry, fc.constantFrom("3", "030", "2030", ""))
      .map(([e, y]) => `${e.day}${EXPIRY_MONTHS[e.month - 1]}${y}`),
    arbExpiry.map((e) => `${EXPIRY_MONTHS[e.month - 1]}${yy(e.year)}`),
    fc.constantFrom("", "PERP", "20301227", "27-DEC", "DEC")
  )
  .filter((t) => !t.includes("-"))

const arbJunkStrike: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(
      fc.stringMatching(/^[0-9]{0,5}$/),
      fc.constantFrom("a", "x", "E", "e", "_", "K"),
      fc.stringMatching(/^[0-9]{0,5}$/)
    )
    .map(([a, junk, b]) => a + junk + b),
  fc.constantFrom(
    "",
    "0",
    "0.0",
    "00",
    "100000.0",
    "0100000",
    ".5",
    "5.",
    "1.2.3",
    "1e5",
    "1_000",
    "0.000000001"
  )
)

const arbMutation: fc.Arbitrary<Case> = fc.oneof(
  // bad date in an option or a future
  fc.tuple(arbBase, arbBadDate, arbStrike).map(([b, d, k]) => ({
    name: `${b}-${d}-${BigDecimal.format(k)}-C`,
    expected: "invalidExpiryDateFormat" as const
  })),
  fc
    .tuple(arbBase, arbBadDate)
    .map(([b, d]) => ({ name: `${b}-${d}`, expected: "invalidExpiryDateFormat" as const })),
  // bad date in a spread (either side)
  fc
    .tuple(
      arbBase,
      arbBadDate.filter((t) => t !== "PERP"),
      arbExpiry,
      fc.boolean()
    )
    .map(([b, bad, good, badNear]) => ({
      name: `${b}-FS-${badNear ? bad : formatExpiryCode(good)}_${badNear ? formatExpiryCode(good) : bad}`,
      expected:
        bad === "" ? ("invalidFutureSpreadFormat" as const) : ("invalidFutureSpreadDatesFormat" as const)
    })),
  // junk strike, bad C/P
  fc.tuple(arbBase, arbExpiry, arbJunkStrike).map(([b, e, k]) => ({
    name: `${b}-${formatExpiryCode(e)}-${k}-P`,
    expected: "invalidOptionFormat" as const
  })),
  fc
    .tuple(arbBase, arbExpiry, arbStrike, fc.constantFrom("c", "p", "CALL", "PUT", "X", "", "CP"))
    .map(([b, e, k, t]) => ({
      name: `${b}-${formatExpiryCode(e)}-${BigDecimal.format(k)}-${t}`,
      expected: "invalidOptionFormat" as const
    })),
  // missing parts
  fc.tuple(arbInstrument, fc.nat()).map(([i, n]) => {
    const parts = formatInstrument(i).split("-")
    const dropped = n % parts.length
    parts.splice(dropped, 1)
    // A spread without its base reads as a name whose base is "FS"; otherwise the -FS- shape is broken.
    const expected: ErrorKey =
      i.kind !== "future_spread"
        ? "invalidInstrumentFormat"
        : dropped === 0
          ? "unableToParseInstrument"
          : "invalidFutureSpreadFormat"
    return { name: parts.join("-"), expected }
  }),
  // lower case
  arbInstrument.map((i) => ({
    name: formatInstrument(i).toLowerCase(),
    expected: "unableToParseInstrument" as const
  })),
  // swapped, equal or PERP-first spread dates
  fc.tuple(arbBase, arbExpiry, arbExpiry).map(([b, x, y]) => {
    const [near, far] = [x, y].sort((p, q) => q.year - p.year || q.month - p.month || q.day - p.day)
    return {
      name: `${b}-FS-${formatExpiryCode(near!)}_${formatExpiryCode(far!)}`,
      expected: "invalidFutureSpreadDatesFormat" as const
    }
  }),
  fc.tuple(arbBase, arbExpiry).map(([b, e]) => ({
    name: `${b}-FS-PERP_${formatExpiryCode(e)}`,
    expected: "invalidFutureSpreadDatesFormat" as const
  })),
  // spread without exactly two dates
  fc.tuple(arbBase, arbExpiry, fc.constantFrom("", "_", "_PERP_PERP", "__PERP")).map(([b, e, tail]) => ({
    name: `${b}-FS-${formatExpiryCode(e)}${tail}`,
    expected: "invalidFutureSpreadFormat" as const
  })),
  // unknown base currency
  fc
    .tuple(
      fc.oneof(
        fc.stringMatching(/^[A-Z]{2,5}$/),
        fc.constantFrom("BTC_USDC", "ETH_USDC", "XBT", "btc", "Eth")
      ),
      arbInstrument
    )
    .filter(([b]) => b !== "BTC" && b !== "ETH" && b.toUpperCase() !== "FS")
    .map(([b, i]) => ({
      name: b + formatInstrument(i).slice(i.base.length),
      expected: "unableToParseInstrument" as const
    })),
  // extra dashes: trailing, or the last dash doubled
  fc.tuple(arbInstrument, fc.boolean()).map(([i, trailing]) => {
    const name = formatInstrument(i)
    const last = name.lastIndexOf("-")
    return {
      name: trailing ? `${name}-` : `${name.slice(0, last)}-${name.slice(last)}`,
      expected:
        i.kind === "future_spread"
          ? ("invalidFutureSpreadFormat" as const)
          : ("invalidInstrumentFormat" as const)
    }
  }),
  // characters outside the grammar
  fc.tuple(arbInstrument, fc.constantFrom(" ", "\t", "/", "+", "é", "\u0000")).map(([i, c]) => ({
    name: `${formatInstrument(i)}${c}`,
    expected: "invalidInstrumentFormat" as const
  })),
  fc.constant({ name: "", expected: "emptyValue" as const })
)

describe("parseInstrument on malformed names", () => {
  it("each mutation of a valid name gets the spec message of its kind", () => {
    fc.assert(
      fc.property(arbMutation, (c) => keyOf(c.name) === c.expected),
      { numRuns: MUTATION_RUNS }
    )
  })

  it("every error carries a reason that quotes the name", () => {
    fc.assert(
      fc.property(
        arbMutation.filter((c) => c.name !== ""),
        (c) =>
          Either.match(parseInstrument(c.name), {
            onLeft: (e) => e.reason?.[0]?.startsWith(JSON.stringify(c.name)) === true,
            onRight: () => false
          })
      ),
      { numRuns: MUTATION_RUNS }
    )
  })

  it("any string either parses to its own canonical name or fails with an instrument message, never throws", () => {
    const arbAnyName = fc.oneof(
      fc.string({ maxLength: 80 }),
      fc.string({ unit: fc.constantFrom(..."BTCEH-FSPERPTUAL0123456789_.JANDECMAR"), maxLength: 30 })
    )
    fc.assert(
      fc.property(arbAnyName, (name) =>
        Either.match(parseInstrument(name), {
          onLeft: (e) => (instrumentErrorKeys as ReadonlyArray<string>).includes(e.key),
          onRight: (i) => formatInstrument(i) === name
        })
      ),
      { numRuns: JUNK_RUNS }
    )
  })
})

describe("instrument examples", () => {
  it("parses the contract's examples", () => {
    const option = Either.getOrThrow(parseInstrument("BTC-27DEC30-100000-C"))
    assert.strictEqual(option.kind, "option")
    if (option.kind !== "option") return
    assert.deepStrictEqual(option.expiry, { year: 2030, month: 12, day: 27 })
    assert.isTrue(BigDecimal.equals(option.strike, BigDecimal.unsafeFromString("100000")))
    assert.strictEqual(option.optionType, "call")
    assert.strictEqual(Either.getOrThrow(parseInstrument("BTC-27DEC30")).kind, "future")
    assert.strictEqual(Either.getOrThrow(parseInstrument("ETH-PERPETUAL")).kind, "perpetual")
    const spread = Either.getOrThrow(parseInstrument("BTC-FS-27DEC30_28MAR31"))
    assert.deepStrictEqual(spread.kind === "future_spread" ? spread.far : undefined, {
      year: 2031,
      month: 3,
      day: 28
    })
    const perpSpread = Either.getOrThrow(parseInstrument("BTC-FS-27DEC30_PERP"))
    assert.strictEqual(perpSpread.kind === "future_spread" ? perpSpread.far : undefined, "perpetual")
  })

  it("accepts one-digit days and fractional strikes, rejects non-canonical spellings", () => {
    assert.strictEqual(keyOf("BTC-5JAN27-100000-P"), "ok")
    assert.strictEqual(keyOf("ETH-27DEC30-2512.5-C"), "ok")
    assert.strictEqual(keyOf("BTC-05JAN27-100000-P"), "invalidExpiryDateFormat")
    assert.strictEqual(keyOf("ETH-27DEC30-2512.50-C"), "invalidOptionFormat")
  })

  it("knows leap years", () => {
    assert.strictEqual(keyOf("BTC-29FEB28"), "ok")
    assert.strictEqual(keyOf("BTC-29FEB29"), "invalidExpiryDateFormat")
    assert.strictEqual(keyOf("BTC-29FEB00"), "ok")
  })

  it("explains the failure in the reason", () => {
    const e = Either.flip(parseInstrument("BTC-32DEC30-1-C")).pipe(Either.getOrThrow)
    assert.strictEqual(e.message, "invalid expiry date format")
    assert.deepStrictEqual(e.reason, ['"BTC-32DEC30-1-C": day 32 is not a valid day of DEC 2030'])
    const fs = Either.flip(parseInstrument("BTC-FS-28MAR31_27DEC30")).pipe(Either.getOrThrow)
    assert.deepStrictEqual(fs.reason, [
      '"BTC-FS-28MAR31_27DEC30": near leg 28MAR31 must expire before far leg 27DEC30'
    ])
  })

  it("expiry codes and timestamps", () => {
    assert.deepStrictEqual(Either.getOrThrow(parseExpiryCode("5JAN27")), { year: 2027, month: 1, day: 5 })
    assert.strictEqual(
      expiryTimestamp({ year: 2030, month: 12, day: 27 }),
      Date.parse("2030-12-27T08:00:00Z")
    )
    assert.deepStrictEqual(expiryOfDate(new Date("2030-12-27T23:59:59Z")), { year: 2030, month: 12, day: 27 })
    assert.strictEqual(legExpiryField(Either.getOrThrow(parseInstrument("BTC-FS-27DEC30_PERP"))), "27DEC30")
    assert.strictEqual(legExpiryField(Either.getOrThrow(parseInstrument("BTC-PERPETUAL"))), "PERPETUAL")
  })
})

describe("instrument schemas", () => {
  it("InstrumentName failures carry the spec message of parseInstrument", () => {
    fc.assert(
      fc.property(arbMutation, (c) => {
        const decoded = Schema.decodeUnknownEither(InstrumentName)(c.name)
        if (Either.isRight(decoded)) return false
        const issue = decoded.left.issue
        const message =
          issue._tag === "Refinement" && issue.issue._tag === "Type" ? issue.issue.message : undefined
        return message !== undefined && instrumentErrorFromIssueMessage(message)?.key === c.expected
      }),
      { numRuns: MUTATION_RUNS }
    )
  })

  it("InstrumentFromName decodes to the instrument and encodes to the canonical name", () => {
    fc.assert(
      fc.property(arbInstrument, (i) => {
        const name = formatInstrument(i)
        const decoded = Schema.decodeUnknownEither(InstrumentFromName)(name)
        return (
          Either.isRight(decoded) &&
          sameInstrument(decoded.right, i) &&
          Schema.encodeSync(InstrumentFromName)(decoded.right) === name
        )
      }),
      { numRuns: ROUND_TRIP_RUNS }
    )
  })

  it("InstrumentFromName failures carry the spec message", () => {
    const decoded = Schema.decodeUnknownEither(InstrumentFromName)("BTC-27DEC30-abc-C")
    assert.isTrue(Either.isLeft(decoded))
    if (Either.isRight(decoded)) return
    const issue = decoded.left.issue
    const message = issue._tag === "Transformation" && issue.issue._tag === "Type" ? issue.issue.message : ""
    assert.strictEqual(instrumentErrorFromIssueMessage(message ?? "")?.message, "invalid option format")
  })
})

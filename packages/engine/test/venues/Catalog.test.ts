import { assert, describe, it } from "@effect/vitest"
import { BigDecimal, Either, Option } from "effect"
import * as fc from "fast-check"
import { formatExpiryCode, type Instrument, parseInstrument } from "../../src/domain/Instrument.js"
import type { BaseCurrency, SettlementOption } from "../../src/domain/Primitives.js"
import { venueInstrumentName } from "../../src/domain/VenueContract.js"
import type { InstrumentKind, VenueInstrument } from "../../src/services/Venues.js"
import { listedContracts, VenueCatalog } from "../../src/venues/Catalog.js"
import { listedExpiries } from "../../src/venues/ExpirySchedule.js"
import { instrumentId } from "../../src/venues/InstrumentId.js"
import { strikeGrid } from "../../src/venues/VenueParameters.js"

// Sunday 22 Nov 2026, 04:53 UTC (see ExpirySchedule.test.ts for the expiries this lists).
const NOW = Date.UTC(2026, 10, 22, 4, 53)
const DAY = 86_400_000
const venues: ReadonlyArray<SettlementOption> = ["DBT", "BULL"]
const bases: ReadonlyArray<BaseCurrency> = ["BTC", "ETH"]
const kinds: ReadonlyArray<InstrumentKind> = ["option", "future", "perpetual", "future_spread"]

const catalog = new VenueCatalog()
const listing = (venue: SettlementOption, now = NOW) => catalog.instruments(venue, now)
const names = (is: ReadonlyArray<VenueInstrument>) => new Set(is.map((i) => i.instrumentName))
const isLinear = (i: VenueInstrument) => i.venueName.startsWith(`${i.baseCurrency}_USDC-`)

describe("catalog listing", () => {
  it("lists every kind for both currencies on both venues", () => {
    for (const venue of venues) {
      for (const base of bases) {
        for (const kind of kinds) {
          const found = catalog.instruments(venue, NOW, { baseCurrency: base, kind })
          assert.isAbove(found.length, 0, `${venue} ${base} ${kind}`)
          assert.isTrue(found.every((i) => i.baseCurrency === base && i.kind === kind && i.venue === venue))
        }
      }
    }
  })

  it("lists no inverse contract on BULL: every BULL contract is quoted in USDC", () => {
    for (const i of listing("BULL")) {
      assert.strictEqual(i.quoteCurrency, "USDC", i.venueName)
      assert.isTrue(isLinear(i), i.venueName)
    }
  })

  it("lists each DBT contract twice, inverse in the coin and linear in USDC", () => {
    const dbt = listing("DBT")
    const inverse = dbt.filter((i) => !isLinear(i))
    const linear = dbt.filter(isLinear)
    assert.deepStrictEqual(names(inverse), names(linear))
    assert.strictEqual(inverse.length, linear.length)
    assert.isTrue(
      inverse.every((i) => i.quoteCurrency === i.baseCurrency && i.venueName === i.instrumentName)
    )
    assert.isTrue(linear.every((i) => i.quoteCurrency === "USDC"))
  })

  it("lists the same venue-neutral names on DBT and BULL", () => {
    assert.deepStrictEqual(names(listing("DBT")), names(listing("BULL")))
  })

  it("names each contract as the venue-contract rule does", () => {
    for (const venue of venues) {
      for (const i of listing(venue)) {
        const parsed = parseInstrument(i.instrumentName)
        assert.isTrue(Either.isRight(parsed), i.instrumentName)
        if (Either.isRight(parsed)) {
          assert.strictEqual(
            i.venueName,
            venueInstrumentName(parsed.right, isLinear(i) ? "linear" : "inverse")
          )
        }
      }
    }
  })

  it("lists options on every listed expiry and grid strike, calls and puts", () => {
    const expiries = listedExpiries(NOW).options.map(formatExpiryCode)
    const btc = names(catalog.instruments("BULL", NOW, { baseCurrency: "BTC", kind: "option" }))
    assert.strictEqual(btc.size, expiries.length * strikeGrid.BTC.length * 2)
    for (const e of expiries) {
      for (const k of strikeGrid.BTC) {
        assert.isTrue(btc.has(`BTC-${e}-${k}-C`) && btc.has(`BTC-${e}-${k}-P`), `${e} ${k}`)
      }
    }
  })

  it("lists futures on month- and quarter-ends, the perpetual, and spreads against it and between quarterlies", () => {
    const listed = listedExpiries(NOW)
    const futures = listed.futures.map(formatExpiryCode)
    const quarterlies = listed.quarterlies.map(formatExpiryCode)
    const eth = (kind: InstrumentKind) =>
      names(catalog.instruments("DBT", NOW, { baseCurrency: "ETH", kind }))
    assert.deepStrictEqual(eth("future"), new Set(futures.map((e) => `ETH-${e}`)))
    assert.deepStrictEqual(eth("perpetual"), new Set(["ETH-PERPETUAL"]))
    assert.deepStrictEqual(
      eth("future_spread"),
      new Set([
        ...futures.map((e) => `ETH-FS-${e}_PERP`),
        ...quarterlies.slice(1).map((far, i) => `ETH-FS-${quarterlies[i]}_${far}`)
      ])
    )
  })

  it("carries the venue parameter table on every contract", () => {
    const expected = {
      BTC: { option: ["0.1", "25"], future: ["10", "200000"] },
      ETH: { option: ["1", "250"], future: ["10", "100000"] }
    }
    for (const i of listing("DBT")) {
      const [step, min] = expected[i.baseCurrency][i.kind === "option" ? "option" : "future"]
      assert.strictEqual(BigDecimal.format(i.amountStep), step, i.venueName)
      assert.strictEqual(BigDecimal.format(i.minBlockAmount), min, i.venueName)
      const tick =
        i.kind === "option" ? (isLinear(i) ? "5" : "0.0001") : i.baseCurrency === "BTC" ? "0.5" : "0.05"
      assert.strictEqual(BigDecimal.format(i.tickSize), tick, i.venueName)
    }
  })

  it("gives every listed option its expiry, expiry time, strike and type", () => {
    for (const i of catalog.instruments("DBT", NOW, { kind: "option" }).slice(0, 500)) {
      const [, code, strike, cp] = i.instrumentName.split("-")
      assert.strictEqual(i.expiry, code)
      assert.isAbove(i.expiresAt!, NOW)
      assert.strictEqual(new Date(i.expiresAt!).getUTCHours(), 8)
      assert.strictEqual(BigDecimal.format(i.strike!), strike)
      assert.strictEqual(i.optionType, cp === "C" ? "call" : "put")
    }
  })
})

describe("catalog resolve", () => {
  const resolve = (venue: SettlementOption, name: string, qc: "BTC" | "ETH" | "USDC", now = NOW) =>
    catalog.resolve(venue, name, qc, now)

  it("settles a coin-quoted leg on DBT in the inverse contract and a USDC-quoted one in the linear contract", () => {
    assert.strictEqual(resolve("DBT", "BTC-27DEC30-100000-C", "BTC")?.venueName, "BTC-27DEC30-100000-C")
    assert.strictEqual(resolve("DBT", "BTC-27DEC30-100000-C", "USDC")?.venueName, "BTC_USDC-27DEC30-100000-C")
    assert.strictEqual(resolve("DBT", "ETH-PERPETUAL", "ETH")?.venueName, "ETH-PERPETUAL")
    assert.strictEqual(resolve("DBT", "ETH-PERPETUAL", "USDC")?.venueName, "ETH_USDC-PERPETUAL")
  })

  it("settles every leg on BULL in the linear contract", () => {
    for (const qc of ["BTC", "USDC"] as const) {
      assert.strictEqual(resolve("BULL", "BTC-27DEC30-100000-C", qc)?.venueName, "BTC_USDC-27DEC30-100000-C")
      assert.strictEqual(resolve("BULL", "BTC-FS-27DEC30_PERP", qc)?.venueName, "BTC_USDC-FS-27DEC30_PERP")
    }
  })

  it("refuses a quote currency that is neither the leg's coin nor USDC", () => {
    assert.isUndefined(resolve("DBT", "BTC-27DEC30-100000-C", "ETH"))
    assert.isUndefined(resolve("BULL", "ETH-PERPETUAL", "BTC"))
  })

  it("resolves every listed contract to itself", () => {
    for (const venue of venues) {
      const listed = listing(venue)
      for (const i of fc.sample(fc.constantFrom(...listed), 300)) {
        assert.strictEqual(resolve(venue, i.instrumentName, i.quoteCurrency), i)
      }
    }
  })

  it("trades any live quarterly on request, however far out, from any date", () => {
    for (const now of [NOW, Date.UTC(2001, 0, 1), Date.UTC(2030, 2, 29, 7, 59)]) {
      const option = resolve("DBT", "BTC-27DEC30-100000-C", "BTC", now)
      assert.strictEqual(option?.expiry, "27DEC30")
      assert.strictEqual(option?.expiresAt, Date.UTC(2030, 11, 27, 8))
      assert.isDefined(resolve("BULL", "ETH-27DEC30", "USDC", now))
      assert.isDefined(resolve("DBT", "BTC-FS-27DEC30_PERP", "USDC", now))
      assert.isDefined(resolve("DBT", "BTC-FS-29MAR30_27DEC30", "BTC", now))
    }
  })

  it("does not trade a contract once it has expired", () => {
    const expired = Date.UTC(2030, 11, 27, 8)
    assert.isUndefined(resolve("DBT", "BTC-27DEC30-100000-C", "BTC", expired))
    assert.isUndefined(resolve("DBT", "BTC-27DEC30", "BTC", expired))
    assert.isUndefined(resolve("DBT", "BTC-FS-27DEC30_PERP", "BTC", expired))
    // remembered from an earlier resolve, still refused after expiry
    assert.isDefined(resolve("BULL", "ETH-27DEC30-3500-P", "USDC", expired - 1))
    assert.isUndefined(resolve("BULL", "ETH-27DEC30-3500-P", "USDC", expired))
  })

  it("does not trade what the venues do not list", () => {
    const refused = [
      "BTC-27DEC30-100500-C", // off the strike grid
      "BTC-27DEC30-1000000-C", // beyond the grid
      "BTC-20DEC30-100000-C", // a Friday, but neither listed nor a quarterly
      "BTC-29NOV30", // a month-end future years ahead is not listed
      "BTC-28NOV26-100000-C", // a Saturday within the listing window
      "BTC-FS-20DEC30_PERP", // spread on an unlisted future
      "BTC-27dec30-100000-C", // not the canonical spelling
      "BTC_USDC-27DEC30-100000-C", // a venue name, not a venue-neutral one
      "SOL-PERPETUAL",
      ""
    ]
    for (const name of refused) assert.isUndefined(resolve("DBT", name, "USDC"), name)
  })

  it("trades the listed non-quarterly expiries only while they are listed", () => {
    assert.isDefined(resolve("DBT", "BTC-4DEC26-100000-C", "BTC"))
    assert.isDefined(resolve("DBT", "BTC-29JAN27", "BTC"))
    assert.isUndefined(resolve("DBT", "BTC-26FEB27", "BTC"))
    assert.isDefined(resolve("DBT", "BTC-26FEB27", "BTC", NOW + 6 * DAY))
    // and a clock set back sees the earlier listing again
    assert.isUndefined(resolve("DBT", "BTC-26FEB27", "BTC"))
  })
})

describe("instrument ids", () => {
  const MAX_ID = 2 ** 31 - 1

  it("are positive 31-bit integers", () => {
    for (const venue of venues) {
      for (const i of listing(venue)) {
        assert.isTrue(Number.isInteger(i.instrumentId) && i.instrumentId > 0 && i.instrumentId <= MAX_ID)
      }
    }
  })

  it("never collide: one id, one contract, over a year of listings and far quarterlies", () => {
    const contractOf = new Map<number, string>()
    const check = (instrument: Instrument) => {
      for (const contract of ["inverse", "linear"] as const) {
        const id = Option.getOrThrow(instrumentId(instrument, contract))
        const name = venueInstrumentName(instrument, contract)
        const seen = contractOf.get(id)
        if (seen === undefined) contractOf.set(id, name)
        else assert.strictEqual(seen, name, `id ${id}`)
      }
    }
    for (let now = NOW; now < NOW + 365 * DAY; now += 30 * DAY) {
      for (const c of listedContracts(listedExpiries(now))) check(c)
    }
    for (const year of [2030, 2045, 2099]) {
      const expiry = { year, month: 12, day: 20 }
      const far = { year, month: 12, day: 27 }
      for (const base of bases) {
        for (const k of strikeGrid[base]) {
          check({ kind: "option", base, expiry, strike: BigDecimal.unsafeFromNumber(k), optionType: "put" })
        }
        check({ kind: "future", base, expiry })
        check({ kind: "future_spread", base, near: expiry, far })
        check({ kind: "future_spread", base, near: expiry, far: "perpetual" })
      }
    }
    assert.isAbove(contractOf.size, 10_000)
  })

  it("are stable: the same contract has the same id at any date and in any catalog", () => {
    const first = new VenueCatalog()
    const later = new VenueCatalog()
    for (const i of fc.sample(fc.constantFrom(...listing("DBT")), 200)) {
      const again = later.resolve("DBT", i.instrumentName, i.quoteCurrency, NOW + 2 * DAY + 1)
      if (again !== undefined) assert.strictEqual(again.instrumentId, i.instrumentId, i.venueName)
      assert.strictEqual(
        first.resolve("DBT", i.instrumentName, i.quoteCurrency, NOW)?.instrumentId,
        i.instrumentId
      )
    }
    assert.strictEqual(
      first.resolve("DBT", "BTC-27DEC30-100000-C", "BTC", NOW)?.instrumentId,
      later.resolve("DBT", "BTC-27DEC30-100000-C", "BTC", Date.UTC(2029, 0, 1))?.instrumentId
    )
  })

  it("are the same for a linear contract on DBT and BULL, and differ from DBT's inverse one", () => {
    const dbtLinear = catalog.resolve("DBT", "BTC-27DEC30-100000-C", "USDC", NOW)
    const dbtInverse = catalog.resolve("DBT", "BTC-27DEC30-100000-C", "BTC", NOW)
    const bull = catalog.resolve("BULL", "BTC-27DEC30-100000-C", "USDC", NOW)
    assert.strictEqual(dbtLinear?.instrumentId, bull?.instrumentId)
    assert.notStrictEqual(dbtLinear?.instrumentId, dbtInverse?.instrumentId)
  })
})

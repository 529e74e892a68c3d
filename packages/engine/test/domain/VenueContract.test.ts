import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import * as fc from "fast-check"
import { formatInstrument, parseInstrument } from "../../src/domain/Instrument.js"
import {
  contractQuoteCurrency,
  contractTypeFor,
  parseVenueInstrumentName,
  venueContractFor,
  venueInstrumentName
} from "../../src/domain/VenueContract.js"
import { arbInstrument, sameInstrument } from "./instrumentArbitraries.js"

const ROUND_TRIP_RUNS = 1_000
const arbContract = fc.constantFrom("inverse" as const, "linear" as const)

describe("venue contract names", () => {
  it("venue name → (instrument, contract) inverts (instrument, contract) → venue name", () => {
    fc.assert(
      fc.property(arbInstrument, arbContract, (i, contract) =>
        Either.match(parseVenueInstrumentName(venueInstrumentName(i, contract)), {
          onLeft: () => false,
          onRight: (v) => v.contract === contract && sameInstrument(v.instrument, i)
        })
      ),
      { numRuns: ROUND_TRIP_RUNS }
    )
  })

  it("an inverse contract carries the venue-neutral name itself", () => {
    fc.assert(
      fc.property(arbInstrument, (i) => venueInstrumentName(i, "inverse") === formatInstrument(i)),
      { numRuns: ROUND_TRIP_RUNS }
    )
  })

  it("a linear contract differs from the neutral name only by the _USDC suffix of the base", () => {
    fc.assert(
      fc.property(
        arbInstrument,
        (i) => venueInstrumentName(i, "linear") === formatInstrument(i).replace(i.base, `${i.base}_USDC`)
      ),
      { numRuns: ROUND_TRIP_RUNS }
    )
  })

  it("names the contract's examples", () => {
    const name = (neutral: string, contract: "inverse" | "linear") =>
      venueInstrumentName(Either.getOrThrow(parseInstrument(neutral)), contract)
    assert.strictEqual(name("BTC-27DEC30-100000-C", "linear"), "BTC_USDC-27DEC30-100000-C")
    assert.strictEqual(name("BTC-27DEC30", "inverse"), "BTC-27DEC30")
    assert.strictEqual(name("BTC-27DEC30", "linear"), "BTC_USDC-27DEC30")
    assert.strictEqual(name("BTC-PERPETUAL", "linear"), "BTC_USDC-PERPETUAL")
    assert.strictEqual(name("BTC-FS-27DEC30_PERP", "inverse"), "BTC-FS-27DEC30_PERP")
    assert.strictEqual(name("BTC-FS-27DEC30_PERP", "linear"), "BTC_USDC-FS-27DEC30_PERP")
  })

  it("errors on venue names quote the name the caller sent", () => {
    const e = Either.flip(parseVenueInstrumentName("BTC_USDC-32DEC30")).pipe(Either.getOrThrow)
    assert.strictEqual(e.message, "invalid expiry date format")
    assert.isTrue(e.reason?.[0]?.startsWith('"BTC_USDC-32DEC30": ') === true)
    assert.strictEqual(
      Either.flip(parseVenueInstrumentName("_USDC-27DEC30")).pipe(Either.getOrThrow).message,
      "unable to parse instrument"
    )
    assert.strictEqual(
      Either.flip(parseVenueInstrumentName("XRP_USDC-27DEC30")).pipe(Either.getOrThrow).message,
      "unable to parse instrument"
    )
  })
})

describe("which contract settles a leg", () => {
  it("DBT follows the RFQ's quote currency; BULL is always linear", () => {
    assert.strictEqual(contractTypeFor("DBT", "BTC"), "inverse")
    assert.strictEqual(contractTypeFor("DBT", "ETH"), "inverse")
    assert.strictEqual(contractTypeFor("DBT", "USDC"), "linear")
    assert.strictEqual(contractTypeFor("BULL", "BTC"), "linear")
    assert.strictEqual(contractTypeFor("BULL", "USDC"), "linear")
  })

  it("premiums are in the coin for inverse contracts and in USDC for linear ones", () => {
    assert.strictEqual(contractQuoteCurrency("ETH", "inverse"), "ETH")
    assert.strictEqual(contractQuoteCurrency("ETH", "linear"), "USDC")
  })

  it("a BTC-quoted RFQ settles on DBT in BTC-… and on BULL in BTC_USDC-…", () => {
    const leg = Either.getOrThrow(parseInstrument("BTC-27DEC30-100000-C"))
    assert.strictEqual(venueContractFor(leg, "DBT", "BTC").name, "BTC-27DEC30-100000-C")
    assert.strictEqual(venueContractFor(leg, "BULL", "BTC").name, "BTC_USDC-27DEC30-100000-C")
    assert.strictEqual(venueContractFor(leg, "DBT", "USDC").name, "BTC_USDC-27DEC30-100000-C")
  })
})

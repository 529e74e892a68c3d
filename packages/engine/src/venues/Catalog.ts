import { BigDecimal, Either, Option } from "effect"
import {
  compareExpiry,
  type Expiry,
  expiryTimestamp,
  formatExpiryCode,
  formatDecimal,
  formatInstrument,
  type Instrument,
  parseInstrument
} from "../domain/Instrument.js"
import type { BaseCurrency, QuoteCurrency, SettlementOption } from "../domain/Primitives.js"
import {
  type ContractType,
  contractQuoteCurrency,
  contractPrefix,
  contractTypeFor
} from "../domain/VenueContract.js"
import type { InstrumentKind, VenueInstrument } from "../services/Venues.js"
import {
  catalogStart,
  isLive,
  isQuarterlyExpiry,
  type ListedExpiries,
  listedExpiries
} from "./ExpirySchedule.js"
import { instrumentId } from "./InstrumentId.js"
import { isGridStrike, strikeGrid, venueParameters } from "./VenueParameters.js"

/**
 * The simulated venues' instrument catalog (docs/venues.md):
 * - DBT lists every contract twice, inverse (`BTC-…`, premiums in BTC) and linear (`BTC_USDC-…`,
 *   premiums in USDC); BULL lists only the linear ones. Both list options, futures, the perpetual
 *   and future spreads, for BTC and ETH.
 * - The listing follows `listedExpiries`: options on every listed expiry and grid strike, futures on
 *   the month-ends and quarter-ends, the perpetual, and future spreads of each future against the
 *   perpetual and of consecutive quarterlies.
 * - Beyond the listing, a venue also trades, on request, any contract on a live quarterly expiry
 *   (however far out) and any spread between two tradable futures: names such as
 *   `BTC-27DEC30-100000-C` then resolve at any date before they expire, which keeps tests and
 *   examples independent of today's date.
 */

export const venueContractTypes: Readonly<Record<SettlementOption, ReadonlyArray<ContractType>>> = {
  DBT: ["inverse", "linear"],
  BULL: ["linear"]
}

const bases: ReadonlyArray<BaseCurrency> = ["BTC", "ETH"]

const sameDay = (a: Expiry, b: Expiry): boolean => compareExpiry(a, b) === 0

/** Whether a future on this expiry trades at `now`: live, and a listed future expiry or a quarterly. */
const isTradableFutureExpiry = (e: Expiry, now: number, listed: ListedExpiries): boolean =>
  isLive(e, now) && (isQuarterlyExpiry(e) || listed.futures.some((f) => sameDay(f, e)))

/** The venues' rule for what trades at `now` (listed or on request); the same on DBT and BULL. */
export const isTradable = (
  instrument: Instrument,
  now: number,
  listed: ListedExpiries = listedExpiries(now)
) => {
  switch (instrument.kind) {
    case "perpetual":
      return true
    case "future":
      return isTradableFutureExpiry(instrument.expiry, now, listed)
    case "option":
      return (
        isLive(instrument.expiry, now) &&
        (isQuarterlyExpiry(instrument.expiry) || listed.options.some((e) => sameDay(e, instrument.expiry))) &&
        isGridStrike(instrument.base, formatDecimal(instrument.strike))
      )
    case "future_spread":
      return (
        isTradableFutureExpiry(instrument.near, now, listed) &&
        (instrument.far === "perpetual" || isTradableFutureExpiry(instrument.far, now, listed))
      )
  }
}

const firstExpiry = (i: Instrument): Expiry | undefined =>
  i.kind === "perpetual" ? undefined : i.kind === "future_spread" ? i.near : i.expiry

/** What every contract type of one neutral contract shares; computed once per contract. */
interface Prepared {
  readonly instrument: Instrument
  readonly name: string
  /** Id of the inverse contract; the linear one only sets the contract-type bit. */
  readonly inverseId: number
  readonly expiry: string | undefined
  readonly expiresAt: number | undefined
}

const LINEAR_ID_BIT = 1 << 29

const prepare = (instrument: Instrument): Prepared | undefined => {
  const id = instrumentId(instrument, "inverse")
  if (Option.isNone(id)) return undefined
  const expiry = firstExpiry(instrument)
  return {
    instrument,
    name: formatInstrument(instrument),
    inverseId: id.value,
    expiry: expiry === undefined ? undefined : formatExpiryCode(expiry),
    expiresAt: expiry === undefined ? undefined : expiryTimestamp(expiry)
  }
}

const fromPrepared = (venue: SettlementOption, p: Prepared, contract: ContractType): VenueInstrument => {
  const { instrument, name, expiry, expiresAt } = p
  const rules = venueParameters[instrument.base][instrument.kind]
  const common = {
    venue,
    instrumentId: contract === "linear" ? p.inverseId + LINEAR_ID_BIT : p.inverseId,
    // venueInstrumentName's rule, without formatting the name a second time
    venueName: contractPrefix(instrument.base, contract) + name.slice(instrument.base.length),
    instrumentName: name,
    kind: instrument.kind,
    baseCurrency: instrument.base,
    quoteCurrency: contractQuoteCurrency(instrument.base, contract),
    tickSize: rules.tickSize[contract],
    amountStep: rules.amountStep,
    minBlockAmount: rules.minBlockAmount
  }
  if (expiry === undefined || expiresAt === undefined) return common
  return instrument.kind === "option"
    ? { ...common, expiry, expiresAt, strike: instrument.strike, optionType: instrument.optionType }
    : { ...common, expiry, expiresAt }
}

/** The venue's record of a contract, or `undefined` if the contract has no id (see InstrumentId). */
export const makeVenueInstrument = (
  venue: SettlementOption,
  instrument: Instrument,
  contract: ContractType
): VenueInstrument | undefined => {
  const p = prepare(instrument)
  return p === undefined ? undefined : fromPrepared(venue, p, contract)
}

const keyOf = (venue: SettlementOption, contract: ContractType, instrumentName: string): string =>
  `${venue}|${contract}|${instrumentName}`

/** The contracts listed at `now`, venue-neutral (each becomes one contract per contract type). */
export const listedContracts = (listed: ListedExpiries): ReadonlyArray<Instrument> => {
  const out: Array<Instrument> = []
  for (const base of bases) {
    const strikes = strikeGrid[base].map((k) => BigDecimal.unsafeFromNumber(k))
    for (const expiry of listed.options) {
      for (const strike of strikes) {
        out.push({ kind: "option", base, expiry, strike, optionType: "call" })
        out.push({ kind: "option", base, expiry, strike, optionType: "put" })
      }
    }
    out.push({ kind: "perpetual", base })
    for (const expiry of listed.futures) {
      out.push({ kind: "future", base, expiry })
      out.push({ kind: "future_spread", base, near: expiry, far: "perpetual" })
    }
    listed.quarterlies.forEach((near, i) => {
      const far = listed.quarterlies[i + 1]
      if (far !== undefined) out.push({ kind: "future_spread", base, near, far })
    })
  }
  return out
}

interface Listing {
  readonly start: number
  readonly expiries: ListedExpiries
  /** Built on first use per venue: only the listing endpoint needs every contract. */
  readonly venues: Partial<Record<SettlementOption, ReadonlyArray<VenueInstrument>>>
}

/** Resolved contracts are remembered; past this many the memory starts over. */
const RESOLVED_MEMORY = 50_000

const isLiveContract = (i: VenueInstrument, start: number): boolean =>
  i.expiresAt === undefined || i.expiresAt > start

/**
 * The catalog as the venues use it. Whether a contract trades can only change at 08:00 UTC, and
 * once a contract trades it keeps trading until it expires (a listed expiry stays listed, the
 * strike grid is fixed), so a resolved contract is remembered and only its expiry re-checked:
 * after the first time, resolving a name is one map lookup.
 */
export class VenueCatalog {
  private listing: Listing | undefined
  /** Contracts found tradable, with the catalog start from which they were (clocks can be set back in tests). */
  private readonly resolved = new Map<
    string,
    { readonly instrument: VenueInstrument; readonly since: number }
  >()

  private at(now: number): Listing {
    const start = catalogStart(now)
    if (this.listing === undefined || this.listing.start !== start) {
      this.listing = { start, expiries: listedExpiries(now), venues: {} }
    }
    return this.listing
  }

  private remember(key: string, instrument: VenueInstrument, since: number): VenueInstrument {
    if (this.resolved.size >= RESOLVED_MEMORY) this.resolved.clear()
    this.resolved.set(key, { instrument, since })
    return instrument
  }

  private recall(key: string, start: number): VenueInstrument | undefined {
    const known = this.resolved.get(key)
    return known !== undefined && known.since <= start ? known.instrument : undefined
  }

  /** The listed expiries at `now`. */
  expiries(now: number): ListedExpiries {
    return this.at(now).expiries
  }

  /** Listed contracts of one venue, optionally of one base currency and kind. */
  instruments(
    venue: SettlementOption,
    now: number,
    filter: { readonly baseCurrency?: BaseCurrency; readonly kind?: InstrumentKind } = {}
  ): ReadonlyArray<VenueInstrument> {
    const listing = this.at(now)
    let all = listing.venues[venue]
    if (all === undefined) {
      const prepared = listedContracts(listing.expiries).flatMap((c) => prepare(c) ?? [])
      all = venueContractTypes[venue].flatMap((contract) =>
        prepared.map((p) => {
          const key = keyOf(venue, contract, p.name)
          return (
            this.recall(key, listing.start) ??
            this.remember(key, fromPrepared(venue, p, contract), listing.start)
          )
        })
      )
      listing.venues[venue] = all
    }
    const { baseCurrency, kind } = filter
    return all.filter(
      (i) =>
        (baseCurrency === undefined || i.baseCurrency === baseCurrency) &&
        (kind === undefined || i.kind === kind)
    )
  }

  /**
   * The contract `instrumentName` settles in on `venue` for a leg quoted in `quoteCurrency` (the
   * base coin or USDC; BULL always settles linear), if the venue trades it at `now`.
   */
  resolve(
    venue: SettlementOption,
    instrumentName: string,
    quoteCurrency: QuoteCurrency,
    now: number
  ): VenueInstrument | undefined {
    if (quoteCurrency !== "USDC" && !instrumentName.startsWith(`${quoteCurrency}-`)) return undefined
    const contract = contractTypeFor(venue, quoteCurrency)
    const listing = this.at(now)
    const key = keyOf(venue, contract, instrumentName)
    const known = this.recall(key, listing.start)
    if (known !== undefined) return isLiveContract(known, listing.start) ? known : undefined
    const parsed = parseInstrument(instrumentName)
    if (Either.isLeft(parsed) || !isTradable(parsed.right, now, listing.expiries)) return undefined
    const made = makeVenueInstrument(venue, parsed.right, contract)
    return made === undefined ? undefined : this.remember(key, made, listing.start)
  }
}

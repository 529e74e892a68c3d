import { Either } from "effect"
import { type ApiError, apiError } from "./Errors.js"
import { formatInstrument, type Instrument, parseInstrument } from "./Instrument.js"
import type { BaseCurrency, QuoteCurrency, SettlementOption } from "./Primitives.js"

/**
 * Which venue contract settles a venue-neutral leg. Inverse contracts (`BTC-…`) are margined and
 * settled in the base coin; linear contracts (`BTC_USDC-…`) in USDC. DBT lists both, BULL only
 * linear ones, so the RFQ's quote currency picks DBT's contract and BULL's is always linear.
 */
export type ContractType = "inverse" | "linear"

export const LINEAR_SUFFIX = "_USDC"

export interface VenueContract {
  readonly instrument: Instrument
  readonly contract: ContractType
  /** The venue's own instrument name, e.g. `BTC_USDC-27DEC30-100000-C`. */
  readonly name: string
}

/** The contract type for a settlement option, given the RFQ's requested quote currency. */
export const contractTypeFor = (option: SettlementOption, rfqQuoteCurrency: QuoteCurrency): ContractType =>
  option === "BULL" || rfqQuoteCurrency === "USDC" ? "linear" : "inverse"

/** The currency a contract's option premiums are quoted in: the coin for inverse, USDC for linear. */
export const contractQuoteCurrency = (base: BaseCurrency, contract: ContractType): QuoteCurrency =>
  contract === "linear" ? "USDC" : base

/** The venue's name prefix: `BTC` (inverse) or `BTC_USDC` (linear). */
export const contractPrefix = (base: BaseCurrency, contract: ContractType): string =>
  contract === "linear" ? `${base}${LINEAR_SUFFIX}` : base

/** `BTC-27DEC30-100000-C` → `BTC_USDC-27DEC30-100000-C` for a linear contract; unchanged for inverse. */
export const venueInstrumentName = (instrument: Instrument, contract: ContractType): string =>
  contractPrefix(instrument.base, contract) + formatInstrument(instrument).slice(instrument.base.length)

export const venueContract = (instrument: Instrument, contract: ContractType): VenueContract => ({
  instrument,
  contract,
  name: venueInstrumentName(instrument, contract)
})

/** The contract that settles `instrument` on `option` for an RFQ quoted in `rfqQuoteCurrency`. */
export const venueContractFor = (
  instrument: Instrument,
  option: SettlementOption,
  rfqQuoteCurrency: QuoteCurrency
): VenueContract => venueContract(instrument, contractTypeFor(option, rfqQuoteCurrency))

/** Venue name → neutral instrument and contract type. Errors are those of `parseInstrument`. */
export const parseVenueInstrumentName = (name: string): Either.Either<VenueContract, ApiError> => {
  const dash = name.indexOf("-")
  const prefix = dash === -1 ? name : name.slice(0, dash)
  const linear = prefix.endsWith(LINEAR_SUFFIX) && prefix.length > LINEAR_SUFFIX.length
  const neutral = linear
    ? name.slice(0, prefix.length - LINEAR_SUFFIX.length) + name.slice(prefix.length)
    : name
  return Either.match(parseInstrument(neutral), {
    onLeft: (e) => {
      // Reasons quote the parsed name; show the caller the name it sent.
      const reason = e.reason?.map((r) => r.replace(JSON.stringify(neutral), JSON.stringify(name)))
      return Either.left(reason === undefined ? e : apiError(e.key, reason))
    },
    onRight: (instrument) => Either.right(venueContract(instrument, linear ? "linear" : "inverse"))
  })
}

import type { BigDecimal, Effect, Option } from "effect"
import { Context, Data } from "effect"
import type { BaseCurrency, Direction, QuoteCurrency, SettlementOption } from "../domain/Primitives.js"

/** Kinds of instrument the venues list. */
export type InstrumentKind = "option" | "future" | "perpetual" | "future_spread"

/** One contract listed on a venue, with the trading rules that apply to it. */
export interface VenueInstrument {
  readonly venue: SettlementOption
  /** Stable numeric id of the contract on its venue (the spec's `instrumentId`). */
  readonly instrumentId: number
  /** The venue's own contract name, e.g. `BTC_USDC-27DEC30-100000-C`. */
  readonly venueName: string
  /** The venue-neutral name used in RFQ legs, e.g. `BTC-27DEC30-100000-C`. */
  readonly instrumentName: string
  readonly kind: InstrumentKind
  readonly baseCurrency: BaseCurrency
  /** Currency prices are quoted in: the base currency for inverse options, USDC for linear ones. */
  readonly quoteCurrency: QuoteCurrency
  /** `27DEC30` form; absent for perpetuals. For a future spread, the near leg's expiry. */
  readonly expiry?: string
  /** Expiry timestamp (ms); absent for perpetuals. */
  readonly expiresAt?: number
  readonly strike?: BigDecimal.BigDecimal
  readonly optionType?: "call" | "put"
  readonly tickSize: BigDecimal.BigDecimal
  readonly amountStep: BigDecimal.BigDecimal
  readonly minBlockAmount: BigDecimal.BigDecimal
}

/** An exchange account as the venue knows it (the API key our credentials hold). */
export interface VenueAccount {
  readonly credentialsId: number
  readonly clientId: string
}

export interface BlockTradeLeg {
  readonly instrument: VenueInstrument
  /** The maker's side of this leg. */
  readonly direction: Direction
  readonly price: BigDecimal.BigDecimal
  readonly amount: BigDecimal.BigDecimal
}

export interface BlockTradeRequest {
  readonly venue: SettlementOption
  /** Executing twice with the same key executes once and returns the first result. */
  readonly idempotencyKey: string
  readonly maker: VenueAccount
  readonly taker: VenueAccount
  readonly legs: ReadonlyArray<BlockTradeLeg>
}

export interface ExecutedBlockTrade {
  readonly venue: SettlementOption
  readonly idempotencyKey: string
  /** The block trade id on the venue (the spec's `exchangeTradeId`). */
  readonly blockTradeId: string
  readonly executedAt: number
  readonly legs: ReadonlyArray<{
    readonly venueName: string
    readonly direction: Direction
    readonly price: string
    readonly amount: string
    readonly tradeId: string
  }>
  readonly makerClientId: string
  readonly takerClientId: string
}

/** The venue refused: a simulation or execution failure the client should read. */
export class VenueRejection extends Data.TaggedError("VenueRejection")<{
  readonly venue: SettlementOption
  readonly reason: string
}> {}

/** Permission scopes a venue account needs for the RFQ business. */
export interface AccountPermissions {
  readonly blockRfq: boolean
  readonly blockTrade: boolean
}

export interface VenuesService {
  /** Contracts listed on `venue` for a base currency, optionally of one kind. */
  readonly instruments: (
    venue: SettlementOption,
    filter: { readonly baseCurrency: BaseCurrency; readonly kind?: InstrumentKind }
  ) => Effect.Effect<ReadonlyArray<VenueInstrument>>
  /**
   * The contract a venue-neutral leg settles in on `venue` for the given quote currency (the
   * contract's "RFQ creation" rule), if the venue lists it.
   */
  readonly resolve: (
    venue: SettlementOption,
    instrumentName: string,
    quoteCurrency: QuoteCurrency
  ) => Effect.Effect<Option.Option<VenueInstrument>>
  /** The per-leg price band around `mark` that a quote may not leave (inclusive). */
  readonly priceBand: (
    instrument: VenueInstrument,
    mark: BigDecimal.BigDecimal
  ) => { readonly low: BigDecimal.BigDecimal; readonly high: BigDecimal.BigDecimal }
  /** What the venue lets this account do. */
  readonly permissions: (venue: SettlementOption, account: VenueAccount) => Effect.Effect<AccountPermissions>
  /** The venue's pre-check of a block trade (split rule 5): no side effect. */
  readonly simulateBlockTrade: (request: BlockTradeRequest) => Effect.Effect<void, VenueRejection>
  /** Executes a block trade, idempotent by `request.idempotencyKey`. */
  readonly executeBlockTrade: (
    request: BlockTradeRequest
  ) => Effect.Effect<ExecutedBlockTrade, VenueRejection>
  /** The block trade executed under `idempotencyKey`, if any (reconciliation after a crash). */
  readonly findByKey: (
    venue: SettlementOption,
    idempotencyKey: string
  ) => Effect.Effect<Option.Option<ExecutedBlockTrade>>
  /** Every block trade the venue executed, oldest first (tests and reconciliation read it). */
  readonly ledger: (venue: SettlementOption) => Effect.Effect<ReadonlyArray<ExecutedBlockTrade>>
}

export class Venues extends Context.Tag("rfq/Venues")<Venues, VenuesService>() {}

import type {
  AllocationStatus,
  BaseCurrency,
  Direction,
  QuoteCurrency,
  QuoteStatus,
  SettlementOption
} from "../domain/Primitives.js"

/**
 * Records are the engine's own representation of an RFQ and what hangs off it. Decimal values are
 * canonical decimal strings (`"0.1"`, `"-12.5"`): exact, compact in memory, and JSON-safe so a
 * machine snapshot round-trips through JSON. Arithmetic converts them to BigDecimal.
 */
export type Dec = string

/** Who is calling: the tenant is the desk; a maker desk also has a maker id. */
export interface Caller {
  readonly deskId: number
  readonly userId: number
  readonly roles: ReadonlyArray<"trader" | "viewer">
  /** The maker id of the caller's desk, when the desk is a maker. */
  readonly makerId?: string | undefined
}

/** The venue contract a leg settles in, per settlement option of the RFQ. */
export interface LegContract {
  readonly instrumentId: number
  readonly venueName: string
  readonly quoteCurrency: QuoteCurrency
}

export interface LegRecord {
  readonly instrumentName: string
  readonly direction: Direction
  readonly ratio: Dec
  /** Leg amount = RFQ amount × ratio. */
  readonly amount: Dec
  /** Indicative price the taker sent, if any. */
  readonly price?: Dec | undefined
  readonly expiry?: string | undefined
  readonly contracts: Partial<Record<SettlementOption, LegContract>>
}

export interface HedgeRecord {
  readonly instrumentName: string
  readonly direction: Direction
  readonly amount: Dec
  readonly price: Dec
  readonly expiry?: string | undefined
  readonly contracts: Partial<Record<SettlementOption, LegContract>>
}

export interface SettlementAccount {
  readonly credentialsId: number
  readonly percentage: Dec
}

export interface RfqRecord {
  readonly id: number
  /** The caller's idempotency key (the path id of create); 0 means none. */
  readonly requestId: number
  readonly takerDeskId: number
  readonly takerUserId: number
  readonly label?: string | undefined
  readonly kind: string
  readonly strategy: string
  readonly description: string
  readonly baseCurrency: BaseCurrency
  readonly quoteCurrency: QuoteCurrency
  readonly quoteCurrencies: Partial<Record<SettlementOption, QuoteCurrency>>
  readonly amount: Dec
  readonly anonymous: boolean
  readonly settlementOptions: ReadonlyArray<SettlementOption>
  /** Accounts per option: from settlementAccounts, or the single settlementCredentials at 100 %. */
  readonly settlementAccounts: Partial<Record<SettlementOption, ReadonlyArray<SettlementAccount>>>
  /** True when the RFQ was created with settlementAccounts (splits): the trade reports allocations. */
  readonly split: boolean
  readonly makers: Partial<Record<SettlementOption, ReadonlyArray<string>>>
  readonly legs: ReadonlyArray<LegRecord>
  readonly hedge?: HedgeRecord | undefined
  readonly markPrice: Dec
  readonly createdAt: number
  readonly expiresAt: number
}

export interface QuoteLegRecord {
  readonly instrumentName: string
  readonly instrumentId: number
  /** The maker's side of this leg. */
  readonly direction: Direction
  readonly price: Dec
  readonly amount: Dec
}

export interface QuoteHedgeRecord {
  readonly instrumentName: string
  readonly instrumentId: number
  readonly direction: Direction
  readonly price: Dec
  readonly amount: Dec
}

export interface QuoteRecord {
  readonly id: number
  readonly rfqId: number
  readonly makerId: string
  readonly makerDeskId: number
  readonly makerUserId: number
  readonly label?: string | undefined
  /** The maker's side of the structure. */
  readonly direction: Direction
  readonly settlementOption: SettlementOption
  readonly settlementCredentials: number
  readonly quoteCurrency: QuoteCurrency
  readonly amount: Dec
  /** Structure price Σ sᵢ·ratioᵢ·pᵢ from the leg prices. */
  readonly price: Dec
  readonly legs: ReadonlyArray<QuoteLegRecord>
  readonly hedge?: QuoteHedgeRecord | undefined
  readonly status: QuoteStatus
  /**
   * Unix ms from which the quote no longer stands (issue 16): it turns `expired` then. Absent: the
   * quote stands as long as its RFQ is open.
   */
  readonly validUntil?: number | undefined
  readonly createdAt: number
  readonly updatedAt: number
}

export interface AllocationRecord {
  readonly id: number
  readonly credentialsId: number
  readonly percentage: Dec
  readonly amount: Dec
  readonly status: AllocationStatus
  readonly idempotencyKey: string
  readonly exchangeTradeId?: string | undefined
  readonly reason?: string | undefined
  readonly updatedAt: number
}

export interface TradeRecord {
  readonly id: number
  readonly rfqId: number
  readonly quoteId: number
  readonly makerId: string
  readonly makerDeskId: number
  readonly settlementOption: SettlementOption
  /** The maker's side (the accepted quote's direction); the taker's side is the opposite. */
  readonly makerDirection: Direction
  readonly price: Dec
  readonly amount: Dec
  readonly filledAmount: Dec
  readonly createdAt: number
  readonly allocations: ReadonlyArray<AllocationRecord>
}

/** What an RFQ actor holds: the RFQ, its active quotes, and its trade once accepted. */
export interface RfqState {
  readonly rfq: RfqRecord
  /** Active quotes by id. Closed quotes live only in storage. */
  readonly quotes: Readonly<Record<number, QuoteRecord>>
  readonly trade?: TradeRecord | undefined
  readonly closedAt?: number | undefined
}

import { Schema } from "effect"

/** Settlement options (venues) of the spec. */
export const SettlementOption = Schema.Literal("BULL", "DBT")
export type SettlementOption = typeof SettlementOption.Type
export const settlementOptions: ReadonlyArray<SettlementOption> = ["BULL", "DBT"]

export const Direction = Schema.Literal("buy", "sell")
export type Direction = typeof Direction.Type
export const oppositeDirection = (d: Direction): Direction => (d === "buy" ? "sell" : "buy")
/** sᵢ of the contract's structure price: +1 for a buy leg, −1 for a sell leg. */
export const directionSign = (d: Direction): 1 | -1 => (d === "buy" ? 1 : -1)

export const Role = Schema.Literal("taker", "maker")
export type Role = typeof Role.Type

/** Base currencies the venues list. */
export const BaseCurrency = Schema.Literal("BTC", "ETH")
export type BaseCurrency = typeof BaseCurrency.Type

/** Quote currencies: the base currency itself (inverse contracts) or USDC (linear contracts). */
export const QuoteCurrency = Schema.Literal("BTC", "ETH", "USDC")
export type QuoteCurrency = typeof QuoteCurrency.Type

export const RfqStatus = Schema.Literal("open", "filled", "filledPartial", "cancelled", "expired")
export type RfqStatus = typeof RfqStatus.Type

export const QuoteStatus = Schema.Literal("active", "filled", "cancelled", "expired")
export type QuoteStatus = typeof QuoteStatus.Type

export const AllocationStatus = Schema.Literal("pending", "filled", "failed")
export type AllocationStatus = typeof AllocationStatus.Type

/** Branded integer ids. */
const positiveInt = Schema.Int.pipe(Schema.positive())
export const RfqId = positiveInt.pipe(Schema.brand("RfqId"))
export type RfqId = typeof RfqId.Type
export const QuoteId = positiveInt.pipe(Schema.brand("QuoteId"))
export type QuoteId = typeof QuoteId.Type
export const TradeId = positiveInt.pipe(Schema.brand("TradeId"))
export type TradeId = typeof TradeId.Type
export const CredentialsId = positiveInt.pipe(Schema.brand("CredentialsId"))
export type CredentialsId = typeof CredentialsId.Type
export const DeskId = positiveInt.pipe(Schema.brand("DeskId"))
export type DeskId = typeof DeskId.Type
export const UserId = positiveInt.pipe(Schema.brand("UserId"))
export type UserId = typeof UserId.Type
/** Maker ids are strings (`maker-1`), used as values of the `makers` request field. */
export const MakerId = Schema.String.pipe(Schema.minLength(1), Schema.brand("MakerId"))
export type MakerId = typeof MakerId.Type

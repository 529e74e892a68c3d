import { Schema } from "effect"
import {
  BooleanField,
  DirectionField,
  ExchangeCodeField,
  InstrumentNameField,
  LegPriceField,
  legPriceIssue,
  PositiveDecimalField,
  textField,
  TimestampField
} from "./Fields.js"
import { arrayOf, duplicateIssues, named, object, optional } from "./Objects.js"
import { CredentialsIdParam } from "./Params.js"

/** Request schemas of the account and block-trade endpoints. */

export const bulkLimits = { blockTrades: 100, tradesPerBlockTrade: 20 } as const

// ---- exchange credentials ----------------------------------------------------------------------

export const CreateExchangeCredentialsRequest = object({
  alias: textField(64).annotations({ description: "Custom alias, unique per desk." }),
  exchange: ExchangeCodeField,
  clientId: textField(256).annotations({ description: "Client id of the API key on the exchange." }),
  clientSecret: textField(1024).annotations({
    description: "Client secret of the API key; stored encrypted."
  }),
  isExchangeDefault: optional(
    BooleanField.annotations({ description: "Make these the desk's default credentials for the exchange." })
  )
}).annotations(named("CreateExchangeCredentialsRequest", "Body of `POST /account/exchange-credentials`."))
export type CreateExchangeCredentialsRequest = typeof CreateExchangeCredentialsRequest.Type

const credentialsPath = (identifier: string, description: string) =>
  object({ id: CredentialsIdParam.annotations({ description: "The credentialsId." }) }).annotations(
    named(identifier, description)
  )

export const GetExchangeCredentialsRequest = credentialsPath(
  "GetExchangeCredentialsRequest",
  "Path of `GET /account/exchange-credentials/{id}`."
)
export type GetExchangeCredentialsRequest = typeof GetExchangeCredentialsRequest.Type
export const DeleteExchangeCredentialsRequest = credentialsPath(
  "DeleteExchangeCredentialsRequest",
  "Path of `DELETE /account/exchange-credentials/{id}`."
)
export type DeleteExchangeCredentialsRequest = typeof DeleteExchangeCredentialsRequest.Type

// ---- POST /block-trade/bulk --------------------------------------------------------------------

export const BulkTrade = object({
  direction: DirectionField.annotations({ description: "The maker's side." }),
  instrumentName: InstrumentNameField,
  price: LegPriceField,
  amount: PositiveDecimalField
})
  .pipe(Schema.filter((trade) => legPriceIssue(trade)))
  .annotations(named("BulkTrade", "One instrument of a block trade."))
export type BulkTrade = typeof BulkTrade.Type

export const BulkBlockTrade = object({
  nonce: textField(128).annotations({ description: "Unique per desk, forever: a replay is refused." }),
  makerExchangeCredentials: textField(64).annotations({
    description: "Alias of the maker side's credentials."
  }),
  takerExchangeCredentials: textField(64).annotations({
    description: "Alias of the taker side's credentials."
  }),
  trades: arrayOf(BulkTrade, { min: 1, max: bulkLimits.tradesPerBlockTrade }).pipe(
    Schema.filter((trades) => duplicateIssues(trades, (t) => t.instrumentName, "instrumentName"))
  )
}).annotations(named("BulkBlockTrade", "One block trade of a bulk request; it executes on its own."))
export type BulkBlockTrade = typeof BulkBlockTrade.Type

/** A nonce repeated inside one request is refused before anything executes. */
export const BulkBlockTradeRequest = object({
  timestamp: TimestampField.annotations({ description: "Time the request was made (unix ms)." }),
  blockTrades: arrayOf(BulkBlockTrade, { min: 1, max: bulkLimits.blockTrades }).pipe(
    Schema.filter((blockTrades) => duplicateIssues(blockTrades, (b) => b.nonce, "nonce"))
  )
}).annotations(named("BulkBlockTradeRequest", "Body of `POST /block-trade/bulk`."))
export type BulkBlockTradeRequest = typeof BulkBlockTradeRequest.Type

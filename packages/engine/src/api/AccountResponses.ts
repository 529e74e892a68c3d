import { Schema } from "effect"
import {
  CredentialsId,
  DeskId,
  Direction,
  MakerId,
  QuoteCurrency,
  SettlementOption
} from "../domain/Primitives.js"
import { Decimal, Int, optional, responseObject, Text } from "./ResponseFields.js"

/** Response schemas of the account, exchange and block-trade endpoints. */

export const ExchangeCredentials = responseObject(
  "ExchangeCredentials",
  "Exchange credentials as listed by `GET /account/exchange-credentials` (a bare array).",
  {
    alias: Text,
    credentialsId: CredentialsId,
    exchange: Text.annotations({ description: "Exchange name." }),
    exchangeId: Int,
    exchangeShortCode: SettlementOption.annotations({
      description: "Short code; equals a settlement option."
    }),
    isExchangeDefault: Schema.Boolean
  }
)
export type ExchangeCredentials = typeof ExchangeCredentials.Type

export const ExchangeCredentialsList = Schema.Array(ExchangeCredentials).annotations({
  identifier: "ExchangeCredentialsList",
  title: "ExchangeCredentialsList",
  description: "Answer of `GET /account/exchange-credentials`."
})

/** The single-item form: decrypted clientId and clientSecret, no exchange name or short code. */
export const ExchangeCredentialsDetail = responseObject(
  "ExchangeCredentialsDetail",
  "Answer of `GET /account/exchange-credentials/{id}`, with the decrypted secret.",
  {
    alias: Text,
    clientId: Text,
    clientSecret: Text,
    credentialsId: CredentialsId,
    exchangeId: Int,
    isExchangeDefault: Schema.Boolean
  }
)
export type ExchangeCredentialsDetail = typeof ExchangeCredentialsDetail.Type

export const CreateExchangeCredentialsResponse = responseObject(
  "CreateExchangeCredentialsResponse",
  "Answer of `POST /account/exchange-credentials`.",
  { credentialsId: CredentialsId }
)
export type CreateExchangeCredentialsResponse = typeof CreateExchangeCredentialsResponse.Type

export const DeleteExchangeCredentialsResponse = responseObject(
  "DeleteExchangeCredentialsResponse",
  "Answer of `DELETE /account/exchange-credentials/{id}`.",
  { credentialsId: CredentialsId }
)
export type DeleteExchangeCredentialsResponse = typeof DeleteExchangeCredentialsResponse.Type

export const OtcCounterparty = responseObject("OtcCounterparty", "An OTC counterparty (another desk).", {
  id: DeskId,
  name: Text
})
export type OtcCounterparty = typeof OtcCounterparty.Type

export const OtcCounterpartyList = Schema.Array(OtcCounterparty).annotations({
  identifier: "OtcCounterpartyList",
  title: "OtcCounterpartyList",
  description: "Answer of `GET /account/otc-counterparty`."
})

export const Maker = responseObject("Maker", "A maker and the settlement options it can trade through now.", {
  makerId: MakerId,
  name: Text,
  settlementOptions: Schema.Array(SettlementOption)
})
export type Maker = typeof Maker.Type

export const MakerList = Schema.Array(Maker).annotations({
  identifier: "MakerList",
  title: "MakerList",
  description: "Answer of `GET /exchange/maker`."
})

export const InstrumentListing = responseObject(
  "InstrumentListing",
  "An instrument usable as a leg on a settlement option.",
  {
    instrumentName: Text.annotations({ description: "Venue-neutral name to use in legs." }),
    kind: Schema.Literal("option", "future", "perpetual", "future_spread").annotations({
      description: "The query's `kind=future` lists futures, perpetuals and future spreads."
    }),
    expiry: optional(
      Text.annotations({
        description: "Expiry date, e.g. `27DEC30`; a spread's near leg; absent for a perpetual."
      })
    ),
    strike: optional(Decimal),
    optionType: optional(Schema.Literal("call", "put")),
    quoteCurrency: QuoteCurrency.annotations({
      description:
        "Quote currency of the venue contract listed: the base currency (inverse) or USDC (linear)."
    }),
    tickSize: Decimal.annotations({ description: "Price tick in the option's quote currency." }),
    amountStep: Decimal.annotations({ description: "Amount step." }),
    minBlockAmount: Decimal.annotations({ description: "Venue minimum block trade amount." })
  }
)
export type InstrumentListing = typeof InstrumentListing.Type

export const InstrumentListings = Schema.Array(InstrumentListing).annotations({
  identifier: "InstrumentListings",
  title: "InstrumentListings",
  description: "Answer of `GET /exchange/instruments`."
})

export const BulkExchangeTrade = responseObject("BulkExchangeTrade", "A trade executed by a block trade.", {
  exchangeTradeId: Text,
  instrumentName: Text,
  direction: Direction.annotations({ description: "The maker's side." }),
  price: Decimal,
  amount: Decimal
})
export type BulkExchangeTrade = typeof BulkExchangeTrade.Type

export const BulkExchangeResult = responseObject(
  "BulkExchangeResult",
  "The venue's answer to a block trade.",
  {
    exchange: SettlementOption,
    exchangeBlockTradeId: Text.annotations({ description: "The venue's own id of the block trade." }),
    trades: Schema.Array(BulkExchangeTrade)
  }
)
export type BulkExchangeResult = typeof BulkExchangeResult.Type

export const BulkExchangeError = responseObject("BulkExchangeError", "Why a block trade was not executed.", {
  message: Text,
  reason: optional(Schema.Array(Text))
})
export type BulkExchangeError = typeof BulkExchangeError.Type

/** Exactly one of `exchangeResult` (with `blockTradeId`) and `exchangeError` is present. */
export const BulkBlockTradeResult = responseObject(
  "BulkBlockTradeResult",
  "Outcome of one block trade of `POST /block-trade/bulk`.",
  {
    nonce: Text,
    blockTradeId: optional(
      Int.annotations({
        description: "Our id of the block trade (an integer, unique); the venue's id is in `exchangeResult`."
      })
    ),
    exchangeResult: optional(BulkExchangeResult),
    exchangeError: optional(BulkExchangeError)
  }
)
export type BulkBlockTradeResult = typeof BulkBlockTradeResult.Type

export const BulkBlockTradeResponse = Schema.Array(BulkBlockTradeResult).annotations({
  identifier: "BulkBlockTradeResponse",
  title: "BulkBlockTradeResponse",
  description: "Answer of `POST /block-trade/bulk`: one element per block trade, in request order."
})

import { Schema } from "effect"
import {
  CredentialsId,
  Direction,
  MakerId,
  QuoteCurrency,
  QuoteId,
  QuoteStatus,
  RfqId,
  SettlementOption
} from "../domain/Primitives.js"
import { Count, Decimal, Int, optional, pageOf, responseObject, Text, Timestamp } from "./ResponseFields.js"
import { RfqHedge } from "./RfqResponses.js"

/** Response schemas of the quote endpoints, for the maker and for the taker. */

/** How long a quote stands, as both its maker and the taker see it (issue 16). */
const validUntil = optional(
  Timestamp.annotations({ description: "Unix ms until which the quote stands, when the maker set one." })
)

export const QuoteLegView = responseObject("QuoteLegView", "Per-leg breakdown of a maker's quote.", {
  instrumentId: Int,
  instrumentName: Text,
  price: Decimal,
  amount: Decimal
})
export type QuoteLegView = typeof QuoteLegView.Type

/**
 * A quote in the maker's list. `rfqId` and `status` are additions to the spec's fields: without them
 * a maker cannot tell which RFQ a quote belongs to or whether it is still active.
 */
export const Quote = responseObject("Quote", "A quote in the maker's list (`GET /rfq/quotes`).", {
  rfqQuoteId: QuoteId,
  rfqId: RfqId,
  status: QuoteStatus,
  label: optional(Text.annotations({ description: "The maker's client quote id." })),
  direction: Direction.annotations({ description: "The maker's side." }),
  price: Decimal.annotations({ description: "Structure price in the quote currency of the chosen option." }),
  amount: Decimal,
  settlementOption: SettlementOption,
  settlementCredentials: optional(
    CredentialsId.annotations({ description: "exchangeCredentialsId used to settle." })
  ),
  quoteCurrency: QuoteCurrency,
  legs: optional(
    Schema.Array(QuoteLegView).annotations({ description: "Only for quotes received directly." })
  ),
  hedge: optional(RfqHedge),
  validUntil,
  createdAt: Timestamp
})
export type Quote = typeof Quote.Type

export const QuotePage = pageOf("QuotePage", "A page of `GET /rfq/quotes`, newest first.", Quote)
export type QuotePage = typeof QuotePage.Type

export const TakerQuoteLeg = responseObject("TakerQuoteLeg", "A leg of a quote received by the taker.", {
  instrumentId: Int,
  instrumentName: Text,
  direction: Direction,
  price: Decimal,
  amount: Decimal
})
export type TakerQuoteLeg = typeof TakerQuoteLeg.Type

export const TakerQuote = responseObject("TakerQuote", "A quote received on the caller's RFQ.", {
  rfqQuoteId: QuoteId,
  price: Decimal,
  amount: Decimal,
  settlementOption: SettlementOption,
  quoteCurrency: QuoteCurrency,
  makers: Schema.Array(MakerId).annotations({ description: "Maker ids behind the quote." }),
  legs: Schema.Array(TakerQuoteLeg),
  hedge: optional(RfqHedge),
  validUntil,
  createdAt: Timestamp
})
export type TakerQuote = typeof TakerQuote.Type

/** One element per settlement option with quotes, so currencies never mix in one ladder. */
export const TakerQuotes = responseObject("TakerQuotes", "Quotes of one settlement option of an RFQ.", {
  rfqId: RfqId,
  settlementOption: SettlementOption,
  quoteCurrency: QuoteCurrency,
  bids: Schema.Array(TakerQuote).annotations({ description: "Makers' buy quotes, highest first." }),
  asks: Schema.Array(TakerQuote).annotations({ description: "Makers' sell quotes, lowest first." })
})
export type TakerQuotes = typeof TakerQuotes.Type

export const TakerQuotesResponse = Schema.Array(TakerQuotes).annotations({
  identifier: "TakerQuotesResponse",
  title: "TakerQuotesResponse",
  description: "Answer of `GET /rfq/{id}/quote`."
})
export type TakerQuotesResponse = typeof TakerQuotesResponse.Type

export const CreateQuoteResponse = responseObject("CreateQuoteResponse", "Answer of `POST /rfq/quote`.", {
  rfqQuoteId: QuoteId
})
export type CreateQuoteResponse = typeof CreateQuoteResponse.Type

export const UpdateQuoteResponse = responseObject("UpdateQuoteResponse", "Answer of `PUT /rfq/quote`.", {
  rfqQuoteId: QuoteId,
  rfqId: RfqId,
  label: optional(Text),
  direction: Direction,
  price: Decimal,
  validUntil: optional(Timestamp)
})
export type UpdateQuoteResponse = typeof UpdateQuoteResponse.Type

export const DeleteQuoteResponse = responseObject("DeleteQuoteResponse", "Answer of `DELETE /rfq/quote`.", {
  message: Text
})
export type DeleteQuoteResponse = typeof DeleteQuoteResponse.Type

export const CancelAllQuotesResponse = responseObject(
  "CancelAllQuotesResponse",
  "Answer of `POST /rfq/quote/cancel-all`.",
  { message: Text, cancelledCount: Count }
)
export type CancelAllQuotesResponse = typeof CancelAllQuotesResponse.Type

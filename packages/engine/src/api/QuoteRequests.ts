import { Schema } from "effect"
import {
  BaseCurrencyField,
  CredentialsIdField,
  DirectionField,
  InstrumentNameField,
  LabelField,
  LegPriceField,
  legPriceIssue,
  PositiveDecimalField,
  QuoteIdField,
  RfqIdField,
  SettlementOptionField
} from "./Fields.js"
import { showValue } from "./Messages.js"
import { named, object, optional } from "./Objects.js"
import { legsWithUniqueInstruments } from "./RfqRequests.js"

/** Request schemas of the maker's quote endpoints. */

export const QuoteLeg = object({
  instrumentName: InstrumentNameField,
  price: LegPriceField
})
  .pipe(Schema.filter((leg) => legPriceIssue(leg)))
  .annotations(named("QuoteLeg", "The maker's price for one leg of the RFQ, in the RFQ's quote currency."))
export type QuoteLeg = typeof QuoteLeg.Type

/**
 * The maker's price for the RFQ's hedge. Direction and amount are the RFQ's, so only the instrument
 * (which must match the RFQ's hedge) and the price are sent. A hedge is a future or perpetual: price > 0.
 */
export const QuoteHedge = object({
  instrumentName: InstrumentNameField,
  price: PositiveDecimalField.annotations({ description: "In the hedge item's quote currency." })
}).annotations(named("QuoteHedge", "The maker's price for the RFQ's hedge."))
export type QuoteHedge = typeof QuoteHedge.Type

const validUntilMessage = "must be a positive integer (unix ms)"

/**
 * The quote's `validUntil` (issue 16): unix ms as a JSON integer (a numeric string, a fraction, a
 * negative or an unsafe integer is refused here). Whether it is after now and at most the RFQ's
 * `expiresAt` is the RFQ's rule (`rfq/QuoteExpiry.ts#validUntilRejection`).
 */
export const ValidUntilField = Schema.Number.annotations({
  message: (issue) => `expected a timestamp in milliseconds, got ${showValue(issue.actual)}`
})
  .pipe(
    Schema.int({ message: () => validUntilMessage }),
    Schema.positive({ message: () => validUntilMessage })
  )
  .annotations({
    description:
      "Unix ms until which the quote stands; after now and at most the RFQ's expiresAt. At that instant the quote turns expired."
  })

const quoteFields = {
  label: optional(
    LabelField.annotations({ description: "The maker's client quote id, unique among its active quotes." })
  ),
  amount: PositiveDecimalField.annotations({ description: "Amount quoted for; at most the RFQ amount." }),
  settlementOption: SettlementOptionField,
  settlementCredentials: optional(
    CredentialsIdField.annotations({
      description: "exchangeCredentialsId used to settle on the chosen option."
    })
  ),
  legs: legsWithUniqueInstruments(QuoteLeg),
  hedge: optional(QuoteHedge),
  validUntil: optional(ValidUntilField)
}

export const CreateQuoteRequest = object({
  rfqId: RfqIdField,
  direction: DirectionField.annotations({ description: "The maker's side: `sell` is an ask, `buy` a bid." }),
  ...quoteFields
}).annotations(named("CreateQuoteRequest", "Body of `POST /rfq/quote`."))
export type CreateQuoteRequest = typeof CreateQuoteRequest.Type

/** Requests that name a quote by `rfqQuoteId`, `label`, or both (then both must name the same quote). */
const identifiesQuote = (q: { readonly rfqQuoteId?: unknown; readonly label?: unknown }) =>
  q.rfqQuoteId !== undefined || q.label !== undefined ? undefined : "rfqQuoteId or label is required"

export const UpdateQuoteRequest = object({
  rfqQuoteId: optional(QuoteIdField),
  ...quoteFields
})
  .pipe(Schema.filter(identifiesQuote))
  .annotations(
    named("UpdateQuoteRequest", "Body of `PUT /rfq/quote`: `rfqQuoteId` or `label` identifies the quote.")
  )
export type UpdateQuoteRequest = typeof UpdateQuoteRequest.Type

export const DeleteQuoteRequest = object({
  rfqQuoteId: optional(QuoteIdField),
  label: optional(LabelField)
})
  .pipe(Schema.filter(identifiesQuote))
  .annotations(
    named(
      "DeleteQuoteRequest",
      "Body of `DELETE /rfq/quote`: `rfqQuoteId` and/or `label` identifies the quote."
    )
  )
export type DeleteQuoteRequest = typeof DeleteQuoteRequest.Type

export const CancelAllQuotesRequest = object({
  rfqId: optional(RfqIdField.annotations({ description: "Only this RFQ's quotes." })),
  baseCurrency: optional(
    BaseCurrencyField.annotations({ description: "Only quotes of RFQs in this base currency." })
  )
}).annotations(
  named("CancelAllQuotesRequest", "Body of `POST /rfq/quote/cancel-all`; neither field cancels every quote.")
)
export type CancelAllQuotesRequest = typeof CancelAllQuotesRequest.Type

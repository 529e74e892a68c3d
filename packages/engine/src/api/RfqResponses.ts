import { Schema } from "effect"
import {
  AllocationStatus,
  BaseCurrency,
  CredentialsId,
  Direction,
  MakerId,
  QuoteCurrency,
  QuoteId,
  RfqId,
  RfqStatus,
  Role,
  SettlementOption,
  TradeId
} from "../domain/Primitives.js"
import { settlementOptionMap } from "./Objects.js"
import { Decimal, Int, optional, pageOf, responseObject, Text, Timestamp } from "./ResponseFields.js"

/**
 * Response schemas of the RFQ endpoints. Visibility is partly structural: `RfqListItem` and
 * `MakerRfq` have no slot for the fields their audience must not see, so encoding through them
 * drops those fields even if the engine handed them over.
 */

export const RfqLeg = responseObject("RfqLeg", "A leg of an RFQ.", {
  instrumentId: Int.annotations({ description: "Instrument id of the leg." }),
  instrumentName: Text.annotations({ description: "Full instrument name." }),
  direction: Direction,
  ratio: Decimal.annotations({ description: "Ratio, at most 2 decimal places." }),
  expiry: optional(Text.annotations({ description: "Expiry date, e.g. `27DEC30`; absent for a perpetual." })),
  amount: Decimal.annotations({ description: "Amount of the leg: RFQ amount × ratio." })
})
export type RfqLeg = typeof RfqLeg.Type

export const RfqHedge = responseObject("RfqHedge", "The hedge of an RFQ or quote.", {
  amount: Decimal.annotations({ description: "In the hedge item's quote currency." }),
  direction: Direction,
  expiry: optional(Text.annotations({ description: "Expiry date of the hedge." })),
  instrumentId: optional(Int.annotations({ description: "Instrument id." })),
  instrumentName: optional(Text),
  price: Decimal.annotations({ description: "In the hedge item's quote currency." })
})
export type RfqHedge = typeof RfqHedge.Type

export const RfqSettlementAccount = responseObject(
  "RfqSettlementAccount",
  "A settlement account of an RFQ with its split percentage (taker only).",
  { settlementOption: SettlementOption, credentialsId: CredentialsId, percentage: Decimal }
)
export type RfqSettlementAccount = typeof RfqSettlementAccount.Type

/** One account's outcome of a trade. `reason` explains a `failed` allocation. */
export const Allocation = responseObject("Allocation", "Per-account settlement outcome of a trade.", {
  allocationId: optional(
    Int.annotations({ description: "Id of the allocation (one per account and trade)." })
  ),
  settlementOption: optional(
    SettlementOption.annotations({ description: "The venue the account settles on." })
  ),
  credentialsId: CredentialsId,
  percentage: Decimal.annotations({ description: "The account's split percentage." }),
  amount: Decimal.annotations({ description: "Amount allocated to the account, in base currency." }),
  status: AllocationStatus.annotations({
    description: "`pending` until executed, then `filled` or `failed`."
  }),
  exchangeTradeId: optional(Text.annotations({ description: "Block trade id on the venue, once filled." })),
  reason: optional(Text.annotations({ description: "Why the allocation failed." }))
})
export type Allocation = typeof Allocation.Type

export const Trade = responseObject("Trade", "A block trade executed for the caller.", {
  direction: Direction.annotations({ description: "The caller's own side." }),
  price: Decimal.annotations({ description: "Structure price, in the RFQ's quote currency." }),
  amount: Decimal.annotations({ description: "Amount, in base currency." }),
  exchangeTradeId: Text.annotations({ description: "The trade id on the exchange." }),
  createdAt: Timestamp
})
export type Trade = typeof Trade.Type

export const RfqQuoteSummary = responseObject("RfqQuoteSummary", "A quote as listed inside an RFQ.", {
  rfqQuoteId: QuoteId,
  price: Decimal,
  amount: Decimal,
  makers: Schema.Array(MakerId),
  validUntil: optional(
    Timestamp.annotations({ description: "Unix ms until which the quote stands, if set." })
  ),
  createdAt: Timestamp
})
export type RfqQuoteSummary = typeof RfqQuoteSummary.Type

const partyFields = {
  rfqId: RfqId,
  productId: Int.annotations({ description: "Internal id of the associated product." }),
  kind: Text.annotations({ description: "Type of RFQ, e.g. `option` or `future`." }),
  strategy: Text.annotations({ description: "Strategy short name, e.g. IFly, Fut Spd, Collar." }),
  description: Text.annotations({
    description: "Generated description, e.g. `BTC 27DEC30 90000/110000 Call Spread`."
  }),
  status: RfqStatus,
  baseCurrency: BaseCurrency,
  quoteCurrency: QuoteCurrency,
  quoteCurrencies: settlementOptionMap(QuoteCurrency).annotations({
    description: "Settlement option → quote currency expected for quotes on that option."
  }),
  amount: Decimal.annotations({
    description: "Base currency units for options, quote currency units for futures."
  }),
  anonymous: Schema.Boolean,
  role: Role.annotations({ description: "The caller's role on this RFQ." }),
  markPrice: Decimal.annotations({ description: "Mark price of the structure." }),
  tradeDirection: optional(
    Direction.annotations({ description: "The caller's side; only to the trade's parties." })
  ),
  tradePrice: optional(Decimal),
  tradeAmount: optional(Decimal.annotations({ description: "Amount traded, in base currency." })),
  tradeCreatedAt: optional(Timestamp),
  tradeId: optional(TradeId),
  filledAmount: optional(
    Decimal.annotations({ description: "Amount that settled successfully, in base currency." })
  ),
  legs: Schema.Array(RfqLeg),
  hedge: optional(RfqHedge),
  settlementOptions: Schema.Array(SettlementOption),
  quotes: optional(Schema.Array(RfqQuoteSummary)),
  trades: optional(
    Schema.Array(Trade).annotations({ description: "Only once traded, only to the trade's parties." })
  ),
  createdAt: Timestamp,
  expiresAt: Timestamp
}

const takerListFields = {
  ...partyFields,
  label: optional(Text.annotations({ description: "Customer-provided identifier (taker only)." }))
}

/** An RFQ fetched by id: every field, the taker-only ones optional. */
export const Rfq = responseObject("Rfq", "An RFQ as returned by `GET /rfq/{id}`.", {
  ...takerListFields,
  settlementCredentials: optional(
    Schema.Array(RfqSettlementAccount).annotations({ description: "Taker only, single RFQ only." })
  ),
  tradeAllocations: optional(
    Schema.Array(Allocation).annotations({ description: "Taker only, single RFQ only, once traded." })
  )
})
export type Rfq = typeof Rfq.Type

/** An RFQ in a list: never carries settlementCredentials or tradeAllocations. */
export const RfqListItem = responseObject("RfqListItem", "An RFQ as listed by `GET /rfq`.", takerListFields)
export type RfqListItem = typeof RfqListItem.Type

/** An RFQ as a maker sees it: no label, settlement accounts or allocations of the taker. */
export const MakerRfq = responseObject("MakerRfq", "An RFQ as seen by a maker.", partyFields)
export type MakerRfq = typeof MakerRfq.Type

export const RfqPage = pageOf("RfqPage", "A page of `GET /rfq`, newest first.", RfqListItem)
export type RfqPage = typeof RfqPage.Type

export const CreateRfqResponse = responseObject("CreateRfqResponse", "Answer of `POST /rfq/{id}`.", {
  rfqId: RfqId
})
export type CreateRfqResponse = typeof CreateRfqResponse.Type

export const DeleteRfqResponse = responseObject("DeleteRfqResponse", "Answer of `DELETE /rfq/{id}`.", {
  rfqId: RfqId
})
export type DeleteRfqResponse = typeof DeleteRfqResponse.Type

export const CancelRfqResponse = responseObject("CancelRfqResponse", "Answer of `POST /rfq/cancel`.", {
  id: RfqId.annotations({ description: "The cancelled RFQ's id." })
})
export type CancelRfqResponse = typeof CancelRfqResponse.Type

export const TradeResponse = responseObject("TradeResponse", "Answer of `POST /rfq/trade`.", {
  rfqTradeId: TradeId,
  rfqId: RfqId,
  trades: Schema.Array(Trade),
  allocations: optional(
    Schema.Array(Allocation).annotations({ description: "Only for RFQs created with settlement splits." })
  )
})
export type TradeResponse = typeof TradeResponse.Type

export const LegPriceResult = responseObject("LegPriceResult", "A leg with its calculated price.", {
  instrumentName: Text,
  direction: Direction,
  ratio: Decimal,
  price: Decimal.annotations({ description: "On the venue's tick, inside its band around the leg's mark." })
})
export type LegPriceResult = typeof LegPriceResult.Type

export const LegPricesResponse = responseObject("LegPricesResponse", "Answer of `POST /rfq/leg-prices`.", {
  legs: Schema.Array(LegPriceResult),
  priceDifference: Decimal.annotations({
    description: "Σ sᵢ·ratioᵢ·priceᵢ − requested price; 0 when the price is reproduced exactly."
  })
})
export type LegPricesResponse = typeof LegPricesResponse.Type

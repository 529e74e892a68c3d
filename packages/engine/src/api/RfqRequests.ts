import { Schema } from "effect"
import { settlementAccountsIssues } from "../rfq/SplitRules.js"
import {
  BaseCurrencyField,
  BooleanField,
  CredentialsIdField,
  DecimalField,
  DirectionField,
  InstrumentNameField,
  LabelField,
  LegPriceField,
  legPriceIssue,
  MakerIdField,
  PercentageField,
  PositiveDecimalField,
  QuoteCurrencyField,
  QuoteIdField,
  RatioField,
  RfqIdField,
  SettlementOptionField
} from "./Fields.js"
import {
  arrayOf,
  duplicateIssues,
  type FilterIssue,
  mapKeys,
  named,
  object,
  optional,
  settlementOptionMap
} from "./Objects.js"
import { integerParam, RfqIdParam } from "./Params.js"

/**
 * Request schemas of the RFQ endpoints. Sizes the spec leaves open are bounded so that one request
 * cannot make the engine do unbounded venue work: at most 20 legs, 20 accounts per settlement
 * option, 100 makers per settlement option.
 */
export const rfqRequestLimits = { legs: 20, accountsPerOption: 20, makersPerOption: 100 } as const

// ---- shared pieces -----------------------------------------------------------------------------

export const CreateRfqLeg = object({
  direction: DirectionField,
  instrumentName: InstrumentNameField,
  ratio: RatioField,
  price: optional(LegPriceField)
})
  .pipe(Schema.filter((leg) => legPriceIssue(leg)))
  .annotations(named("CreateRfqLeg", "A leg of a new RFQ. `price` is an optional indication."))
export type CreateRfqLeg = typeof CreateRfqLeg.Type

/** A hedge is a future or perpetual: its price is positive. */
export const CreateRfqHedge = object({
  direction: DirectionField,
  instrumentName: InstrumentNameField,
  amount: PositiveDecimalField.annotations({ description: "In the hedge item's quote currency." }),
  price: PositiveDecimalField.annotations({ description: "In the hedge item's quote currency." })
}).annotations(named("CreateRfqHedge", "The hedge of a new RFQ (a future or perpetual)."))
export type CreateRfqHedge = typeof CreateRfqHedge.Type

export const SettlementAccountInput = object({
  credentialsId: CredentialsIdField,
  percentage: PercentageField
}).annotations(named("SettlementAccountInput", "An account that settles a share of the trade."))
export type SettlementAccountInput = typeof SettlementAccountInput.Type

/** One option's accounts: 1 to 20, split rules 1–3 (`rfq/SplitRules.ts`). */
export const SettlementAccountsInput = arrayOf(SettlementAccountInput, {
  min: 1,
  max: rfqRequestLimits.accountsPerOption
})
  .pipe(Schema.filter(settlementAccountsIssues))
  .annotations({ description: "Accounts of one settlement option; percentages total exactly 100." })

const MakerIds = arrayOf(MakerIdField, { min: 1, max: rfqRequestLimits.makersPerOption }).pipe(
  Schema.filter((ids) => duplicateIssues(ids, String, ""))
)

const settlementOptionsField = arrayOf(SettlementOptionField, { min: 1, max: 2 })
  .pipe(Schema.filter((options) => duplicateIssues(options, String, "")))
  .annotations({ description: "Allowed settlement options: `BULL`, `DBT`." })

export const legsWithUniqueInstruments = <A extends { readonly instrumentName: string }, I>(
  leg: Schema.Schema<A, I>
) =>
  arrayOf(leg, { min: 1, max: rfqRequestLimits.legs }).pipe(
    Schema.filter((legs) => duplicateIssues(legs, (l) => l.instrumentName, "instrumentName"))
  )

// ---- POST /rfq/{id} ----------------------------------------------------------------------------

/**
 * The path `id` of `POST /rfq/{id}`: the caller's idempotency key, `0` meaning "no key". Decoded as
 * `requestId`; absent (JSON-RPC) is 0.
 */
export const RequestIdParam = integerParam({ min: 0, what: "a non-negative integer" }).annotations({
  description: "The caller's request id (idempotency key scoped to the user); 0 means no key."
})

const createRfqBodyFields = {
  baseCurrency: BaseCurrencyField,
  quoteCurrency: optional(
    QuoteCurrencyField.annotations({
      description:
        "Quote currency requested for DBT: the base currency (default) or USDC. BULL always uses USDC."
    })
  ),
  amount: PositiveDecimalField.annotations({
    description: "Base currency units for options, quote currency units for futures."
  }),
  anonymous: BooleanField,
  settlementOptions: settlementOptionsField,
  settlementCredentials: optional(
    settlementOptionMap(CredentialsIdField).annotations({
      description: "Settlement option → exchangeCredentialsId. Ignored when settlementAccounts is present."
    })
  ),
  settlementAccounts: optional(
    settlementOptionMap(SettlementAccountsInput).annotations({
      description:
        "Settlement option → accounts with split percentages. Takes precedence over settlementCredentials."
    })
  ),
  makers: settlementOptionMap(MakerIds).annotations({
    description: "Settlement option → ids of the makers who receive the RFQ."
  }),
  legs: legsWithUniqueInstruments(CreateRfqLeg),
  hedge: optional(CreateRfqHedge),
  label: optional(LabelField)
}

type CreateRfqShape = Schema.Struct.Type<typeof createRfqBodyFields>

/** Rules between fields that need no venue: map keys among settlementOptions, quote currency. */
const createRfqIssues = (body: CreateRfqShape): ReadonlyArray<FilterIssue> => {
  const issues: Array<FilterIssue> = []
  const offered = new Set(body.settlementOptions)
  const keysOutsideOptions = (field: string, map: Parameters<typeof mapKeys>[0]) => {
    for (const option of mapKeys(map)) {
      if (!offered.has(option))
        issues.push({ path: [field, option], message: "is not one of settlementOptions" })
    }
  }
  keysOutsideOptions("makers", body.makers)
  if (mapKeys(body.makers).length === 0)
    issues.push({ path: ["makers"], message: "must name at least one maker" })
  else {
    // An option nobody is invited on could never be quoted: a mistake, not a choice.
    const invited = new Set(mapKeys(body.makers))
    for (const option of body.settlementOptions) {
      if (!invited.has(option)) {
        issues.push({
          path: ["makers", option],
          message: `settlement option ${option} has no invited makers; invite at least one or drop the option`
        })
      }
    }
  }
  if (body.settlementAccounts !== undefined) keysOutsideOptions("settlementAccounts", body.settlementAccounts)
  else if (body.settlementCredentials !== undefined) {
    keysOutsideOptions("settlementCredentials", body.settlementCredentials)
  }
  if (
    body.quoteCurrency !== undefined &&
    body.quoteCurrency !== body.baseCurrency &&
    body.quoteCurrency !== "USDC"
  ) {
    issues.push({ path: ["quoteCurrency"], message: `must be "${body.baseCurrency}" or "USDC"` })
  }
  return issues
}

export const CreateRfqBody = object(createRfqBodyFields)
  .pipe(Schema.filter(createRfqIssues))
  .annotations(named("CreateRfqBody", "Body of `POST /rfq/{id}`: creates an RFQ."))
export type CreateRfqBody = typeof CreateRfqBody.Type

/**
 * `POST /rfq/{id}` as one object: the body's fields plus the path id under `id` (the host sets it
 * after spreading the body, so the path wins). Decoded, the id is `requestId`, 0 when absent
 * (JSON-RPC). Built as an explicit transformation so the generated document keeps its description.
 */
export const CreateRfqRequest = Schema.transform(
  object({ id: optional(RequestIdParam), ...createRfqBodyFields })
    .pipe(Schema.filter(createRfqIssues))
    .annotations(named("CreateRfqRequest", "`POST /rfq/{id}`: path id (as `id`) and body.")),
  Schema.typeSchema(Schema.Struct({ requestId: Schema.Number, ...createRfqBodyFields })),
  {
    strict: true,
    decode: ({ id, ...body }) => ({ ...body, requestId: id ?? 0 }),
    encode: ({ requestId, ...body }) => ({ ...body, id: requestId })
  }
)
export type CreateRfqRequest = typeof CreateRfqRequest.Type

// ---- paths and small bodies --------------------------------------------------------------------

const rfqPath = (identifier: string, description: string) =>
  object({ id: RfqIdParam.annotations({ description: "The rfqId." }) }).annotations(
    named(identifier, description)
  )

/** `GET /rfq/{id}`. */
export const GetRfqRequest = rfqPath("GetRfqRequest", "Path of `GET /rfq/{id}`.")
export type GetRfqRequest = typeof GetRfqRequest.Type
/** `DELETE /rfq/{id}`. */
export const DeleteRfqRequest = rfqPath("DeleteRfqRequest", "Path of `DELETE /rfq/{id}`.")
export type DeleteRfqRequest = typeof DeleteRfqRequest.Type
/** `GET /rfq/{id}/quote`. */
export const TakerQuotesRequest = rfqPath("TakerQuotesRequest", "Path of `GET /rfq/{id}/quote`.")
export type TakerQuotesRequest = typeof TakerQuotesRequest.Type

export const CancelRfqRequest = object({ rfqId: RfqIdField }).annotations(
  named("CancelRfqRequest", "Body of `POST /rfq/cancel`.")
)
export type CancelRfqRequest = typeof CancelRfqRequest.Type

export const TradeRequest = object({
  rfqQuoteId: QuoteIdField.annotations({ description: "The quote to accept." })
}).annotations(named("TradeRequest", "Body of `POST /rfq/trade`: accepts a quote."))
export type TradeRequest = typeof TradeRequest.Type

// ---- POST /rfq/leg-prices ----------------------------------------------------------------------

export const LegPricesLeg = object({
  direction: DirectionField,
  instrumentName: InstrumentNameField,
  ratio: RatioField
}).annotations(named("LegPricesLeg", "A leg of the strategy to price."))
export type LegPricesLeg = typeof LegPricesLeg.Type

export const LegPricesRequest = object({
  rfqId: RfqIdField,
  price: DecimalField.annotations({
    description: "Total price of the strategy: Σ sᵢ·ratioᵢ·priceᵢ; negative for a credit."
  }),
  legs: legsWithUniqueInstruments(LegPricesLeg)
}).annotations(named("LegPricesRequest", "Body of `POST /rfq/leg-prices`."))
export type LegPricesRequest = typeof LegPricesRequest.Type

import { decodeRequestEither, type EndpointInput, type EndpointOutput, endpoints } from "@rfq/engine/api"
import { type Direction, numeric } from "../taker/RfqDraft.js"

/**
 * The maker's quote as typed: side, settlement option, amount, label, one price per leg (and the
 * hedge's), and the structure price the leg-price helper starts from. Pure, like the taker's draft:
 * requests for create and update, and the service's own checks of them as the user types.
 */

export type MakerRfq = EndpointOutput<"v1/rfq/get">
export type MakerQuote = EndpointOutput<"v1/quote/list">["results"][number]

export interface QuoteDraft {
  readonly direction: Direction
  readonly settlementOption: string
  readonly amount: string
  readonly label: string
  readonly structurePrice: string
  readonly legPrices: Readonly<Record<string, string>>
  readonly hedgePrice: string
  /** Seconds the quote stays valid (`validUntil` = now + this); empty: until the RFQ ends. */
  readonly validFor: string
}

export const draftFor = (rfq: MakerRfq, quote?: MakerQuote): QuoteDraft => ({
  direction: quote?.direction ?? "sell",
  settlementOption: quote?.settlementOption ?? rfq.settlementOptions[0] ?? "DBT",
  amount: String(quote?.amount ?? rfq.amount),
  label: quote?.label ?? "",
  structurePrice: quote === undefined ? "" : String(quote.price),
  legPrices: Object.fromEntries(
    rfq.legs.map((l) => {
      const quoted = quote?.legs?.find((q) => q.instrumentName === l.instrumentName)
      return [l.instrumentName, quoted === undefined ? "" : String(quoted.price)]
    })
  ),
  hedgePrice: quote?.hedge === undefined ? "" : String(quote.hedge.price),
  validFor: ""
})

/** `validUntil` from the seconds typed, as of `now`; a non-number goes as typed for the service to refuse. */
const validUntilOf = (draft: QuoteDraft, now: number): number | string | undefined => {
  if (draft.validFor.trim() === "") return undefined
  const seconds = numeric(draft.validFor)
  return typeof seconds === "number" ? Math.round(now + seconds * 1000) : seconds
}

const common = (rfq: MakerRfq, draft: QuoteDraft, now: number) => {
  const body: Record<string, unknown> = {
    amount: numeric(draft.amount),
    settlementOption: draft.settlementOption,
    legs: rfq.legs.map((l) => ({
      instrumentName: l.instrumentName,
      price: numeric(draft.legPrices[l.instrumentName] ?? "")
    }))
  }
  if (draft.label.trim() !== "") body["label"] = draft.label.trim()
  const validUntil = validUntilOf(draft, now)
  if (validUntil !== undefined) body["validUntil"] = validUntil
  if (rfq.hedge?.instrumentName !== undefined) {
    body["hedge"] = { instrumentName: rfq.hedge.instrumentName, price: numeric(draft.hedgePrice) }
  }
  return body
}

export const createRequest = (
  rfq: MakerRfq,
  draft: QuoteDraft,
  now: number
): EndpointInput<"v1/quote/create"> =>
  ({
    rfqId: rfq.rfqId,
    direction: draft.direction,
    ...common(rfq, draft, now)
  }) as EndpointInput<"v1/quote/create">

export const updateRequest = (
  rfq: MakerRfq,
  draft: QuoteDraft,
  rfqQuoteId: number,
  now: number
): EndpointInput<"v1/quote/update"> =>
  ({ rfqQuoteId, ...common(rfq, draft, now) }) as EndpointInput<"v1/quote/update">

export const legPricesRequest = (rfq: MakerRfq, draft: QuoteDraft): EndpointInput<"v1/rfq/leg-prices"> => ({
  rfqId: rfq.rfqId,
  price: numeric(draft.structurePrice) as number,
  legs: rfq.legs.map((l) => ({ direction: l.direction, instrumentName: l.instrumentName, ratio: l.ratio }))
})

/** The service's reasons for refusing the quote as typed (the create schema); empty when it decodes. */
export const quoteIssues = (rfq: MakerRfq, draft: QuoteDraft, now: number): ReadonlyArray<string> => {
  const decoded = decodeRequestEither(endpoints["v1/quote/create"].input, createRequest(rfq, draft, now))
  return decoded._tag === "Right" ? [] : (decoded.left.reason ?? [decoded.left.message])
}

import { type ApiError, apiError } from "../domain/Errors.js"
import type { QuoteRecord, RfqRecord, RfqState } from "./RfqRecord.js"

/**
 * The one quote-expiry rule (issue 16): a quote with a `validUntil` stands until that millisecond
 * and is past it from the millisecond it is reached, as an RFQ is past its `expiresAt`
 * (`Expiry.ts#isPastExpiry`). The machine's `QUOTE.EXPIRE` guard, the accept rule, the mailbox's
 * "expire what is due first" and the reads all ask these predicates, so a quote is never accepted,
 * shown or updated in the gap between its instant and its timer firing.
 */
export const isQuotePastValidUntil = (quote: QuoteRecord, now: number): boolean =>
  quote.validUntil !== undefined && now >= quote.validUntil

/**
 * Why a quote's `validUntil` cannot stand on the RFQ at `now`, or undefined: it must be after now
 * (a quote that is born expired would be refused at accept anyway, so it is refused at once) and
 * at most the RFQ's `expiresAt` (a quote never outlives its RFQ; equal is allowed and means the
 * same as no `validUntil`).
 */
export const validUntilRejection = (
  rfq: Pick<RfqRecord, "expiresAt">,
  validUntil: number | undefined,
  now: number
): ApiError | undefined => {
  if (validUntil === undefined) return undefined
  if (validUntil <= now) {
    return apiError("invalidRequest", `validUntil: ${validUntil} must be after now (${now})`)
  }
  if (validUntil > rfq.expiresAt) {
    return apiError(
      "invalidRequest",
      `validUntil: ${validUntil} must be at most the RFQ's expiresAt (${rfq.expiresAt})`
    )
  }
  return undefined
}

// Quote maps are immutable (every step assigns a new one), so the earliest deadline of one is
// computed once: reads ask `hasDueQuote` on every call and must not scan the quotes each time.
const earliestOf = new WeakMap<RfqState["quotes"], number>()

/** The earliest `validUntil` among the active quotes; `Infinity` when none has one. */
export const earliestValidUntil = (quotes: RfqState["quotes"]): number => {
  let earliest = earliestOf.get(quotes)
  if (earliest === undefined) {
    earliest = Number.POSITIVE_INFINITY
    for (const quote of Object.values(quotes)) {
      if (quote.validUntil !== undefined && quote.validUntil < earliest) earliest = quote.validUntil
    }
    earliestOf.set(quotes, earliest)
  }
  return earliest
}

/** Whether some active quote of the RFQ is past its `validUntil` at `now`. */
export const hasDueQuote = (state: RfqState, now: number): boolean => now >= earliestValidUntil(state.quotes)

/** The active quotes past their `validUntil` at `now`, in id order. */
export const dueQuotes = (quotes: RfqState["quotes"], now: number): ReadonlyArray<QuoteRecord> =>
  now >= earliestValidUntil(quotes) ? Object.values(quotes).filter((q) => isQuotePastValidUntil(q, now)) : []

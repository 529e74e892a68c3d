import { BigDecimal } from "effect"
import { isMultipleOf } from "../domain/Decimal.js"
import { type ApiError, apiError } from "../domain/Errors.js"
import { type Direction, oppositeDirection } from "../domain/Primitives.js"
import { amountRulesOf, tradeShapeOf } from "./AllocationRules.js"
import { dec, decString } from "./Dec.js"
import { isPastExpiry } from "./Expiry.js"
import { isQuotePastValidUntil, validUntilRejection } from "./QuoteExpiry.js"
import type { Caller, Dec, LegRecord, QuoteRecord, RfqState } from "./RfqRecord.js"
import { allocationRejection } from "./SplitRules.js"
import { canSee, isTaker } from "./Visibility.js"

/**
 * The quote and accept rules of an RFQ: pure functions of the actor's state and the candidate, so
 * the machine's guards and the engine's answers decide alike.
 */

/** The venue's rules for one leg of a quote, fetched by the engine before the actor decides. */
export interface LegMarket {
  readonly tick: Dec
  readonly low: Dec
  readonly high: Dec
  readonly amountStep: Dec
  readonly minBlockAmount: Dec
}

export interface QuoteCandidate {
  readonly quote: QuoteRecord
  readonly caller: Caller
  /** One entry per RFQ leg, in the RFQ's leg order. */
  readonly legMarkets: ReadonlyArray<LegMarket>
  readonly hedgeMarket?: LegMarket | undefined
  readonly now: number
}

/**
 * The maker's side of an RFQ leg (or of its hedge) for a quote in `direction`. The RFQ lists its
 * legs as the buyer of the structure trades them (P = Σ sᵢ·ratioᵢ·pᵢ is what the buyer pays): a bid
 * buys the structure, so the maker trades each leg as listed; an ask sells it, so the maker trades
 * the opposite of each listed side. Every block trade on a venue's ledger carries the maker's side.
 */
export const makerLegDirection = (
  quoteDirection: QuoteRecord["direction"],
  leg: Pick<LegRecord, "direction">
): Direction => (quoteDirection === "buy" ? leg.direction : oppositeDirection(leg.direction))

const priceRejection = (label: string, price: Dec, market: LegMarket): ApiError | undefined => {
  const p = dec(price)
  if (!isMultipleOf(p, dec(market.tick))) {
    return apiError("invalidPrice", `${label}: price ${price} is not a multiple of the tick ${market.tick}`)
  }
  if (BigDecimal.lessThan(p, dec(market.low))) {
    return apiError("priceTooLow", `${label}: price ${price} is below the venue's band (${market.low})`)
  }
  if (BigDecimal.greaterThan(p, dec(market.high))) {
    return apiError("priceTooHigh", `${label}: price ${price} is above the venue's band (${market.high})`)
  }
  return undefined
}

const amountRejection = (
  label: string,
  amount: BigDecimal.BigDecimal,
  market: LegMarket
): string | undefined => {
  if (!isMultipleOf(amount, dec(market.amountStep))) {
    return `${label}: amount ${decString(amount)} is not a multiple of the venue's amount step ${market.amountStep}`
  }
  if (BigDecimal.lessThan(amount, dec(market.minBlockAmount))) {
    return `${label}: amount ${decString(amount)} is below the venue's minimum block trade amount ${market.minBlockAmount}`
  }
  return undefined
}

/** The RFQ must be open and not past its expiry for a quote or an accept. */
export const openRejection = (state: RfqState, status: string, now: number): ApiError | undefined => {
  if (status === "expired" || (status === "open" && isPastExpiry(state, now))) return apiError("rfqExpired")
  if (status !== "open") return apiError("invalidRequest", `the RFQ is ${status}; it must be open`)
  return undefined
}

/**
 * The last answer per candidate: a quote command asks before its step (to answer with the reason)
 * and the machine's guard asks again for the same state inside the step. Records are immutable,
 * so the same state, status and candidate always have the same answer.
 */
const answered = new WeakMap<
  QuoteCandidate,
  { readonly state: RfqState; readonly status: string; readonly answer: ApiError | undefined }
>()

/**
 * Why a quote (new, or replacing an active one of the same id) may not stand on this RFQ, or
 * undefined when it may. Pure: every venue fact it needs comes in the candidate.
 */
export const quoteRejection = (state: RfqState, status: string, c: QuoteCandidate): ApiError | undefined => {
  const last = answered.get(c)
  if (last !== undefined && last.state === state && last.status === status) return last.answer
  const answer = rejectionOf(state, status, c)
  answered.set(c, { state, status, answer })
  return answer
}

const rejectionOf = (state: RfqState, status: string, c: QuoteCandidate): ApiError | undefined => {
  const { rfq } = state
  const { quote, caller } = c
  if (!canSee(rfq, caller)) return apiError("rfqNotFound")
  if (isTaker(rfq, caller)) return apiError("cannotQuoteOwnRfq")
  const notOpen = openRejection(state, status, c.now)
  if (notOpen !== undefined) return notOpen
  const validity = validUntilRejection(rfq, quote.validUntil, c.now)
  if (validity !== undefined) return validity
  if (!rfq.settlementOptions.includes(quote.settlementOption)) {
    return apiError(
      "invalidRequest",
      `settlementOption: ${quote.settlementOption} is not a settlement option of the RFQ (${rfq.settlementOptions.join(", ")})`
    )
  }
  if (rfq.makers[quote.settlementOption]?.includes(quote.makerId) !== true) {
    return apiError("invalidRequest", `settlementOption: maker is not invited on ${quote.settlementOption}`)
  }
  if (quote.quoteCurrency !== rfq.quoteCurrencies[quote.settlementOption]) {
    return apiError("invalidRequest", `quoteCurrency: must be ${rfq.quoteCurrencies[quote.settlementOption]}`)
  }
  if (quote.legs.length !== rfq.legs.length || c.legMarkets.length !== rfq.legs.length) {
    return apiError(
      "invalidRequest",
      `legs: the quote has ${quote.legs.length} legs, the RFQ has ${rfq.legs.length}`
    )
  }
  for (let i = 0; i < rfq.legs.length; i++) {
    const leg = rfq.legs[i]!
    const ql = quote.legs[i]!
    if (ql.instrumentName !== leg.instrumentName) {
      return apiError("invalidRequest", `legs[${i}].instrumentName: must be ${leg.instrumentName}`)
    }
    const rejected = priceRejection(`legs[${i}] ${leg.instrumentName}`, ql.price, c.legMarkets[i]!)
    if (rejected !== undefined) return rejected
  }
  if ((rfq.hedge === undefined) !== (quote.hedge === undefined)) {
    return apiError(
      "invalidRequest",
      rfq.hedge === undefined ? "hedge: the RFQ has no hedge" : "hedge: is missing"
    )
  }
  if (rfq.hedge !== undefined && quote.hedge !== undefined) {
    if (quote.hedge.instrumentName !== rfq.hedge.instrumentName) {
      return apiError("invalidRequest", `hedge.instrumentName: must be ${rfq.hedge.instrumentName}`)
    }
    if (c.hedgeMarket !== undefined) {
      const rejected = priceRejection(`hedge ${rfq.hedge.instrumentName}`, quote.hedge.price, c.hedgeMarket)
      if (rejected !== undefined) return rejected
    }
  }
  const amount = dec(quote.amount)
  if (!BigDecimal.isPositive(amount)) return apiError("invalidRequest", "amount: must be greater than 0")
  if (BigDecimal.greaterThan(amount, dec(rfq.amount))) {
    return apiError("invalidRequest", `amount: ${quote.amount} exceeds the RFQ amount ${rfq.amount}`)
  }
  const amountReasons = rfq.legs.flatMap((leg, i) => {
    const r = amountRejection(
      `legs[${i}] ${leg.instrumentName}`,
      BigDecimal.multiply(amount, dec(leg.ratio)),
      c.legMarkets[i]!
    )
    return r === undefined ? [] : [r]
  })
  if (amountReasons.length > 0) return apiError("invalidRequest", amountReasons)
  const shape = tradeShapeOf(
    rfq,
    c.legMarkets.map(amountRulesOf),
    c.hedgeMarket === undefined ? undefined : amountRulesOf(c.hedgeMarket)
  )
  const split = allocationRejection(rfq, quote.settlementOption, amount, shape)
  if (split !== undefined) return split
  if (quote.label !== undefined) {
    const clash = Object.values(state.quotes).some(
      (q) => q.id !== quote.id && q.makerDeskId === quote.makerDeskId && q.label === quote.label
    )
    if (clash) return apiError("duplicateClientQuoteId")
  }
  return undefined
}

/** Why the taker may not accept quote `quoteId` now, or undefined. */
export const acceptRejection = (
  state: RfqState,
  status: string,
  quoteId: number,
  caller: Caller,
  now: number
): ApiError | undefined => {
  if (!isTaker(state.rfq, caller)) return apiError("recordNotFound")
  const notOpen = openRejection(state, status, now)
  if (notOpen !== undefined) return notOpen
  const quote = state.quotes[quoteId]
  if (quote === undefined) {
    return apiError("invalidRequest", `rfqQuoteId: quote ${quoteId} is not active`)
  }
  // Past its validUntil but not yet expired by its timer (the same millisecond): refused all the same.
  if (isQuotePastValidUntil(quote, now)) return apiError("quoteExpired")
  return undefined
}

import type { Direction } from "../../src/domain/Primitives.js"
import { type AccountPlan, type MakerName, settledPercent } from "./RfqSystem.js"

/**
 * The model of the RFQ lifecycle: per RFQ its status, its trade's amounts and its quotes with their
 * status, maker and label. Much simpler than the engine: no prices, no legs, no storage. Only the
 * RFQs a run created are in it, so runs can share one database.
 */

export type RfqStatus = "open" | "filled" | "filledPartial" | "cancelled" | "expired" | "deleted"
export type QuoteStatus = "active" | "filled" | "cancelled" | "expired"

export interface ModelRfq {
  readonly id: number
  readonly plan: AccountPlan
  readonly expiresAt: number
  status: RfqStatus
  trade?: { readonly amount: number; readonly filledAmount: number }
}

export interface ModelQuote {
  readonly id: number
  /** Position of its RFQ in `RfqModel.rfqs`. */
  readonly rfq: number
  readonly maker: MakerName
  readonly direction: Direction
  amount: number
  /** The label as the run knows it; the engine sees it prefixed with the run's tag. */
  label?: string | undefined
  status: QuoteStatus
}

export interface RfqModel {
  /** Makes this run's labels its own (other runs' quotes may still be active in the database). */
  readonly tag: string
  /** The TestClock's time, and when the run started. */
  now: number
  readonly startedAt: number
  /** DBT ledger size when the run started, and block trades this run's fills booked since. */
  readonly ledgerBase: number
  ledgerAdded: number
  readonly rfqs: Array<ModelRfq>
  readonly quotes: Array<ModelQuote>
}

/** The element at `position`, wrapping around; positions keep a command valid in any state. */
export const pick = <A>(items: ReadonlyArray<A>, position: number): A => items[position % items.length]!

/**
 * The quote at `position` among the active ones when `active` and there are any, else among all
 * the run's quotes (commands on closed quotes are refused, and worth trying too).
 */
export const pickQuote = (m: RfqModel, position: number, active: boolean): ModelQuote => {
  const candidates = active ? m.quotes.filter((q) => q.status === "active") : []
  return pick(candidates.length > 0 ? candidates : m.quotes, position)
}

/** `quote@3` or `active quote@3`, as a command picks it. */
export const describeQuote = (position: number, active: boolean) =>
  `${active ? "active " : ""}quote@${position}`

export const realLabel = (m: RfqModel, label: string | undefined) =>
  label === undefined ? undefined : `${m.tag}-${label}`

export const quotesOf = (m: RfqModel, rfq: number, status: QuoteStatus = "active") =>
  m.quotes.filter((q) => q.rfq === rfq && q.status === status)

/** The maker's active quote holding `label`, if any: labels are unique among a maker's active quotes. */
export const labelHolder = (m: RfqModel, maker: MakerName, label: string | undefined) =>
  label === undefined
    ? undefined
    : m.quotes.find((q) => q.status === "active" && q.maker === maker && q.label === label)

export const openRfqs = (m: RfqModel) => m.rfqs.filter((r) => r.status === "open")

/** The RFQ at `rfq` closes: its active quotes take `status`. */
export const closeRfq = (
  m: RfqModel,
  rfq: number,
  status: "cancelled" | "expired",
  quoteStatus: "cancelled" | "expired"
) => {
  m.rfqs[rfq]!.status = status
  for (const q of quotesOf(m, rfq)) q.status = quoteStatus
}

/** Every open RFQ whose expiry has come expires. */
export const expireDue = (m: RfqModel) => {
  m.rfqs.forEach((r, i) => {
    if (r.status === "open" && m.now >= r.expiresAt) closeRfq(m, i, "expired", "expired")
  })
}

/** An accepted quote on an open RFQ settles per the RFQ's account plan. */
export const settle = (m: RfqModel, quote: ModelQuote) => {
  const rfq = m.rfqs[quote.rfq]!
  const percent = settledPercent[rfq.plan]
  if (percent === 0) return
  rfq.status = percent === 100 ? "filled" : "filledPartial"
  rfq.trade = { amount: quote.amount, filledAmount: (quote.amount * percent) / 100 }
  for (const q of quotesOf(m, quote.rfq)) q.status = q.id === quote.id ? "filled" : "cancelled"
}

/** The catalog messages the commands expect. */
export const messages = {
  notFound: "rfq not found",
  recordNotFound: "record not found",
  expired: "RFQ has expired",
  invalid: "invalid request",
  duplicateLabel: "a quote with the same clientQuoteId already exists",
  multipleQuotes: "multiple quotes found for the same RFQ",
  cannotCancel: "can only cancel an in progress RFQ",
  cannotDelete: "can only delete a draft or cancelled RFQ"
} as const

/** `rfq@2`: an RFQ by its position in the run. */
export const describeRfq = (position: number) => `rfq@${position}`

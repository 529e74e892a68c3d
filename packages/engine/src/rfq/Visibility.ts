import type { SqlClient } from "@effect/sql/SqlClient"
import type { Fragment } from "@effect/sql/Statement"
import type { Caller, QuoteRecord, RfqRecord, TradeRecord } from "./RfqRecord.js"

/**
 * Who may see an RFQ and its quotes: the one home of the visibility rule. Visibility is by desk:
 * - the taker desk (every user of it) sees its RFQ and every quote on it;
 * - a maker desk sees an RFQ it is invited on (any settlement option), and only its own desk's
 *   quotes; a trade's fields only when its quote was the one traded;
 * - anyone else does not see the RFQ at all ("rfq not found").
 * The SQL of the lists, the views (`RfqView.ts`), the event fan-out (`Events.ts`) and the commands
 * all decide through these predicates and fragments.
 */

/** Whether `caller` may see the RFQ at all: its taker desk, or a maker invited on any option. */
export const canSee = (rfq: RfqRecord, caller: Caller): boolean =>
  caller.deskId === rfq.takerDeskId || isInvited(rfq, caller.makerId)

export const isInvited = (rfq: RfqRecord, makerId: string | undefined): boolean =>
  makerId !== undefined && rfq.settlementOptions.some((o) => rfq.makers[o]?.includes(makerId) === true)

/** The maker ids `isInvited` says yes to, each once. */
export const invitedMakerIds = (rfq: RfqRecord): ReadonlyArray<string> => {
  const ids = new Set<string>()
  for (const option of rfq.settlementOptions) for (const id of rfq.makers[option] ?? []) ids.add(id)
  return [...ids]
}

export const isTaker = (rfq: RfqRecord, caller: Caller): boolean => caller.deskId === rfq.takerDeskId

/** An invited maker that is not the RFQ's taker (the RFQs a caller may quote on). */
export const isInvitedMaker = (rfq: RfqRecord, caller: Caller): boolean =>
  !isTaker(rfq, caller) && isInvited(rfq, caller.makerId)

/** Whether the quote is the caller's desk's own: a maker sees and acts on these only. */
export const isOwnQuote = (quote: Pick<QuoteRecord, "makerDeskId">, caller: Caller): boolean =>
  quote.makerDeskId === caller.deskId

/** Which quotes of an RFQ the caller may see (it sees the RFQ): the taker all, a maker its own. */
export const canSeeQuote = (rfq: RfqRecord, quote: QuoteRecord, caller: Caller): boolean =>
  isTaker(rfq, caller) || isOwnQuote(quote, caller)

/** Whether the caller is a party to the trade: the taker, or the maker desk whose quote traded. */
export const isTradeParty = (
  trade: TradeRecord | undefined,
  rfq: RfqRecord,
  caller: Caller
): trade is TradeRecord =>
  trade !== undefined && (isTaker(rfq, caller) || trade.makerDeskId === caller.deskId)

/**
 * `canSee` in SQL, over `rfqs r`, for a list of RFQs: taker desk, or invited through `rfq_makers`.
 * `role` narrows it to one side (`maker` with no maker id of its own sees nothing).
 */
export const visibleRfqsWhere = (
  sql: SqlClient,
  caller: {
    readonly deskId: number
    readonly makerId?: string | undefined
    readonly role?: "taker" | "maker" | undefined
  }
): Fragment => {
  const invited =
    caller.makerId === undefined
      ? undefined
      : sql`EXISTS (SELECT 1 FROM rfq_makers m WHERE m.rfq_id = r.id AND m.maker_id = ${caller.makerId})`
  const asTaker = sql`r.taker_desk_id = ${caller.deskId}`
  return caller.role === "taker"
    ? asTaker
    : caller.role === "maker"
      ? (invited ?? sql`false`)
      : invited === undefined
        ? asTaker
        : sql`(${asTaker} OR ${invited})`
}

/** `isOwnQuote` in SQL, over `quotes q`: the quotes a maker desk lists (`GET /rfq/quotes`). */
export const ownQuotesWhere = (sql: SqlClient, makerDeskId: number): Fragment =>
  sql`q.maker_desk_id = ${makerDeskId}`

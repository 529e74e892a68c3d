import { num, side } from "../ui/format.js"
import { type Column, statusColumn } from "../ui/ListTable.js"
import type { MakerQuote } from "./QuoteDraft.js"

/**
 * A desk's quote as its lists show it (the maker's screen, the lists screen); `created` heads and
 * formats its creation time (the time of day, or the date too in a list that spans days).
 */
export const quoteColumns = (created: {
  readonly head: string
  readonly format: (ms: number) => string
}): ReadonlyArray<Column<MakerQuote>> => [
  {
    head: "quote",
    cell: (q) => (
      <>
        #{q.rfqQuoteId}
        {q.label === undefined ? "" : ` (${q.label})`}
      </>
    )
  },
  { head: "RFQ", cell: (q) => <>#{q.rfqId}</> },
  { head: "side", cell: (q) => side(q.direction) },
  {
    head: "price",
    cell: (q) => (
      <>
        {num(q.price)} {q.quoteCurrency}
      </>
    )
  },
  { head: "amount", cell: (q) => num(q.amount) },
  { head: "venue", cell: (q) => q.settlementOption },
  statusColumn(),
  { head: created.head, cell: (q) => created.format(q.createdAt) }
]

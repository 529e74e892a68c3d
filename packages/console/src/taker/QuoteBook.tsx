import type { EndpointOutput } from "@rfq/engine/api"
import { num, time } from "../ui/format.js"
import { type Column, ListTable } from "../ui/ListTable.js"

type Book = EndpointOutput<"v1/rfq/quotes">[number]
type TakerQuote = Book["bids"][number]

interface Props {
  readonly books: ReadonlyArray<Book>
  readonly open: boolean
  readonly busy: boolean
  readonly onAccept: (quote: TakerQuote) => void
}

/** The two sides of a ladder: accepting a bid sells the structure, accepting an ask buys it. */
const SIDES = [
  { side: "bid", title: "Bids (makers buy)", accept: "Sell", quotes: (book: Book) => book.bids },
  { side: "ask", title: "Asks (makers sell)", accept: "Buy", quotes: (book: Book) => book.asks }
] as const

const Side = (props: {
  readonly title: string
  readonly side: "bid" | "ask"
  readonly quotes: ReadonlyArray<TakerQuote>
  readonly currency: string
  readonly accept: string
  readonly open: boolean
  readonly busy: boolean
  readonly onAccept: (quote: TakerQuote) => void
}) => {
  const columns: ReadonlyArray<Column<TakerQuote>> = [
    { head: "price", cell: (q) => num(q.price), cellClass: () => "price" },
    { head: "amount", cell: (q) => num(q.amount) },
    { head: "maker", cell: (q) => q.makers.join(", ") },
    { head: "at", cell: (q) => time(q.createdAt) },
    {
      head: "",
      cell: (q) =>
        props.open && (
          <button type="button" class="primary" disabled={props.busy} onClick={() => props.onAccept(q)}>
            {props.accept}
          </button>
        )
    }
  ]
  return (
    <div class={`side ${props.side}s`}>
      <h4>
        {props.title} <span class="hint">({props.currency})</span>
      </h4>
      {props.quotes.length === 0 ? (
        <p class="hint">none yet</p>
      ) : (
        <ListTable
          columns={columns}
          rows={props.quotes}
          rowKey={(q) => q.rfqQuoteId}
          rowAttributes={(q, i) => ({ "data-quote": q.rfqQuoteId, class: i === 0 ? "best" : "" })}
        />
      )}
    </div>
  )
}

/**
 * The quotes received, one ladder per settlement option (currencies never mix), bids best
 * (highest) first and asks best (lowest) first as the service orders them.
 */
export const QuoteBook = ({ books, open, busy, onAccept }: Props) => {
  if (books.length === 0) return <p class="hint">Waiting for quotes… they appear here as makers send them.</p>
  return (
    <div class="book">
      {books.map((book) => (
        <div key={book.settlementOption} class="ladder" data-option={book.settlementOption}>
          <h4>Settles on {book.settlementOption}</h4>
          <div class="columns">
            {SIDES.map((s) => (
              <Side
                key={s.side}
                title={s.title}
                side={s.side}
                quotes={s.quotes(book)}
                currency={book.quoteCurrency}
                accept={s.accept}
                open={open}
                busy={busy}
                onAccept={onAccept}
              />
            ))}
          </div>
        </div>
      ))}
    </div>
  )
}

import type { EndpointOutput } from "@rfq/engine/api"
import { num, time } from "../ui/format.js"

type Book = EndpointOutput<"v1/rfq/quotes">[number]
type TakerQuote = Book["bids"][number]

interface Props {
  readonly books: ReadonlyArray<Book>
  readonly open: boolean
  readonly busy: boolean
  readonly onAccept: (quote: TakerQuote) => void
}

const Side = (props: {
  readonly title: string
  readonly side: "bid" | "ask"
  readonly quotes: ReadonlyArray<TakerQuote>
  readonly currency: string
  readonly accept: string
  readonly open: boolean
  readonly busy: boolean
  readonly onAccept: (quote: TakerQuote) => void
}) => (
  <div class={`side ${props.side}s`}>
    <h4>
      {props.title} <span class="hint">({props.currency})</span>
    </h4>
    {props.quotes.length === 0 ? (
      <p class="hint">none yet</p>
    ) : (
      <table class="list">
        <thead>
          <tr>
            <th>price</th>
            <th>amount</th>
            <th>maker</th>
            <th>at</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {props.quotes.map((q, i) => (
            <tr key={q.rfqQuoteId} data-quote={q.rfqQuoteId} class={i === 0 ? "best" : ""}>
              <td class="price">{num(q.price)}</td>
              <td>{num(q.amount)}</td>
              <td>{q.makers.join(", ")}</td>
              <td>{time(q.createdAt)}</td>
              <td>
                {props.open && (
                  <button
                    type="button"
                    class="primary"
                    disabled={props.busy}
                    onClick={() => props.onAccept(q)}
                  >
                    {props.accept}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
  </div>
)

/**
 * The quotes received, one ladder per settlement option (currencies never mix), bids best
 * (highest) first and asks best (lowest) first as the service orders them. Accepting an ask buys
 * the structure as listed; accepting a bid sells it.
 */
export const QuoteBook = ({ books, open, busy, onAccept }: Props) => {
  if (books.length === 0) return <p class="hint">Waiting for quotes… they appear here as makers send them.</p>
  return (
    <div class="book">
      {books.map((book) => (
        <div key={book.settlementOption} class="ladder" data-option={book.settlementOption}>
          <h4>Settles on {book.settlementOption}</h4>
          <div class="columns">
            <Side
              title="Bids (makers buy)"
              side="bid"
              quotes={book.bids}
              currency={book.quoteCurrency}
              accept="Sell"
              open={open}
              busy={busy}
              onAccept={onAccept}
            />
            <Side
              title="Asks (makers sell)"
              side="ask"
              quotes={book.asks}
              currency={book.quoteCurrency}
              accept="Buy"
              open={open}
              busy={busy}
              onAccept={onAccept}
            />
          </div>
        </div>
      ))}
    </div>
  )
}

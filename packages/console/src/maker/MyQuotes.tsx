import { concerns } from "../api/live.js"
import { ErrorBox } from "../ui/ErrorBox.js"
import { num, side, time } from "../ui/format.js"
import { useAction, useConnection, useLive, useLoad } from "../ui/hooks.js"
import type { MakerQuote } from "./QuoteDraft.js"

interface Props {
  /** Only this RFQ's quotes; all of the desk's when undefined. */
  readonly rfqId: number | undefined
  readonly onEdit: (quote: MakerQuote) => void
}

/** The desk's quotes, live over `rfq_quote.maker`: edit, cancel one, or cancel all. */
export const MyQuotes = ({ rfqId, onEdit }: Props) => {
  const connection = useConnection()
  const quotes = useLoad(
    () => connection.call("v1/quote/list", rfqId === undefined ? { limit: 50 } : { rfqId, limit: 50 }),
    `my-quotes-${rfqId ?? "all"}`
  )
  const action = useAction()
  useLive((event) => concerns(event, ["rfq_quote.maker"], rfqId) && quotes.reload())
  const active = (quotes.data?.results ?? []).filter((q) => q.status === "active")
  return (
    <div class="my-quotes">
      <h3>
        My quotes{rfqId === undefined ? "" : ` on RFQ #${rfqId}`}{" "}
        <button
          type="button"
          class="danger"
          disabled={action.busy || active.length === 0}
          onClick={() =>
            action.run(async () => {
              await connection.call("v1/quote/cancel-all", rfqId === undefined ? {} : { rfqId })
              quotes.reload()
            })
          }
        >
          {rfqId === undefined ? "Cancel all my quotes" : "Cancel all on this RFQ"}
        </button>
      </h3>
      <ErrorBox error={quotes.error} />
      <ErrorBox error={action.error} />
      <table class="list">
        <thead>
          <tr>
            <th>quote</th>
            <th>RFQ</th>
            <th>side</th>
            <th>price</th>
            <th>amount</th>
            <th>venue</th>
            <th>status</th>
            <th>at</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {(quotes.data?.results ?? []).map((q) => (
            <tr key={q.rfqQuoteId} data-quote={q.rfqQuoteId}>
              <td>
                #{q.rfqQuoteId}
                {q.label === undefined ? "" : ` (${q.label})`}
              </td>
              <td>#{q.rfqId}</td>
              <td>{side(q.direction)}</td>
              <td>
                {num(q.price)} {q.quoteCurrency}
              </td>
              <td>{num(q.amount)}</td>
              <td>{q.settlementOption}</td>
              <td class={`status ${q.status}`}>{q.status}</td>
              <td>{time(q.createdAt)}</td>
              <td>
                {q.status === "active" && (
                  <>
                    <button type="button" class="link" onClick={() => onEdit(q)}>
                      edit
                    </button>{" "}
                    <button
                      type="button"
                      class="link"
                      disabled={action.busy}
                      onClick={() =>
                        action.run(async () => {
                          await connection.call("v1/quote/delete", { rfqQuoteId: q.rfqQuoteId })
                          quotes.reload()
                        })
                      }
                    >
                      cancel
                    </button>
                  </>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {quotes.data !== undefined && quotes.data.results.length === 0 && <p class="hint">No quotes.</p>}
    </div>
  )
}

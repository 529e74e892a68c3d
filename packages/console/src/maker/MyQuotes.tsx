import { ErrorBox } from "../ui/ErrorBox.js"
import { time } from "../ui/format.js"
import { useAction, useConnection, useLiveLoad } from "../ui/hooks.js"
import { ListTable } from "../ui/ListTable.js"
import { quoteColumns } from "./QuoteColumns.js"
import type { MakerQuote } from "./QuoteDraft.js"

interface Props {
  /** Only this RFQ's quotes; all of the desk's when undefined. */
  readonly rfqId: number | undefined
  readonly onEdit: (quote: MakerQuote) => void
}

const columns = quoteColumns({ head: "at", format: time })

/** The desk's quotes, live over `rfq_quote.maker`: edit, cancel one, or cancel all. */
export const MyQuotes = ({ rfqId, onEdit }: Props) => {
  const connection = useConnection()
  const quotes = useLiveLoad(
    () => connection.call("v1/quote/list", rfqId === undefined ? { limit: 50 } : { rfqId, limit: 50 }),
    `my-quotes-${rfqId ?? "all"}`,
    ["rfq_quote.maker"],
    rfqId
  )
  const action = useAction()
  const active = (quotes.data?.results ?? []).filter((q) => q.status === "active")
  const cancel = (q: MakerQuote) =>
    action.run(async () => {
      await connection.call("v1/quote/delete", { rfqQuoteId: q.rfqQuoteId })
      quotes.reload()
    })
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
      <ListTable
        columns={[
          ...columns,
          {
            head: "",
            cell: (q) =>
              q.status === "active" && (
                <>
                  <button type="button" class="link" onClick={() => onEdit(q)}>
                    edit
                  </button>{" "}
                  <button type="button" class="link" disabled={action.busy} onClick={() => cancel(q)}>
                    cancel
                  </button>
                </>
              )
          }
        ]}
        rows={quotes.data?.results}
        rowKey={(q) => q.rfqQuoteId}
        rowAttributes={(q) => ({ "data-quote": q.rfqQuoteId })}
        empty="No quotes."
      />
    </div>
  )
}

import { concerns } from "../api/live.js"
import { ErrorBox } from "../ui/ErrorBox.js"
import { num, time } from "../ui/format.js"
import { useAction, useConnection, useLive, useLoad } from "../ui/hooks.js"
import { QuoteBook } from "./QuoteBook.js"
import { TradeResult } from "./TradeResult.js"

/**
 * One of the taker's RFQs: what was asked, the quotes arriving live (`rfq_quote.taker` tells that
 * the book changed; the book is read again, as the service orders it), accept, cancel, and the fill
 * with each account's allocation.
 */
export const TakerRfq = ({ rfqId }: { readonly rfqId: number }) => {
  const connection = useConnection()
  const rfq = useLoad(() => connection.call("v1/rfq/get", { id: rfqId }), `rfq-${rfqId}`)
  const books = useLoad(() => connection.call("v1/rfq/quotes", { id: rfqId }), `book-${rfqId}`)
  const credentials = useLoad(() => connection.call("v1/account/exchange-credentials", {}), "credentials")
  const action = useAction()
  useLive((event) => {
    if (concerns(event, ["rfq_quote.taker"], rfqId)) books.reload()
    if (concerns(event, ["rfq.taker"], rfqId)) rfq.reload()
  })
  const aliases = new Map((credentials.data ?? []).map((c) => [c.credentialsId, c.alias]))
  const r = rfq.data
  const open = r?.status === "open"
  return (
    <div class="taker-rfq" data-rfq={rfqId}>
      <ErrorBox error={rfq.error} />
      {r !== undefined && (
        <>
          <h3>
            RFQ #{r.rfqId}: {r.description}{" "}
            <span class={`status ${r.status}`} data-testid="rfq-status">
              {r.status}
            </span>
          </h3>
          <p>
            {r.strategy} · {num(r.amount)} {r.baseCurrency} · mark {num(r.markPrice)} · settles on{" "}
            {r.settlementOptions.map((o) => `${o} (${r.quoteCurrencies[o] ?? "?"})`).join(", ")} · expires{" "}
            {time(r.expiresAt)}
          </p>
          <table class="list legs-view">
            <tbody>
              {r.legs.map((l) => (
                <tr key={l.instrumentName}>
                  <td>{l.direction}</td>
                  <td>{l.instrumentName}</td>
                  <td>× {num(l.ratio)}</td>
                  <td>{num(l.amount)}</td>
                </tr>
              ))}
              {r.hedge !== undefined && (
                <tr>
                  <td>{r.hedge.direction}</td>
                  <td>{r.hedge.instrumentName} (hedge)</td>
                  <td>@ {num(r.hedge.price)}</td>
                  <td>{num(r.hedge.amount)}</td>
                </tr>
              )}
            </tbody>
          </table>
          <TradeResult rfq={r} aliases={aliases} />
        </>
      )}
      <ErrorBox error={books.error} />
      <ErrorBox error={action.error} />
      {r !== undefined && (open || (books.data ?? []).length > 0) && (
        <QuoteBook
          books={books.data ?? []}
          open={open}
          busy={action.busy}
          onAccept={(quote) =>
            action.run(async () => {
              await connection.call("v1/rfq/trade", { rfqQuoteId: quote.rfqQuoteId })
              rfq.reload()
              books.reload()
            })
          }
        />
      )}
      {open && (
        <button
          type="button"
          disabled={action.busy}
          onClick={() =>
            action.run(async () => {
              await connection.call("v1/rfq/cancel", { rfqId })
              rfq.reload()
            })
          }
        >
          Cancel RFQ
        </button>
      )}
    </div>
  )
}

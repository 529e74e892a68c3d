import { concerns } from "../api/live.js"
import { ErrorBox } from "../ui/ErrorBox.js"
import { num, time } from "../ui/format.js"
import { useConnection, useLive, useLoad } from "../ui/hooks.js"

/** The taker's latest RFQs, kept current by `rfq.taker`; one is selected to watch its quotes. */
export const TakerRfqs = (props: {
  readonly selected: number | undefined
  readonly onSelect: (rfqId: number) => void
}) => {
  const connection = useConnection()
  const rfqs = useLoad(() => connection.call("v1/rfq/list", { role: "taker", limit: 15 }), "taker-rfqs")
  useLive((event) => concerns(event, ["rfq.taker"]) && rfqs.reload())
  return (
    <div class="taker-rfqs">
      <h3>My RFQs</h3>
      <ErrorBox error={rfqs.error} />
      <table class="list">
        <thead>
          <tr>
            <th>RFQ</th>
            <th>structure</th>
            <th>amount</th>
            <th>status</th>
            <th>expires</th>
          </tr>
        </thead>
        <tbody>
          {(rfqs.data?.results ?? []).map((rfq) => (
            <tr
              key={rfq.rfqId}
              class={rfq.rfqId === props.selected ? "selected clickable" : "clickable"}
              data-rfq={rfq.rfqId}
              onClick={() => props.onSelect(rfq.rfqId)}
            >
              <td>#{rfq.rfqId}</td>
              <td>{rfq.description}</td>
              <td>{num(rfq.amount)}</td>
              <td class={`status ${rfq.status}`}>{rfq.status}</td>
              <td>{time(rfq.expiresAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {rfqs.data !== undefined && rfqs.data.results.length === 0 && (
        <p class="hint">No RFQs yet: build one on the left.</p>
      )}
    </div>
  )
}

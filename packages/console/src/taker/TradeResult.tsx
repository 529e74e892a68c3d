import type { EndpointOutput } from "@rfq/engine/api"
import { num, time } from "../ui/format.js"

type Rfq = EndpointOutput<"v1/rfq/get">

/** The fill as the taker sees it: status, side, price, amounts, and each account's allocation. */
export const TradeResult = ({
  rfq,
  aliases
}: {
  readonly rfq: Rfq
  readonly aliases: ReadonlyMap<number, string>
}) => {
  if (rfq.tradeId === undefined) return null
  return (
    <div class="trade">
      <h4>
        Trade #{rfq.tradeId}:{" "}
        <span class={`status ${rfq.status}`} data-testid="trade-status">
          {rfq.status}
        </span>
      </h4>
      <p>
        You {rfq.tradeDirection === "buy" ? "bought" : "sold"} {num(rfq.tradeAmount)} at {num(rfq.tradePrice)}{" "}
        {rfq.quoteCurrency}; filled {num(rfq.filledAmount)} of {num(rfq.tradeAmount)} at{" "}
        {time(rfq.tradeCreatedAt)}.
      </p>
      {(rfq.tradeAllocations ?? []).length > 0 && (
        <table class="list allocations">
          <thead>
            <tr>
              <th>account</th>
              <th>venue</th>
              <th>share</th>
              <th>amount</th>
              <th>status</th>
              <th>venue trade / reason</th>
            </tr>
          </thead>
          <tbody>
            {(rfq.tradeAllocations ?? []).map((a) => (
              <tr key={`${a.settlementOption}-${a.credentialsId}`} data-allocation={a.credentialsId}>
                <td>{aliases.get(a.credentialsId) ?? `#${a.credentialsId}`}</td>
                <td>{a.settlementOption}</td>
                <td>{num(a.percentage)} %</td>
                <td>{num(a.amount)}</td>
                <td class={`status ${a.status}`}>{a.status}</td>
                <td>{a.status === "failed" ? a.reason : a.exchangeTradeId}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  )
}

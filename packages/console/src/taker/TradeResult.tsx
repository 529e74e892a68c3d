import type { EndpointOutput } from "@rfq/engine/api"
import { num, time } from "../ui/format.js"
import { type Column, ListTable, statusColumn } from "../ui/ListTable.js"

type Rfq = EndpointOutput<"v1/rfq/get">
type Allocation = NonNullable<Rfq["tradeAllocations"]>[number]

const allocationColumns = (aliases: ReadonlyMap<number, string>): ReadonlyArray<Column<Allocation>> => [
  { head: "account", cell: (a) => aliases.get(a.credentialsId) ?? `#${a.credentialsId}` },
  { head: "venue", cell: (a) => a.settlementOption },
  { head: "share", cell: (a) => `${num(a.percentage)} %` },
  { head: "amount", cell: (a) => num(a.amount) },
  statusColumn(),
  { head: "venue trade / reason", cell: (a) => (a.status === "failed" ? a.reason : a.exchangeTradeId) }
]

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
        <ListTable
          class="list allocations"
          columns={allocationColumns(aliases)}
          rows={rfq.tradeAllocations}
          rowKey={(a) => `${a.settlementOption}-${a.credentialsId}`}
          rowAttributes={(a) => ({ "data-allocation": a.credentialsId })}
        />
      )}
    </div>
  )
}

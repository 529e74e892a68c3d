import type { EndpointOutput } from "@rfq/engine/api"
import { ErrorBox } from "../ui/ErrorBox.js"
import { num, time } from "../ui/format.js"
import { useConnection, useLiveLoad } from "../ui/hooks.js"
import { type Column, ListTable, selectableRow, statusColumn } from "../ui/ListTable.js"

type TakerRfqItem = EndpointOutput<"v1/rfq/list">["results"][number]

const columns: ReadonlyArray<Column<TakerRfqItem>> = [
  { head: "RFQ", cell: (rfq) => <>#{rfq.rfqId}</> },
  { head: "structure", cell: (rfq) => rfq.description },
  { head: "amount", cell: (rfq) => num(rfq.amount) },
  statusColumn(),
  { head: "expires", cell: (rfq) => time(rfq.expiresAt) }
]

/** The taker's latest RFQs, kept current by `rfq.taker`; one is selected to watch its quotes. */
export const TakerRfqs = (props: {
  readonly selected: number | undefined
  readonly onSelect: (rfqId: number) => void
}) => {
  const connection = useConnection()
  const rfqs = useLiveLoad(() => connection.call("v1/rfq/list", { role: "taker", limit: 15 }), "taker-rfqs", [
    "rfq.taker"
  ])
  return (
    <div class="taker-rfqs">
      <h3>My RFQs</h3>
      <ErrorBox error={rfqs.error} />
      <ListTable
        columns={columns}
        rows={rfqs.data?.results}
        rowKey={(rfq) => rfq.rfqId}
        rowAttributes={(rfq) => ({
          "data-rfq": rfq.rfqId,
          ...selectableRow(rfq.rfqId === props.selected, () => props.onSelect(rfq.rfqId))
        })}
        empty="No RFQs yet: build one on the left."
      />
    </div>
  )
}

import type { EndpointOutput } from "@rfq/engine/api"
import { ErrorBox } from "../ui/ErrorBox.js"
import { num, time } from "../ui/format.js"
import { useConnection, useLiveLoad } from "../ui/hooks.js"
import { type Column, ListTable } from "../ui/ListTable.js"

type PublicTrade = EndpointOutput<"v1/trades/public">["results"][number]

const columns: ReadonlyArray<Column<PublicTrade>> = [
  { head: "at", cell: (t) => time(t.createdAt) },
  { head: "structure", cell: (t) => t.description },
  { head: "price", cell: (t) => num(t.price) },
  { head: "amount", cell: (t) => num(t.amount) },
  { head: "venue", cell: (t) => t.settlementOption }
]

/** The public block-trade tape (`GET /v1/trades/public`, channel `trades`): no desk, maker or account. */
export const Tape = () => {
  const connection = useConnection()
  const tape = useLiveLoad(() => connection.call("v1/trades/public", { limit: 20 }), "tape", ["trades"])
  return (
    <section class="panel tape">
      <h2>Public tape</h2>
      <ErrorBox error={tape.error} />
      <ListTable
        columns={columns}
        rows={tape.data?.results}
        rowKey={(t) => t.tradeId}
        empty="No block trade yet."
      />
    </section>
  )
}

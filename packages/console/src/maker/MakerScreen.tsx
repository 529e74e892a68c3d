import type { EndpointOutput } from "@rfq/engine/api"
import { useState } from "preact/hooks"
import { ErrorBox } from "../ui/ErrorBox.js"
import { num, time } from "../ui/format.js"
import { useConnection, useLiveLoad } from "../ui/hooks.js"
import { type Column, ListTable, selectableRow } from "../ui/ListTable.js"
import { MmpStatus } from "./MmpStatus.js"
import { MyQuotes } from "./MyQuotes.js"
import type { MakerQuote } from "./QuoteDraft.js"
import { QuoteEditor } from "./QuoteEditor.js"

type Invite = EndpointOutput<"v1/rfq/list">["results"][number]

const inviteColumns: ReadonlyArray<Column<Invite>> = [
  { head: "RFQ", cell: (rfq) => <>#{rfq.rfqId}</> },
  { head: "structure", cell: (rfq) => rfq.description },
  {
    head: "amount",
    cell: (rfq) => (
      <>
        {num(rfq.amount)} {rfq.baseCurrency}
      </>
    )
  },
  { head: "mark", cell: (rfq) => num(rfq.markPrice) },
  { head: "expires", cell: (rfq) => time(rfq.expiresAt) }
]

/** Open RFQs the desk is invited on, live over `rfq.maker`. */
const IncomingRfqs = (props: {
  readonly selected: number | undefined
  readonly onSelect: (rfqId: number) => void
}) => {
  const connection = useConnection()
  const rfqs = useLiveLoad(
    () => connection.call("v1/rfq/list", { role: "maker", status: "open", limit: 50 }),
    "incoming",
    ["rfq.maker"]
  )
  return (
    <div class="incoming">
      <h3>Incoming RFQs</h3>
      <ErrorBox error={rfqs.error} />
      <ListTable
        columns={inviteColumns}
        rows={rfqs.data?.results}
        rowKey={(rfq) => rfq.rfqId}
        rowAttributes={(rfq) => ({
          "data-rfq": rfq.rfqId,
          ...selectableRow(rfq.rfqId === props.selected, () => props.onSelect(rfq.rfqId))
        })}
        empty="No open RFQ invites you yet; they appear here as takers send them."
      />
    </div>
  )
}

/** The selected RFQ as the maker sees it, with the quote editor. */
const MakerRfqPanel = (props: {
  readonly rfqId: number
  readonly editing: MakerQuote | undefined
  readonly onDone: () => void
}) => {
  const connection = useConnection()
  const rfq = useLiveLoad(
    () => connection.call("v1/rfq/get", { id: props.rfqId }),
    `maker-rfq-${props.rfqId}`,
    ["rfq.maker"],
    props.rfqId
  )
  const r = rfq.data
  return (
    <div class="maker-rfq" data-rfq={props.rfqId}>
      <ErrorBox error={rfq.error} />
      {r !== undefined && (
        <>
          <h3>
            RFQ #{r.rfqId}: {r.description} <span class={`status ${r.status}`}>{r.status}</span>
          </h3>
          <p>
            {r.strategy} · {num(r.amount)} {r.baseCurrency} · mark {num(r.markPrice)} · expires{" "}
            {time(r.expiresAt)}
            {r.tradeId !== undefined &&
              ` · traded: you ${r.tradeDirection === "buy" ? "bought" : "sold"} ${num(r.tradeAmount)} at ${num(r.tradePrice)}`}
          </p>
          {r.status === "open" && (
            <QuoteEditor
              key={props.editing?.rfqQuoteId ?? "new"}
              rfq={r}
              quote={props.editing}
              onDone={props.onDone}
            />
          )}
        </>
      )}
    </div>
  )
}

/** Maker: incoming RFQs on the left; the chosen RFQ, its quote and the desk's quotes on the right. */
export const MakerScreen = () => {
  const [selected, setSelected] = useState<number | undefined>(undefined)
  const [editing, setEditing] = useState<MakerQuote | undefined>(undefined)
  return (
    <div class="screen two-columns">
      <section class="panel">
        <MmpStatus />
        <IncomingRfqs
          selected={selected}
          onSelect={(rfqId) => {
            setSelected(rfqId)
            setEditing(undefined)
          }}
        />
      </section>
      <section class="panel">
        {selected === undefined ? (
          <p class="hint">Choose an incoming RFQ to price it and quote.</p>
        ) : (
          <MakerRfqPanel
            key={selected}
            rfqId={selected}
            editing={editing}
            onDone={() => setEditing(undefined)}
          />
        )}
        <MyQuotes
          rfqId={undefined}
          onEdit={(quote) => {
            setSelected(quote.rfqId)
            setEditing(quote)
          }}
        />
      </section>
    </div>
  )
}

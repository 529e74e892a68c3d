import type { EndpointInput, EndpointOutput } from "@rfq/engine/api"
import { useState } from "preact/hooks"
import { quoteColumns } from "../maker/QuoteColumns.js"
import { ErrorBox } from "../ui/ErrorBox.js"
import { ShortField } from "../ui/Fields.js"
import { dateTime, num } from "../ui/format.js"
import { useConnection, useLiveLoad } from "../ui/hooks.js"
import { type Column, ListTable, statusColumn } from "../ui/ListTable.js"
import { Pager, usePages } from "../ui/Pager.js"
import { Tape } from "./Tape.js"

const STATUSES = ["open", "traded", "filled", "filledPartial", "cancelled", "expired"] as const

type RfqListItem = EndpointOutput<"v1/rfq/list">["results"][number]

const rfqColumns: ReadonlyArray<Column<RfqListItem>> = [
  { head: "RFQ", cell: (r) => <>#{r.rfqId}</> },
  { head: "role", cell: (r) => r.role },
  { head: "structure", cell: (r) => r.description },
  {
    head: "amount",
    cell: (r) => (
      <>
        {num(r.amount)} {r.baseCurrency}
      </>
    )
  },
  statusColumn(),
  {
    head: "trade",
    cell: (r) =>
      r.tradeId === undefined
        ? ""
        : `${r.tradeDirection} ${num(r.filledAmount)}/${num(r.tradeAmount)} @ ${num(r.tradePrice)}`
  },
  { head: "created", cell: (r) => dateTime(r.createdAt) }
]

/** A filter by one value among `values`; "" (shown as `none`) filters nothing. */
const SelectFilter = (props: {
  readonly label: string
  readonly name: string
  readonly none: string
  readonly values: ReadonlyArray<string>
  readonly value: string
  readonly onChange: (value: string) => void
}) => (
  <label>
    {props.label}{" "}
    <select
      aria-label={props.name}
      value={props.value}
      onChange={(e) => props.onChange(e.currentTarget.value)}
    >
      <option value="">{props.none}</option>
      {props.values.map((value) => (
        <option key={value}>{value}</option>
      ))}
    </select>
  </label>
)

/** Every RFQ the user may see, with the service's filters (role, status, base currency). */
const RfqList = () => {
  const connection = useConnection()
  const [role, setRole] = useState("")
  const [statuses, setStatuses] = useState<ReadonlyArray<string>>([])
  const [base, setBase] = useState("")
  const pages = usePages()
  const query: Record<string, unknown> = { limit: 20 }
  if (role !== "") query["role"] = role
  if (statuses.length > 0) query["status"] = statuses.join(",")
  if (base !== "") query["baseCurrency"] = base
  if (pages.cursor !== 0) query["cursor"] = pages.cursor
  const list = useLiveLoad(
    () => connection.call("v1/rfq/list", query as EndpointInput<"v1/rfq/list">),
    JSON.stringify(query),
    ["rfq.taker", "rfq.maker"]
  )
  const filter = (apply: () => void) => {
    apply()
    pages.reset()
  }
  return (
    <section class="panel">
      <h2>RFQs</h2>
      <div class="row filters">
        <SelectFilter
          label="Role"
          name="role filter"
          none="both"
          values={["taker", "maker"]}
          value={role}
          onChange={(value) => filter(() => setRole(value))}
        />
        <SelectFilter
          label="Base"
          name="base currency filter"
          none="any"
          values={["BTC", "ETH"]}
          value={base}
          onChange={(value) => filter(() => setBase(value))}
        />
        <span>Status:</span>
        {STATUSES.map((s) => (
          <label key={s}>
            <input
              type="checkbox"
              checked={statuses.includes(s)}
              onChange={(e) => {
                const on = e.currentTarget.checked
                filter(() => setStatuses((list) => (on ? [...list, s] : list.filter((x) => x !== s))))
              }}
            />{" "}
            {s}
          </label>
        ))}
      </div>
      <ErrorBox error={list.error} />
      <ListTable
        columns={rfqColumns}
        rows={list.data?.results}
        rowKey={(r) => r.rfqId}
        rowAttributes={(r) => ({ "data-rfq": r.rfqId })}
      />
      <Pager
        page={pages.page}
        next={list.data?.cursor}
        total={list.data?.totalResults}
        onNext={() => pages.next(list.data?.cursor ?? 0)}
        onBack={pages.back}
      />
    </section>
  )
}

const quoteListColumns = quoteColumns({ head: "created", format: dateTime })

/** The desk's quotes as a maker (`GET /v1/rfq/quotes`), optionally of one RFQ. */
const QuoteList = () => {
  const connection = useConnection()
  const [rfqId, setRfqId] = useState("")
  const pages = usePages()
  const query: Record<string, unknown> = { limit: 20 }
  if (rfqId.trim() !== "") query["rfqId"] = rfqId.trim()
  if (pages.cursor !== 0) query["cursor"] = pages.cursor
  const list = useLiveLoad(
    () => connection.call("v1/quote/list", query as EndpointInput<"v1/quote/list">),
    JSON.stringify(query),
    ["rfq_quote.maker"]
  )
  return (
    <section class="panel">
      <h2>My quotes</h2>
      <div class="row filters">
        <ShortField
          label="RFQ id"
          name="quote rfq filter"
          value={rfqId}
          onInput={(value) => {
            setRfqId(value)
            pages.reset()
          }}
        />
      </div>
      <ErrorBox error={list.error} />
      <ListTable columns={quoteListColumns} rows={list.data?.results} rowKey={(q) => q.rfqQuoteId} />
      <Pager
        page={pages.page}
        next={list.data?.cursor}
        total={list.data?.totalResults}
        onNext={() => pages.next(list.data?.cursor ?? 0)}
        onBack={pages.back}
      />
    </section>
  )
}

/** Both roles: the RFQ list and the quote list with the service's filters, and the public tape. */
export const ListsScreen = () => (
  <div class="screen two-columns">
    <RfqList />
    <div>
      <QuoteList />
      <Tape />
    </div>
  </div>
)

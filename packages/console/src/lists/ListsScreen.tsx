import type { EndpointInput } from "@rfq/engine/api"
import { useState } from "preact/hooks"
import { concerns } from "../api/live.js"
import { ErrorBox } from "../ui/ErrorBox.js"
import { dateTime, num, side } from "../ui/format.js"
import { useConnection, useLive, useLoad } from "../ui/hooks.js"
import { Tape } from "./Tape.js"

const STATUSES = ["open", "traded", "filled", "filledPartial", "cancelled", "expired"] as const

/** Page through with the service's cursor: the list of cursors that led here, to go back. */
const usePages = () => {
  const [cursors, setCursors] = useState<ReadonlyArray<number>>([0])
  return {
    cursor: cursors[cursors.length - 1] ?? 0,
    page: cursors.length,
    next: (cursor: number) => setCursors((c) => [...c, cursor]),
    back: () => setCursors((c) => (c.length > 1 ? c.slice(0, -1) : c)),
    reset: () => setCursors([0])
  }
}

const Pager = (props: {
  readonly page: number
  readonly next: number | undefined
  readonly onNext: () => void
  readonly onBack: () => void
  readonly total: number | undefined
}) => (
  <div class="row pager">
    <button type="button" disabled={props.page <= 1} onClick={props.onBack}>
      Previous
    </button>
    <span>
      page {props.page}
      {props.total === undefined ? "" : ` · ${props.total} in all`}
    </span>
    <button type="button" disabled={props.next === undefined || props.next === 0} onClick={props.onNext}>
      Next
    </button>
  </div>
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
  const list = useLoad(
    () => connection.call("v1/rfq/list", query as EndpointInput<"v1/rfq/list">),
    JSON.stringify(query)
  )
  useLive((event) => concerns(event, ["rfq.taker", "rfq.maker"]) && list.reload())
  const filter = (apply: () => void) => {
    apply()
    pages.reset()
  }
  return (
    <section class="panel">
      <h2>RFQs</h2>
      <div class="row filters">
        <label>
          Role{" "}
          <select
            aria-label="role filter"
            value={role}
            onChange={(e) => filter(() => setRole(e.currentTarget.value))}
          >
            <option value="">both</option>
            <option value="taker">taker</option>
            <option value="maker">maker</option>
          </select>
        </label>
        <label>
          Base{" "}
          <select
            aria-label="base currency filter"
            value={base}
            onChange={(e) => filter(() => setBase(e.currentTarget.value))}
          >
            <option value="">any</option>
            <option>BTC</option>
            <option>ETH</option>
          </select>
        </label>
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
      <table class="list">
        <thead>
          <tr>
            <th>RFQ</th>
            <th>role</th>
            <th>structure</th>
            <th>amount</th>
            <th>status</th>
            <th>trade</th>
            <th>created</th>
          </tr>
        </thead>
        <tbody>
          {(list.data?.results ?? []).map((r) => (
            <tr key={r.rfqId} data-rfq={r.rfqId}>
              <td>#{r.rfqId}</td>
              <td>{r.role}</td>
              <td>{r.description}</td>
              <td>
                {num(r.amount)} {r.baseCurrency}
              </td>
              <td class={`status ${r.status}`}>{r.status}</td>
              <td>
                {r.tradeId === undefined
                  ? ""
                  : `${r.tradeDirection} ${num(r.filledAmount)}/${num(r.tradeAmount)} @ ${num(r.tradePrice)}`}
              </td>
              <td>{dateTime(r.createdAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
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

/** The desk's quotes as a maker (`GET /v1/rfq/quotes`), optionally of one RFQ. */
const QuoteList = () => {
  const connection = useConnection()
  const [rfqId, setRfqId] = useState("")
  const pages = usePages()
  const query: Record<string, unknown> = { limit: 20 }
  if (rfqId.trim() !== "") query["rfqId"] = rfqId.trim()
  if (pages.cursor !== 0) query["cursor"] = pages.cursor
  const list = useLoad(
    () => connection.call("v1/quote/list", query as EndpointInput<"v1/quote/list">),
    JSON.stringify(query)
  )
  useLive((event) => concerns(event, ["rfq_quote.maker"]) && list.reload())
  return (
    <section class="panel">
      <h2>My quotes</h2>
      <div class="row filters">
        <label>
          RFQ id{" "}
          <input
            aria-label="quote rfq filter"
            class="short"
            value={rfqId}
            onInput={(e) => {
              setRfqId(e.currentTarget.value)
              pages.reset()
            }}
          />
        </label>
      </div>
      <ErrorBox error={list.error} />
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
            <th>created</th>
          </tr>
        </thead>
        <tbody>
          {(list.data?.results ?? []).map((q) => (
            <tr key={q.rfqQuoteId}>
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
              <td>{dateTime(q.createdAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
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

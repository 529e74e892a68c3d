import type { DatabaseReader } from "./DatabaseReader.js"
import { checkDurability } from "./DurabilityCheck.js"
import { type Desk, legPricesFor, quoteBody } from "./Lifecycle.js"
import { type StallLoad, sleep } from "./StallLoad.js"

/**
 * After a database stall, once the service answers again: is what it shows what is stored, is
 * everything it acknowledged there, is every write it answered 503 there whole or not at all, and
 * does it go on working (read back, quote, trade) on the RFQs the stall touched?
 */
export interface StallConsistency {
  lost: number
  doubled: number
  /** States the spec does not allow once at rest: a trade still settling, pending allocations… */
  invalid: number
  /** A write answered 503 found in part, or twice, or not found by its retry. */
  partial: number
  /** An RFQ whose status, trade or active quotes differ between the API and the database. */
  divergences: number
  /** Read back, quote and trade on RFQs the stall touched, after recovery: failures. */
  afterRecoveryFailures: number
  /** Writes answered 503 that had committed all the same (the case the engine's reload is for). */
  committedAnyway: number
  problems: Array<string>
}

const apiStatusOf = (stored: string) => (stored === "trading" ? "open" : stored)

/** Waits (at most `ms`) until no trade is settling: the service finishes cut-off settlements itself. */
const waitForSettled = async (db: DatabaseReader, ms: number): Promise<void> => {
  const until = Date.now() + ms
  while (Date.now() < until) {
    const [row] = await db.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM rfqs WHERE status = 'trading') + (SELECT count(*) FROM allocations WHERE status = 'pending') AS n`
    )
    if (Number(row?.n) === 0) return
    await sleep(250)
  }
}

export const checkAfterStall = async (
  db: DatabaseReader,
  load: StallLoad,
  desks: { readonly taker: Desk; readonly maker: Desk }
): Promise<StallConsistency> => {
  const out: StallConsistency = {
    lost: 0,
    doubled: 0,
    invalid: 0,
    partial: 0,
    divergences: 0,
    afterRecoveryFailures: 0,
    committedAnyway: 0,
    problems: []
  }
  const note = (kind: keyof Omit<StallConsistency, "problems">, what: string) => {
    out[kind]++
    if (out.problems.length < 30) out.problems.push(`${kind}: ${what}`)
  }
  await waitForSettled(db, 20_000)
  const checkedAt = Date.now()

  // Creates answered 503: the retry under the same request id answers the one RFQ, whole.
  for (const { requestId, body } of load.doubtful.rfqCreates) {
    const a = await desks.taker.request("POST", `/v1/rfq/${requestId}`, body)
    if (a.status !== 200) {
      note("partial", `retry of request ${requestId}: ${a.status} ${a.text.slice(0, 120)}`)
      continue
    }
    const rfqId = (a.body as { rfqId: number }).rfqId
    load.rfqIds.add(rfqId)
    const rows = await db.query<{ id: string; legs: string; events: string; created: string }>(
      `SELECT r.id::text AS id, r.created_at::text AS created, (SELECT count(*) FROM rfq_legs l WHERE l.rfq_id = r.id)::text AS legs,
         (SELECT count(*) FROM rfq_events e WHERE e.rfq_id = r.id AND e.seq = 1)::text AS events
       FROM rfqs r WHERE r.request_id = $1 AND r.taker_user_id = (SELECT taker_user_id FROM rfqs WHERE id = $2)`,
      [requestId, rfqId]
    )
    if (rows.length !== 1 || rows[0]!.id !== String(rfqId))
      note("partial", `request ${requestId}: ${rows.length} RFQs stored, retry answered ${rfqId}`)
    else if (rows[0]!.legs === "0" || rows[0]!.events !== "1")
      note("partial", `RFQ ${rfqId} of request ${requestId} stored without its legs or its creation event`)
    else if (Number(rows[0]!.created) < checkedAt) out.committedAnyway++
  }
  for (const { rfqId } of load.doubtful.trades) {
    const [row] = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM trades WHERE rfq_id = $1`, [
      rfqId
    ])
    if (row?.n !== "0") out.committedAnyway++
  }
  for (const { rfqId } of load.doubtful.quotes) {
    const [row] = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM quotes WHERE rfq_id = $1`, [
      rfqId
    ])
    if (row?.n !== "0") out.committedAnyway++
  }

  // Memory against storage, for every RFQ the run touched.
  const touched = new Set<number>([
    ...load.rfqIds,
    ...load.doubtful.quotes.map((q) => q.rfqId),
    ...load.doubtful.trades.map((t) => t.rfqId)
  ])
  for (const rfqId of touched) {
    const shown = await desks.taker.request("GET", `/v1/rfq/${rfqId}`)
    const [row] = await db.query<{
      status: string
      deleted: boolean
      trade: string | null
      active: string | null
    }>(
      `SELECT r.status, r.deleted_at IS NOT NULL AS deleted, (SELECT t.id::text FROM trades t WHERE t.rfq_id = r.id AND t.status <> 'failed') AS trade,
         (SELECT string_agg(q.id::text, ',' ORDER BY q.id) FROM quotes q WHERE q.rfq_id = r.id AND q.status = 'active') AS active
       FROM rfqs r WHERE r.id = $1`,
      [rfqId]
    )
    if (row?.deleted === true) {
      if (shown.status !== 404)
        note("divergences", `RFQ ${rfqId}: deleted, but the API answers ${shown.status}`)
      continue
    }
    if (row === undefined || shown.status !== 200) {
      note(
        "divergences",
        `RFQ ${rfqId}: API ${shown.status}, database ${row === undefined ? "none" : row.status}`
      )
      continue
    }
    const view = shown.body as { status: string; tradeId?: number }
    if (view.status !== apiStatusOf(row.status))
      note("divergences", `RFQ ${rfqId}: API ${view.status}, database ${row.status}`)
    if (String(view.tradeId ?? "") !== (row.trade ?? "") && row.status !== "trading")
      note("divergences", `RFQ ${rfqId}: API trade ${view.tradeId}, database trade ${row.trade}`)
    if (view.status !== "open") continue
    const book = await desks.taker.request("GET", `/v1/rfq/${rfqId}/quote`)
    const ids = (
      (book.body ?? []) as ReadonlyArray<{
        bids: Array<{ rfqQuoteId: number }>
        asks: Array<{ rfqQuoteId: number }>
      }>
    )
      .flatMap((b) => [...b.bids, ...b.asks].map((q) => q.rfqQuoteId))
      .sort((a, b) => a - b)
      .join(",")
    if (book.status !== 200 || ids !== (row.active ?? ""))
      note("divergences", `RFQ ${rfqId}: API active quotes [${ids}], database [${row.active ?? ""}]`)
  }

  const durability = await checkDurability(db, load.acknowledged)
  out.lost += durability.lost
  out.doubled += durability.doubled + durability.unknownBlockTrades
  out.invalid += durability.invalid
  for (const p of durability.problems.slice(0, 10)) if (out.problems.length < 30) out.problems.push(p)

  // The RFQs the stall touched go on working: quote on the open ones, trade the quote.
  const open: Array<number> = []
  for (const rfqId of new Set([
    ...load.doubtful.quotes.map((q) => q.rfqId),
    ...load.doubtful.trades.map((t) => t.rfqId)
  ])) {
    const a = await desks.taker.request("GET", `/v1/rfq/${rfqId}`)
    if (a.status === 200 && (a.body as { status: string }).status === "open") open.push(rfqId)
  }
  for (const rfqId of open.slice(0, 3)) {
    try {
      const legs = await legPricesFor(desks.maker, rfqId)
      const quoted = await desks.maker.request("POST", "/v1/rfq/quote", quoteBody(rfqId, 50, legs))
      if (quoted.status !== 200) throw new Error(`quote: ${quoted.status} ${quoted.text.slice(0, 120)}`)
      const quoteId = (quoted.body as { rfqQuoteId: number }).rfqQuoteId
      const traded = await desks.taker.request("POST", "/v1/rfq/trade", { rfqQuoteId: quoteId })
      if (traded.status !== 200) throw new Error(`trade: ${traded.status} ${traded.text.slice(0, 120)}`)
      const [row] = await db.query<{ status: string }>(`SELECT status FROM rfqs WHERE id = $1`, [rfqId])
      if (row?.status !== "filled") throw new Error(`stored as ${row?.status} after the trade`)
    } catch (error) {
      note("afterRecoveryFailures", `RFQ ${rfqId}: ${String(error).slice(0, 200)}`)
    }
  }
  return out
}

import { BigDecimal } from "effect"
import type { DatabaseReader } from "./DatabaseReader.js"
import type { Acknowledged } from "./Witness.js"

/**
 * The verdict on a database after crashes, against what clients were told:
 * - lost: an acknowledged RFQ, quote, cancel, trade or block trade that the database lacks (or that
 *   it shows undone: a cancelled RFQ open again, a trade no longer settled);
 * - doubled: a block trade executed twice: two ledger entries for one account of one RFQ, two
 *   trades of one RFQ on the venue, or one venue trade claimed by two allocations;
 * - unknown: a ledger entry that no settled allocation of the service accounts for;
 * - invalid: a state the spec and contract do not allow (see `invalidStates`).
 */
export interface DurabilityFigures {
  lost: number
  doubled: number
  unknownBlockTrades: number
  invalid: number
  problems: Array<string>
}

const TERMINAL_OR_OPEN = new Set(["open", "filled", "filledPartial", "cancelled", "expired"])

const dec = (s: string) => BigDecimal.unsafeFromString(s)
const sum = (xs: ReadonlyArray<string>) => xs.reduce((acc, x) => BigDecimal.sum(acc, dec(x)), dec("0"))
const same = (a: BigDecimal.BigDecimal, b: BigDecimal.BigDecimal) => BigDecimal.equals(a, b)

interface Rows {
  readonly rfqs: Array<{ id: string; status: string }>
  readonly quotes: Array<{ id: string; rfq_id: string; status: string }>
  readonly trades: Array<{
    id: string
    rfq_id: string
    quote_id: string
    status: string
    amount: string
    filled_amount: string
  }>
  readonly allocations: Array<{
    trade_id: string
    venue: string
    credentials_id: string
    amount: string
    status: string
    idempotency_key: string
    exchange_trade_id: string | null
  }>
  readonly ledger: Array<{ venue: string; idempotency_key: string; block_trade_id: string }>
  readonly events: Array<{ rfq_id: string; n: string; m: string }>
}

const readRows = async (db: DatabaseReader): Promise<Rows> => ({
  rfqs: await db.query(`SELECT id::text AS id, status FROM rfqs`),
  quotes: await db.query(`SELECT id::text AS id, rfq_id::text AS rfq_id, status FROM quotes`),
  trades: await db.query(
    `SELECT id::text AS id, rfq_id::text AS rfq_id, quote_id::text AS quote_id, status,
            amount::text AS amount, filled_amount::text AS filled_amount FROM trades`
  ),
  allocations: await db.query(
    `SELECT trade_id::text AS trade_id, venue, credentials_id::text AS credentials_id, amount::text AS amount,
            status, idempotency_key, exchange_trade_id FROM allocations`
  ),
  ledger: await db.query(`SELECT venue, idempotency_key, block_trade_id FROM venue_block_trades`),
  events: await db.query(
    `SELECT rfq_id::text AS rfq_id, count(*)::text AS n, max(seq)::text AS m FROM rfq_events GROUP BY rfq_id`
  )
})

const KEY = /^rfq-(\d+)-trade-(\d+)-account-(\d+)$/

export const checkDurability = async (
  db: DatabaseReader,
  acknowledged: ReadonlyArray<Acknowledged>
): Promise<DurabilityFigures> => {
  const rows = await readRows(db)
  const figures: DurabilityFigures = { lost: 0, doubled: 0, unknownBlockTrades: 0, invalid: 0, problems: [] }
  const note = (kind: "lost" | "doubled" | "unknownBlockTrades" | "invalid", what: string) => {
    figures[kind]++
    if (figures.problems.length < 50) figures.problems.push(`${kind}: ${what}`)
  }

  const rfqs = new Map(rows.rfqs.map((r) => [r.id, r]))
  const quotes = new Map(rows.quotes.map((q) => [q.id, q]))
  const trades = new Map(rows.trades.map((t) => [t.id, t]))
  const allocationsOf = new Map<string, Array<Rows["allocations"][number]>>()
  for (const a of rows.allocations)
    allocationsOf.set(a.trade_id, [...(allocationsOf.get(a.trade_id) ?? []), a])
  const ledgerByBlockTrade = new Set(rows.ledger.map((l) => `${l.venue}:${l.block_trade_id}`))

  // ---- lost -------------------------------------------------------------------------------------
  for (const ack of acknowledged) {
    const rfq = rfqs.get(String(ack.rfqId))
    switch (ack.t) {
      case "rfq":
        if (rfq === undefined) note("lost", `rfq ${ack.rfqId}`)
        break
      case "quote": {
        const q = quotes.get(String(ack.quoteId))
        if (q === undefined || q.rfq_id !== String(ack.rfqId))
          note("lost", `quote ${ack.quoteId} of rfq ${ack.rfqId}`)
        break
      }
      case "cancel":
        if (rfq?.status !== "cancelled") note("lost", `cancel of rfq ${ack.rfqId} (status ${rfq?.status})`)
        break
      case "trade": {
        const trade = trades.get(String(ack.tradeId))
        if (
          trade === undefined ||
          trade.rfq_id !== String(ack.rfqId) ||
          trade.quote_id !== String(ack.quoteId)
        ) {
          note("lost", `trade ${ack.tradeId} of rfq ${ack.rfqId}`)
          break
        }
        if (trade.status !== "filled" && trade.status !== "filledPartial")
          note("lost", `trade ${ack.tradeId} is ${trade.status} after being acknowledged`)
        if (rfq?.status !== "filled" && rfq?.status !== "filledPartial")
          note("lost", `rfq ${ack.rfqId} of acknowledged trade is ${rfq?.status}`)
        const stored = allocationsOf.get(trade.id) ?? []
        // The per-account outcomes the client was shown (split RFQs) are the ones stored.
        const shown = [...ack.allocations].sort().join(",")
        const kept = stored
          .map((a) => a.status)
          .sort()
          .join(",")
        if (ack.allocations.length > 0 && shown !== kept)
          note("lost", `allocations of trade ${ack.tradeId}: acknowledged ${shown}, stored ${kept}`)
        const settled = stored.filter((a) => a.status === "filled")
        for (const id of ack.blockTradeIds) {
          const venueId = settled.find((a) => a.exchange_trade_id === id)
          if (venueId === undefined) note("lost", `block trade ${id} of trade ${ack.tradeId} (allocation)`)
          else if (!ledgerByBlockTrade.has(`${venueId.venue}:${id}`))
            note("lost", `block trade ${id} of trade ${ack.tradeId} (venue ledger)`)
        }
        break
      }
    }
  }

  // ---- doubled and unknown ----------------------------------------------------------------------
  const perAccount = new Map<string, number>()
  const tradesPerRfq = new Map<string, Set<string>>()
  for (const l of rows.ledger) {
    const key = KEY.exec(l.idempotency_key)
    if (key === null) {
      note("unknownBlockTrades", `ledger key ${l.idempotency_key} is not an allocation key`)
      continue
    }
    const [, rfqId, tradeId, account] = key as unknown as [string, string, string, string]
    const slot = `${l.venue}:${rfqId}:${account}`
    perAccount.set(slot, (perAccount.get(slot) ?? 0) + 1)
    tradesPerRfq.set(rfqId, new Set([...(tradesPerRfq.get(rfqId) ?? []), tradeId]))
  }
  for (const [slot, n] of perAccount) if (n > 1) note("doubled", `${n} block trades for ${slot}`)
  for (const [rfqId, ids] of tradesPerRfq)
    if (ids.size > 1) note("doubled", `rfq ${rfqId} executed under trades ${[...ids].join(", ")}`)
  const claims = new Map<string, number>()
  for (const a of rows.allocations) {
    if (a.exchange_trade_id === null) continue
    const k = `${a.venue}:${a.exchange_trade_id}`
    claims.set(k, (claims.get(k) ?? 0) + 1)
  }
  for (const [k, n] of claims) if (n > 1) note("doubled", `venue trade ${k} claimed by ${n} allocations`)
  const settledByKey = new Map(
    rows.allocations.filter((a) => a.status === "filled").map((a) => [a.idempotency_key, a])
  )
  for (const l of rows.ledger) {
    const a = settledByKey.get(l.idempotency_key)
    if (a === undefined || a.exchange_trade_id !== l.block_trade_id || a.venue !== l.venue)
      note("unknownBlockTrades", `ledger ${l.venue} ${l.block_trade_id} (${l.idempotency_key})`)
  }

  // ---- invalid states -----------------------------------------------------------------------------
  for (const problem of invalidStates(rows)) note("invalid", problem)
  return figures
}

/** Every rule a stored RFQ, its quotes, trade and allocations must satisfy once the host is at rest. */
const invalidStates = (rows: Rows): Array<string> => {
  const out: Array<string> = []
  const liveTrades = new Map<string, Array<Rows["trades"][number]>>()
  for (const t of rows.trades) {
    if (t.status === "failed") continue
    liveTrades.set(t.rfq_id, [...(liveTrades.get(t.rfq_id) ?? []), t])
  }
  const quotesOf = new Map<string, Array<Rows["quotes"][number]>>()
  for (const q of rows.quotes) quotesOf.set(q.rfq_id, [...(quotesOf.get(q.rfq_id) ?? []), q])
  const allocationsOf = new Map<string, Array<Rows["allocations"][number]>>()
  for (const a of rows.allocations)
    allocationsOf.set(a.trade_id, [...(allocationsOf.get(a.trade_id) ?? []), a])

  for (const rfq of rows.rfqs) {
    const where = `rfq ${rfq.id} (${rfq.status})`
    if (!TERMINAL_OR_OPEN.has(rfq.status)) out.push(`${where}: status after restart`)
    const traded = liveTrades.get(rfq.id) ?? []
    const qs = quotesOf.get(rfq.id) ?? []
    const isTraded = rfq.status === "filled" || rfq.status === "filledPartial"
    if (isTraded) {
      if (traded.length !== 1) out.push(`${where}: ${traded.length} trades`)
      const trade = traded[0]
      if (trade !== undefined && trade.status !== rfq.status) out.push(`${where}: trade is ${trade.status}`)
      const filledQuotes = qs.filter((q) => q.status === "filled")
      if (filledQuotes.length !== 1 || filledQuotes[0]!.id !== trade?.quote_id)
        out.push(`${where}: filled quotes ${filledQuotes.map((q) => q.id).join(",") || "none"}`)
    } else if (traded.length > 0) out.push(`${where}: has trade ${traded.map((t) => t.id).join(",")}`)
    if (rfq.status !== "open" && qs.some((q) => q.status === "active")) out.push(`${where}: active quotes`)
    if (!isTraded && qs.some((q) => q.status === "filled")) out.push(`${where}: filled quote without a trade`)
  }
  for (const t of rows.trades) {
    const where = `trade ${t.id} (${t.status})`
    const allocations = allocationsOf.get(t.id) ?? []
    if (t.status === "pending") out.push(`${where}: still pending after restart`)
    if (allocations.some((a) => a.status === "pending"))
      out.push(`${where}: pending allocations after restart`)
    if (allocations.length === 0) out.push(`${where}: no allocations`)
    else if (!same(sum(allocations.map((a) => a.amount)), dec(t.amount)))
      out.push(`${where}: allocations do not add up to ${t.amount}`)
    const filled = sum(allocations.filter((a) => a.status === "filled").map((a) => a.amount))
    if (t.status !== "failed" && !same(filled, dec(t.filled_amount)))
      out.push(`${where}: filled_amount ${t.filled_amount} but settled ${BigDecimal.format(filled)}`)
    if (t.status === "filled" && !same(filled, dec(t.amount))) out.push(`${where}: filled but not in full`)
    if (t.status === "filledPartial" && (BigDecimal.isZero(filled) || same(filled, dec(t.amount))))
      out.push(`${where}: partial fill of ${BigDecimal.format(filled)}`)
    if (t.status === "failed" && allocations.some((a) => a.status === "filled"))
      out.push(`${where}: failed with a settled allocation`)
  }
  for (const e of rows.events) if (e.n !== e.m) out.push(`rfq ${e.rfq_id}: ${e.n} events but last seq ${e.m}`)
  return out
}

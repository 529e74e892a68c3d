import { describe, expect, it } from "vitest"
import type { DatabaseReader } from "../../src/reliability/DatabaseReader.js"
import { checkDurability } from "../../src/reliability/DurabilityCheck.js"
import type { Acknowledged } from "../../src/reliability/Witness.js"

/**
 * The crash verdict itself: a database that lost, doubled or corrupted something must be called
 * out, or the published zeros would mean nothing. Tables are given as rows the way the checker
 * queries them.
 */
type Tables = Record<
  "rfqs" | "quotes" | "trades" | "allocations" | "ledger" | "events",
  Array<Record<string, unknown>>
>

const fake = (t: Tables): DatabaseReader => ({
  query: async <R>(text: string) => {
    const table = /FROM (\w+)/.exec(text)![1]!
    const name = table === "venue_block_trades" ? "ledger" : table === "rfq_events" ? "events" : table
    return t[name as keyof Tables] as Array<R>
  },
  close: async () => undefined
})

const key = (rfq: number, trade: number, account: number) => `rfq-${rfq}-trade-${trade}-account-${account}`

/** RFQ 1 filled by trade 1 (two accounts), RFQ 2 open with a quote, RFQ 3 cancelled. */
const healthy = (): Tables => ({
  rfqs: [
    { id: "1", status: "filled" },
    { id: "2", status: "open" },
    { id: "3", status: "cancelled" }
  ],
  quotes: [
    { id: "10", rfq_id: "1", status: "filled" },
    { id: "11", rfq_id: "1", status: "cancelled" },
    { id: "12", rfq_id: "2", status: "active" }
  ],
  trades: [{ id: "1", rfq_id: "1", quote_id: "10", status: "filled", amount: "100", filled_amount: "100" }],
  allocations: [
    {
      trade_id: "1",
      venue: "DBT",
      credentials_id: "1",
      amount: "60",
      status: "filled",
      idempotency_key: key(1, 1, 1),
      exchange_trade_id: "DBT-1"
    },
    {
      trade_id: "1",
      venue: "DBT",
      credentials_id: "2",
      amount: "40",
      status: "filled",
      idempotency_key: key(1, 1, 2),
      exchange_trade_id: "DBT-2"
    }
  ],
  ledger: [
    { venue: "DBT", idempotency_key: key(1, 1, 1), block_trade_id: "DBT-1" },
    { venue: "DBT", idempotency_key: key(1, 1, 2), block_trade_id: "DBT-2" }
  ],
  events: [
    { rfq_id: "1", n: "3", m: "3" },
    { rfq_id: "2", n: "2", m: "2" }
  ]
})

const acks: Array<Acknowledged> = [
  { t: "rfq", rfqId: 1, split: "split" },
  { t: "quote", rfqId: 1, quoteId: 10 },
  {
    t: "trade",
    rfqId: 1,
    quoteId: 10,
    tradeId: 1,
    blockTradeIds: ["DBT-1", "DBT-2"],
    allocations: ["filled", "filled"]
  },
  { t: "rfq", rfqId: 2, split: "single" },
  { t: "quote", rfqId: 2, quoteId: 12 },
  { t: "cancel", rfqId: 3 }
]

const verdict = async (t: Tables) => {
  const f = await checkDurability(fake(t), acks)
  return { lost: f.lost, doubled: f.doubled, unknown: f.unknownBlockTrades, invalid: f.invalid }
}

describe("checkDurability", () => {
  it("passes a consistent database", async () => {
    expect(await verdict(healthy())).toEqual({ lost: 0, doubled: 0, unknown: 0, invalid: 0 })
  })

  it("counts an acknowledged quote, cancel or block trade that is missing as lost", async () => {
    const t = healthy()
    t.quotes = t.quotes.filter((q) => q.id !== "12")
    t.rfqs = t.rfqs.map((r) => (r.id === "3" ? { ...r, status: "open" } : r))
    t.ledger = t.ledger.slice(1)
    expect((await verdict(t)).lost).toBe(3)
  })

  it("counts an acknowledged per-account outcome that the database no longer holds as lost", async () => {
    const t = healthy()
    t.allocations = t.allocations.map((a, i) =>
      i === 1 ? { ...a, status: "failed", exchange_trade_id: null } : a
    )
    expect((await verdict(t)).lost).toBeGreaterThanOrEqual(2)
  })

  it("counts a second execution for the same RFQ as doubled", async () => {
    const t = healthy()
    t.ledger.push({ venue: "DBT", idempotency_key: key(1, 2, 1), block_trade_id: "DBT-3" })
    const v = await verdict(t)
    expect(v.doubled).toBeGreaterThanOrEqual(1)
    expect(v.unknown).toBe(1)
  })

  it("counts a trade left pending, a traded RFQ without its filled quote and an event gap as invalid", async () => {
    const t = healthy()
    t.trades = [{ ...t.trades[0]!, status: "pending" }]
    t.quotes = t.quotes.map((q) => (q.id === "10" ? { ...q, status: "active" } : q))
    t.events = [{ rfq_id: "1", n: "2", m: "3" }]
    expect((await verdict(t)).invalid).toBeGreaterThanOrEqual(4)
  })
})

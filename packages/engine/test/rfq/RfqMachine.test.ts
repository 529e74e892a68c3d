import { describe, expect, it } from "vitest"
import { type LegMarket, type QuoteCandidate, quoteRejection } from "../../src/rfq/QuoteRules.js"
import {
  type RfqEvent,
  type RfqSnapshot,
  publicStatus,
  restoreSnapshot,
  rfqMachine,
  stateOf,
  step
} from "../../src/rfq/RfqMachine.js"
import { transition } from "xstate"
import type { Caller, QuoteRecord, RfqRecord, RfqState, TradeRecord } from "../../src/rfq/RfqRecord.js"

const taker: Caller = { deskId: 1, userId: 1, roles: ["trader"] }
const maker: Caller = { deskId: 2, userId: 2, roles: ["trader"], makerId: "maker-1" }
const stranger: Caller = { deskId: 3, userId: 3, roles: ["trader"], makerId: "maker-9" }

const rfq: RfqRecord = {
  id: 7,
  requestId: 0,
  takerDeskId: 1,
  takerUserId: 1,
  kind: "option",
  strategy: "Call Spread",
  description: "BTC 27DEC30 90000/110000 Call Spread",
  baseCurrency: "BTC",
  quoteCurrency: "BTC",
  quoteCurrencies: { DBT: "BTC" },
  amount: "50",
  anonymous: false,
  settlementOptions: ["DBT"],
  settlementAccounts: {
    DBT: [
      { credentialsId: 11, percentage: "60" },
      { credentialsId: 12, percentage: "40" }
    ]
  },
  split: true,
  makers: { DBT: ["maker-1"] },
  legs: [
    { instrumentName: "BTC-27DEC30-90000-C", direction: "buy", ratio: "1", amount: "50", contracts: {} },
    { instrumentName: "BTC-27DEC30-110000-C", direction: "sell", ratio: "1", amount: "50", contracts: {} }
  ],
  markPrice: "0.05",
  createdAt: 1_000,
  expiresAt: 301_000
}

const market: LegMarket = {
  tick: "0.0001",
  low: "0.0001",
  high: "1",
  amountStep: "0.1",
  // Low enough that the fixture's 60/40 split of 50 meets it (split rule 4 at creation).
  minBlockAmount: "10"
}

const quote = (id: number, over: Partial<QuoteRecord> = {}): QuoteRecord => ({
  id,
  rfqId: rfq.id,
  makerId: "maker-1",
  makerDeskId: 2,
  makerUserId: 2,
  direction: "sell",
  settlementOption: "DBT",
  settlementCredentials: 21,
  quoteCurrency: "BTC",
  amount: "50",
  price: "0.05",
  legs: [
    { instrumentName: "BTC-27DEC30-90000-C", instrumentId: 1, direction: "buy", price: "0.2", amount: "50" },
    {
      instrumentName: "BTC-27DEC30-110000-C",
      instrumentId: 2,
      direction: "sell",
      price: "0.15",
      amount: "50"
    }
  ],
  status: "active",
  createdAt: 2_000,
  updatedAt: 2_000,
  ...over
})

const put = (q: QuoteRecord, caller: Caller = maker, now = 2_000): RfqEvent => ({
  type: "QUOTE.PUT",
  candidate: { quote: q, caller, legMarkets: [market, market], now } satisfies QuoteCandidate
})

const trade = (statuses: ReadonlyArray<"filled" | "failed">): TradeRecord => ({
  id: 1,
  rfqId: rfq.id,
  quoteId: 100,
  makerId: "maker-1",
  makerDeskId: 2,
  settlementOption: "DBT",
  makerDirection: "sell",
  price: "0.05",
  amount: "50",
  filledAmount: "0",
  createdAt: 3_000,
  allocations: statuses.map((status, i) => ({
    id: i + 1,
    credentialsId: 11 + i,
    percentage: i === 0 ? "60" : "40",
    amount: i === 0 ? "30" : "20",
    status,
    idempotencyKey: `k${i}`,
    ...(status === "filled" ? { exchangeTradeId: `bt-${i}` } : { reason: "venue refused" }),
    updatedAt: 3_000
  }))
})

const open = (): RfqSnapshot => restoreSnapshot("open", { rfq, quotes: {} } satisfies RfqState)
const run = (events: ReadonlyArray<RfqEvent>, from = open()) => events.reduce((s, e) => step(s, e).next, from)
const accept: RfqEvent = {
  type: "ACCEPT",
  quoteId: 100,
  caller: taker,
  now: 3_000,
  trade: trade(["filled", "filled"])
}

describe("RFQ machine", () => {
  it("reaches every state of the machine", () => {
    const reached = new Set<string>()
    const paths: Array<ReadonlyArray<RfqEvent>> = [
      [],
      [put(quote(100)), accept],
      [put(quote(100)), accept, { type: "SETTLED", trade: trade(["filled", "filled"]), now: 3_100 }],
      [put(quote(100)), accept, { type: "SETTLED", trade: trade(["filled", "failed"]), now: 3_100 }],
      [{ type: "EXPIRE", now: 301_000 }],
      [{ type: "CANCEL", now: 5_000 }],
      [
        { type: "CANCEL", now: 5_000 },
        { type: "DELETE", now: 6_000 }
      ]
    ]
    for (const path of paths) reached.add(stateOf(run(path)))
    const all = Object.keys(rfqMachine.states)
    expect([...reached].sort()).toEqual([...all].sort())
  })

  it("steps exactly as xstate's transition(): same next state and context, same actions, none carried over", () => {
    const paths: Array<ReadonlyArray<RfqEvent>> = [
      [put(quote(100)), put(quote(100, { amount: "40" })), accept],
      [
        put(quote(100)),
        put(quote(101)),
        accept,
        { type: "SETTLED", trade: trade(["filled", "failed"]), now: 3_100 }
      ],
      [put(quote(100)), accept, { type: "SETTLED", trade: trade(["failed", "failed"]), now: 3_100 }],
      [put(quote(100)), put(quote(100, { amount: "60" })), { type: "EXPIRE", now: 301_000 }],
      [
        put(quote(100)),
        { type: "QUOTE.CLOSE", quoteIds: [100], status: "cancelled", now: 4_000 },
        { type: "CANCEL", now: 5_000 },
        { type: "DELETE", now: 6_000 }
      ]
    ]
    const shape = (action: { type: string; params?: unknown }) => ({
      type: action.type,
      params: action.params
    })
    for (const path of paths) {
      let s = open()
      for (const event of path) {
        const [expected, expectedActions] = transition(rfqMachine, s, event)
        const ours = step(s, event)
        expect(ours.next.value).toEqual(expected.value)
        expect(ours.next.context).toEqual(expected.context)
        expect(ours.effects.map(shape)).toEqual(expectedActions.map(shape))
        s = ours.next
      }
    }
  })

  it("judges one candidate by the state and status it is asked about, each time", () => {
    const event = put(quote(101, { label: "q1" }))
    if (event.type !== "QUOTE.PUT") throw new Error("a put")
    const candidate = event.candidate
    const empty = open().context
    const clashing = run([put(quote(100, { label: "q1" }))]).context
    expect(quoteRejection(empty, "open", candidate)).toBeUndefined()
    expect(quoteRejection(clashing, "open", candidate)?.key).toBe("duplicateClientQuoteId")
    expect(quoteRejection(empty, "open", candidate)).toBeUndefined()
    expect(quoteRejection(empty, "expired", candidate)?.key).toBe("rfqExpired")
    expect(quoteRejection(empty, "open", candidate)).toBeUndefined()
  })

  it("stores a valid quote and emits quoteStored", () => {
    const { next, effects, changed } = step(open(), put(quote(100)))
    expect(changed).toBe(true)
    expect(Object.keys(next.context.quotes)).toEqual(["100"])
    expect(effects.map((e) => e.type)).toEqual(["quoteStored"])
  })

  it.each([
    ["the taker's own desk", put(quote(100, { makerDeskId: 1 }), taker)],
    ["an uninvited maker", put(quote(100, { makerId: "maker-9", makerDeskId: 3 }), stranger)],
    [
      "a price off the tick",
      put(quote(100, { legs: [{ ...quote(100).legs[0]!, price: "0.20005" }, quote(100).legs[1]!] }))
    ],
    ["an amount above the RFQ's", put(quote(100, { amount: "60" }))],
    ["an amount below the minimum block", put(quote(100, { amount: "5" }))],
    // 20 splits 12 / 8: the 40 % account would trade 8, below the minimum of 10 (issue 12, class 4).
    ["an amount that leaves an account of the split below the minimum", put(quote(100, { amount: "20" }))],
    ["a quote after expiry", put(quote(100), maker, 301_000)],
    ["legs that do not match", put(quote(100, { legs: [quote(100).legs[1]!, quote(100).legs[0]!] }))]
  ])("refuses %s without a change", (_name, event) => {
    const before = open()
    const { next, effects, changed } = step(before, event)
    expect(changed).toBe(false)
    expect(next.context).toBe(before.context)
    expect(effects).toEqual([])
  })

  it("takes a partial amount that every account of the split can settle", () => {
    // 25 splits 15 / 10: both accounts meet the minimum.
    expect(step(open(), put(quote(100, { amount: "25" }))).changed).toBe(true)
  })

  it("refuses a second label of the same maker desk on the RFQ", () => {
    const s = run([put(quote(100, { label: "q1" }))])
    expect(step(s, put(quote(101, { label: "q1" }))).changed).toBe(false)
    expect(step(s, put(quote(100, { label: "q1", amount: "40" }))).changed).toBe(true)
  })

  it("an accept moves to settling, and only once", () => {
    const s = run([put(quote(100)), accept])
    expect(stateOf(s)).toBe("settling")
    expect(publicStatus(stateOf(s))).toBe("open")
    expect(step(s, accept).changed).toBe(false)
    expect(step(s, { type: "CANCEL", now: 3_001 }).changed).toBe(false)
    expect(step(s, { type: "EXPIRE", now: 400_000 }).changed).toBe(false)
  })

  it("every allocation failing refuses the trade and keeps the quote active", () => {
    const s = run([
      put(quote(100)),
      accept,
      { type: "SETTLED", trade: trade(["failed", "failed"]), now: 3_100 }
    ])
    expect(stateOf(s)).toBe("open")
    expect(s.context.trade).toBeUndefined()
    expect(Object.keys(s.context.quotes)).toEqual(["100"])
  })

  it("a fill closes the accepted quote as filled and every other quote as cancelled", () => {
    const s = run([put(quote(100)), put(quote(101, { price: "0.06" })), accept])
    const { effects } = step(s, { type: "SETTLED", trade: trade(["filled", "filled"]), now: 3_100 })
    const closed = effects.find((e) => e.type === "quotesClosed")!.params as unknown as {
      closed: Array<{ quote: QuoteRecord; status: string }>
    }
    expect(closed.closed.map((c) => [c.quote.id, c.status])).toEqual([
      [100, "filled"],
      [101, "cancelled"]
    ])
  })

  it("expires only when due, and expiry cancels nothing twice", () => {
    expect(step(open(), { type: "EXPIRE", now: 300_999 }).changed).toBe(false)
    const s = run([put(quote(100)), { type: "EXPIRE", now: 301_000 }])
    expect(stateOf(s)).toBe("expired")
    expect(s.context.quotes).toEqual({})
    expect(step(s, { type: "CANCEL", now: 302_000 }).changed).toBe(false)
  })

  it("deletes only a cancelled RFQ", () => {
    expect(step(open(), { type: "DELETE", now: 1 }).changed).toBe(false)
    expect(step(run([{ type: "EXPIRE", now: 301_000 }]), { type: "DELETE", now: 1 }).changed).toBe(false)
    expect(
      stateOf(
        run([
          { type: "CANCEL", now: 1 },
          { type: "DELETE", now: 2 }
        ])
      )
    ).toBe("deleted")
  })

  it("a snapshot's context round-trips through JSON and restores to the same behaviour", () => {
    const s = run([put(quote(100, { label: "x" })), accept])
    const restored = restoreSnapshot(stateOf(s), JSON.parse(JSON.stringify(s.context)) as RfqState)
    expect(restored.context).toEqual(s.context)
    const settled = { type: "SETTLED", trade: trade(["filled", "failed"]), now: 3_100 } as const
    expect(stateOf(step(restored, settled).next)).toBe(stateOf(step(s, settled).next))
  })
})

import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { acceptRejection, type LegMarket, quoteRejection } from "../../src/rfq/QuoteRules.js"
import { restoreSnapshot, type RfqSnapshot, step } from "../../src/rfq/RfqMachine.js"
import type { Caller, QuoteRecord, RfqRecord, TradeRecord } from "../../src/rfq/RfqRecord.js"
import { printsOnTape, renderPublicTrade } from "../../src/rfq/TradeTapeView.js"

/**
 * The pure side of issue 16: the machine's `QUOTE.EXPIRE` against a model under random quotes and
 * clocks (exactly once, exactly the due ones), the accept rule in the gap before the timer fires,
 * the `validUntil` bounds, and what the tape shows of a trade.
 */

const taker: Caller = { deskId: 1, userId: 1, roles: ["trader"] }
const maker: Caller = { deskId: 2, userId: 2, roles: ["trader"], makerId: "maker-1" }

const rfq: RfqRecord = {
  id: 7,
  requestId: 0,
  takerDeskId: 1,
  takerUserId: 1,
  label: "taker-label",
  kind: "option",
  strategy: "Call Spread",
  description: "BTC 27DEC30 90000/110000 Call Spread",
  baseCurrency: "BTC",
  quoteCurrency: "BTC",
  quoteCurrencies: { DBT: "BTC" },
  amount: "50",
  anonymous: false,
  settlementOptions: ["DBT"],
  settlementAccounts: { DBT: [{ credentialsId: 11, percentage: "100" }] },
  split: false,
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
  minBlockAmount: "10"
}

const quote = (id: number, over: Partial<QuoteRecord> = {}): QuoteRecord => ({
  id,
  rfqId: rfq.id,
  makerId: "maker-1",
  makerDeskId: 2,
  makerUserId: 2,
  label: `label-${id}`,
  direction: "sell",
  settlementOption: "DBT",
  settlementCredentials: 21,
  quoteCurrency: "BTC",
  amount: "50",
  price: "0.05",
  legs: [
    { instrumentName: "BTC-27DEC30-90000-C", instrumentId: 1, direction: "sell", price: "0.2", amount: "50" },
    { instrumentName: "BTC-27DEC30-110000-C", instrumentId: 2, direction: "buy", price: "0.15", amount: "50" }
  ],
  status: "active",
  createdAt: 2_000,
  updatedAt: 2_000,
  ...over
})

const withQuotes = (quotes: ReadonlyArray<QuoteRecord>): RfqSnapshot =>
  restoreSnapshot("open", { rfq, quotes: Object.fromEntries(quotes.map((q) => [q.id, q])) })

describe("quote expiry in the machine", () => {
  it("expires exactly the due quotes, each exactly once, under random validUntils and clocks", () => {
    fc.assert(
      fc.property(
        fc.array(fc.option(fc.integer({ min: 2_001, max: 300_000 }), { nil: undefined }), {
          minLength: 1,
          maxLength: 8
        }),
        fc.array(fc.integer({ min: 2_000, max: 301_000 }), { minLength: 1, maxLength: 10 }),
        (validUntils, clocks) => {
          let snapshot = withQuotes(validUntils.map((v, i) => quote(i + 1, { validUntil: v })))
          const expiredCount = new Map<number, number>()
          let now = 2_000
          for (const tick of clocks) {
            now = Math.max(now, tick)
            const { next, effects, changed } = step(snapshot, { type: "QUOTE.EXPIRE", now })
            const closed = effects
              .filter((e) => e.type === "quotesClosed")
              .flatMap(
                (e) =>
                  (e.params as unknown as { closed: Array<{ quote: QuoteRecord; status: string }> }).closed
              )
            for (const c of closed) {
              expect(c.status).toBe("expired")
              expiredCount.set(c.quote.id, (expiredCount.get(c.quote.id) ?? 0) + 1)
            }
            expect(changed).toBe(closed.length > 0)
            snapshot = next
            // Model: a quote stands exactly while it has no validUntil or its validUntil is ahead.
            const standing = validUntils.flatMap((v, i) => (v === undefined || v > now ? [i + 1] : []))
            expect(Object.keys(snapshot.context.quotes).map(Number).sort()).toEqual(standing.sort())
            expect(snapshot.value).toBe("open")
          }
          for (const count of expiredCount.values()) expect(count).toBe(1)
        }
      )
    )
  })

  it("an accept in the gap between validUntil and the timer is refused with `quote has expired`", () => {
    const state = withQuotes([quote(100, { validUntil: 5_000 })]).context
    expect(acceptRejection(state, "open", 100, taker, 4_999)).toBeUndefined()
    expect(acceptRejection(state, "open", 100, taker, 5_000)?.message).toBe("quote has expired")
    const acceptAt = (now: number) =>
      step(withQuotes([quote(100, { validUntil: 5_000 })]), {
        type: "ACCEPT",
        quoteId: 100,
        caller: taker,
        now,
        trade: tradeOf("filledPartial")
      }).changed
    expect(acceptAt(4_999)).toBe(true)
    expect(acceptAt(5_000)).toBe(false)
  })

  it("bounds validUntil: after now, at most the RFQ's expiresAt", () => {
    const reasonAt = (validUntil: number, now = 3_000) =>
      quoteRejection({ rfq, quotes: {} }, "open", {
        quote: quote(1, { validUntil }),
        caller: maker,
        legMarkets: [market, market],
        now
      })?.reason?.[0]
    expect(reasonAt(3_000)).toBe("validUntil: 3000 must be after now (3000)")
    expect(reasonAt(301_001)).toBe("validUntil: 301001 must be at most the RFQ's expiresAt (301000)")
    expect(reasonAt(3_001)).toBeUndefined()
    expect(reasonAt(301_000)).toBeUndefined()
  })
})

const tradeOf = (outcome: "filled" | "filledPartial" | "failed"): TradeRecord => ({
  id: 900,
  rfqId: rfq.id,
  quoteId: 100,
  makerId: "maker-1",
  makerDeskId: 2,
  settlementOption: "DBT",
  makerDirection: "sell",
  price: "0.05",
  amount: "50",
  filledAmount: outcome === "filled" ? "50" : outcome === "filledPartial" ? "25" : "0",
  createdAt: 3_000,
  allocations: []
})

describe("the public tape's element", () => {
  const q = quote(100, { hedge: undefined })

  it("shows the taker's side of each leg, the filled amount, and nothing of the parties", () => {
    const shown = renderPublicTrade(rfq, tradeOf("filledPartial"), q)
    expect(shown).toEqual({
      tradeId: 900,
      createdAt: 3_000,
      baseCurrency: "BTC",
      kind: "option",
      strategy: "Call Spread",
      description: "BTC 27DEC30 90000/110000 Call Spread",
      // The maker sold the structure: the taker bought it, trading each leg as listed.
      legs: [
        { instrumentName: "BTC-27DEC30-90000-C", direction: "buy", ratio: 1, price: 0.2 },
        { instrumentName: "BTC-27DEC30-110000-C", direction: "sell", ratio: 1, price: 0.15 }
      ],
      price: 0.05,
      amount: 25,
      settlementOption: "DBT"
    })
    const text = JSON.stringify(shown)
    for (const secret of ["maker-1", "taker-label", "label-100", '"rfqId"', '"makers"', "credentials"]) {
      expect(text).not.toContain(secret)
    }
  })

  it("a taker that sold trades each leg opposite to the listing; an anonymous RFQ shows no side", () => {
    const sold = renderPublicTrade(rfq, { ...tradeOf("filled"), makerDirection: "buy" }, q) as any
    expect(sold.legs.map((l: any) => l.direction)).toEqual(["sell", "buy"])
    const anonymous = renderPublicTrade({ ...rfq, anonymous: true }, tradeOf("filled"), q) as any
    expect(anonymous.legs.every((l: any) => !("direction" in l))).toBe(true)
  })

  it("prints only what settled: a wholly failed trade prints nothing", () => {
    expect(printsOnTape(tradeOf("filled"))).toBe(true)
    expect(printsOnTape(tradeOf("filledPartial"))).toBe(true)
    expect(printsOnTape(tradeOf("failed"))).toBe(false)
  })
})

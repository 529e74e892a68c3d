import { expect } from "vitest"
import { createRfq, getRfq, quoteBody, rfqBody, sleep, split, trade } from "../Fixtures.js"
import { expectRpcError } from "../RpcExpect.js"
import { openRpcSession, withRpcSession } from "../RpcSession.js"
import { group, scenario } from "../Scenario.js"
import { expectError, expectOk } from "../Shapes.js"
import { makerIds, type World } from "../World.js"

/**
 * Issue 16, items 2 and 3, black-box: a quote's `validUntil` (hostile values refused, the quote
 * expiring at its instant for sessions opened before, accept refused after) and the public
 * block-trade tape (REST and JSON-RPC, any role, the `trades` channel, nothing of the parties,
 * paging and its hostile inputs). Waits poll without asserting on time. Over 300 lines on
 * purpose: the two items' black-box rules, read as one list.
 */

interface TapeElement {
  tradeId: number
  createdAt: number
  baseCurrency: string
  legs: Array<{ instrumentName: string; direction?: string; ratio: number; price: number }>
  amount: number
  price: number
  [field: string]: unknown
}
interface TapePage {
  totalResults: number
  cursor: number
  results: Array<TapeElement>
}

const tape = async (
  w: World,
  query: Record<string, string | number>,
  party: "viewer" | "maker3" = "viewer"
) =>
  expectOk<TapePage>(
    await w.api.get("/v1/trades/public", { token: w.token(party), query }),
    "PublicTradePage"
  )

/** The host's clock now, from an RFQ it just created (a deployment's clock may differ from ours). */
const hostClock = async (w: World, rfqId: number) => {
  const createdAt = (await getRfq(w, "taker", rfqId)).createdAt
  const localAt = Date.now()
  return () => createdAt + (Date.now() - localAt)
}

const makerQuote = async (w: World, rfqId: number, quoteId: number) => {
  const page = expectOk<{ results: Array<{ rfqQuoteId: number; status: string; validUntil?: number }> }>(
    await w.api.get("/v1/rfq/quotes", { token: w.token("maker1"), query: { rfqId } }),
    "QuotePage"
  )
  return page.results.find((q) => q.rfqQuoteId === quoteId)!
}

/** Waits until `done` holds, polling; fails readably when it never does. */
const until = async (what: string, done: () => Promise<boolean> | boolean) => {
  for (let attempt = 0; attempt < 150; attempt++) {
    if (await done()) return
    await sleep(100)
  }
  throw new Error(`never: ${what}`)
}

export const expiryAndTape = group("quote expiry and the public tape", [
  scenario(
    "validUntil: a string, a fraction, null, 0, negative, huge, past or beyond expiresAt is refused",
    async (w) => {
      const rfqId = await createRfq(w, "taker", rfqBody(w, "taker"))
      const rfq = await getRfq(w, "taker", rfqId)
      const body = await quoteBody(w, "maker1", rfqId, { direction: "sell", amount: 100 })
      const refused = async (validUntil: unknown, reason: string) => {
        expectError(
          await w.api.post("/v1/rfq/quote", { token: w.token("maker1"), json: { ...body, validUntil } }),
          { status: 400, message: "invalid request", reasonIncludes: [reason] }
        )
      }
      await refused(String(rfq.expiresAt - 1000), "validUntil")
      await refused(rfq.createdAt + 60_000.5, "validUntil: must be a positive integer")
      await refused(null, "validUntil")
      await refused(0, "validUntil: must be a positive integer")
      await refused(-1, "validUntil: must be a positive integer")
      await refused(2 ** 53, "validUntil: must be a positive integer")
      await refused(1e300, "validUntil")
      await refused(rfq.createdAt - 1, "must be after now")
      await refused(rfq.expiresAt + 1, `must be at most the RFQ's expiresAt (${rfq.expiresAt})`)
      // The same over JSON-RPC, and on an update.
      await withRpcSession(w, "maker1", async (maker) => {
        expectRpcError(await maker.call("v1/quote/create", { ...body, validUntil: rfq.expiresAt + 1 }), {
          code: -32602,
          message: "invalid request",
          status: 400,
          reasonIncludes: ["expiresAt"]
        })
        expectRpcError(await maker.call("v1/quote/create", { ...body, validUntil: "soon" }), {
          code: -32602,
          message: "invalid request",
          status: 400,
          reasonIncludes: ["validUntil"]
        })
        const { rfqQuoteId } = await maker.result<{ rfqQuoteId: number }>("v1/quote/create", {
          ...body,
          validUntil: rfq.expiresAt
        })
        const { rfqId: _, direction: __, ...update } = body
        expectRpcError(
          await maker.call("v1/quote/update", { ...update, rfqQuoteId, validUntil: rfq.createdAt - 1 }),
          { code: -32602, message: "invalid request", status: 400, reasonIncludes: ["must be after now"] }
        )
        // Absent on an update: kept.
        const kept = await maker.result<{ validUntil?: number }>("v1/quote/update", { ...update, rfqQuoteId })
        expect(kept.validUntil).toBe(rfq.expiresAt)
      })
    }
  ),

  scenario(
    "a quote expires at its validUntil: sessions opened before hear `updated`/expired, the book drops it, accept is `quote has expired`",
    async (w) => {
      const rfqId = await createRfq(w, "taker", rfqBody(w, "taker"))
      const now = await hostClock(w, rfqId)
      const label = `vu-${w.tag}`
      const maker = await openRpcSession(w, "maker1")
      const taker = await openRpcSession(w, "taker")
      try {
        await maker.result("v1/subscribe", { channels: ["rfq_quote.maker"] })
        await taker.result("v1/subscribe", { channels: ["rfq_quote.taker.BTC"] })
        const body = await quoteBody(w, "maker1", rfqId, { direction: "sell", amount: 100, label })
        const validUntil = now() + 4_000
        const quoteId = expectOk<{ rfqQuoteId: number }>(
          await w.api.post("/v1/rfq/quote", { token: w.token("maker1"), json: { ...body, validUntil } }),
          "CreateQuoteResponse"
        ).rfqQuoteId
        // Every quote element shows it while it stands.
        expect((await makerQuote(w, rfqId, quoteId)).validUntil).toBe(validUntil)
        const book = expectOk<Array<{ asks: Array<{ rfqQuoteId: number; validUntil?: number }> }>>(
          await w.api.get(`/v1/rfq/${rfqId}/quote`, { token: w.token("taker") }),
          "TakerQuotesResponse"
        )
        expect(book[0]!.asks[0]).toMatchObject({ rfqQuoteId: quoteId, validUntil })

        await sleep(Math.max(0, validUntil - now()))
        await until("the maker's list shows the quote expired", async () => {
          return (await makerQuote(w, rfqId, quoteId)).status === "expired"
        })
        const heard = (session: typeof maker) =>
          session.connection.notifications
            .map((n) => (n as { params: { channel: string; data: Record<string, unknown> } }).params)
            .filter((p) => p.data.rfqQuoteId === quoteId)
        await until("both sessions heard the expiry", () =>
          [maker, taker].every((s) => heard(s).some((p) => p.data.status === "expired"))
        )
        for (const session of [maker, taker]) {
          const last = heard(session).at(-1)!
          expect(last.data).toMatchObject({ event: "updated", status: "expired", validUntil })
        }
        expect(await getRfq(w, "taker", rfqId)).toMatchObject({ status: "open", quotes: [] })
        expect(
          expectOk(
            await w.api.get(`/v1/rfq/${rfqId}/quote`, { token: w.token("taker") }),
            "TakerQuotesResponse"
          )
        ).toEqual([])
        const expired = { status: 400, message: "quote has expired" } as const
        expectError(
          await w.api.post("/v1/rfq/trade", { token: w.token("taker"), json: { rfqQuoteId: quoteId } }),
          expired
        )
        expectRpcError(await taker.call("v1/rfq/trade", { rfqQuoteId: quoteId }), {
          code: -32602,
          message: "quote has expired",
          status: 400
        })
        // Someone else learns nothing of the quote.
        expectError(
          await w.api.post("/v1/rfq/trade", { token: w.token("maker2"), json: { rfqQuoteId: quoteId } }),
          { status: 404, message: "record not found" }
        )
        // The label is free again.
        expectOk(
          await w.api.post("/v1/rfq/quote", { token: w.token("maker1"), json: body }),
          "CreateQuoteResponse"
        )
      } finally {
        maker.close()
        taker.close()
      }
    }
  ),

  scenario(
    "the tape: one print per traded RFQ (filled amount, no side when anonymous), over REST and JSON-RPC, live on `trades`, nothing of the parties",
    async (w) => {
      const listener = await openRpcSession(w, "viewer")
      try {
        await listener.result("v1/subscribe", { channels: ["trades", "trades.ETH"] })
        const from = await createRfq(w, "taker", rfqBody(w, "taker"))
        const startTime = (await getRfq(w, "taker", from)).createdAt - 1
        const label = `tape-${w.tag}`
        const openRfq = await createRfq(w, "taker", rfqBody(w, "taker", { label }))
        const openQuote = expectOk<{ rfqQuoteId: number }>(
          await w.api.post("/v1/rfq/quote", {
            token: w.token("maker1"),
            json: { ...(await quoteBody(w, "maker1", openRfq, { direction: "sell", amount: 100 })), label }
          }),
          "CreateQuoteResponse"
        ).rfqQuoteId
        const filled = await trade(w, "taker", openQuote)
        const anonymousRfq = await createRfq(
          w,
          "taker",
          rfqBody(w, "taker", {
            anonymous: true,
            settlementCredentials: undefined,
            settlementAccounts: split(w, [
              ["dbt-main", 50],
              ["dbt-flaky", 50]
            ])
          })
        )
        const bid = expectOk<{ rfqQuoteId: number }>(
          await w.api.post("/v1/rfq/quote", {
            token: w.token("maker2"),
            json: await quoteBody(w, "maker2", anonymousRfq, { direction: "buy", amount: 100 })
          }),
          "CreateQuoteResponse"
        ).rfqQuoteId
        const partial = await trade(w, "taker", bid)

        const ours = (page: TapePage) =>
          page.results.filter((r) => r.tradeId === filled.rfqTradeId || r.tradeId === partial.rfqTradeId)
        const page = await tape(w, { startTime, baseCurrency: "BTC", limit: 1000 })
        const [partialPrint, filledPrint] = ours(page)
        expect(filledPrint).toMatchObject({ tradeId: filled.rfqTradeId, amount: 100, baseCurrency: "BTC" })
        expect(filledPrint!.legs.map((l) => l.direction)).toEqual(["buy", "sell"])
        expect(partialPrint).toMatchObject({ tradeId: partial.rfqTradeId, amount: 50 })
        expect(partialPrint!.legs.every((l) => !("direction" in l))).toBe(true)

        // Hostile: nothing of the parties in the answer.
        const text = JSON.stringify([filledPrint, partialPrint])
        for (const secret of [label, ...Object.values(makerIds), "dbt-main", "dbt-flaky"]) {
          expect(text).not.toContain(secret)
        }
        for (const key of Object.keys(filledPrint!).concat(Object.keys(filledPrint!.legs[0]!))) {
          expect(key).not.toMatch(/desk|maker|account|label|rfq|credential|user|quote/i)
        }
        for (const id of [openRfq, anonymousRfq, openQuote, bid]) {
          expect(text).not.toMatch(new RegExp(`"(?!tradeId)[a-zA-Z]+":${id}[,}]`))
        }

        // The same over JSON-RPC, for a maker that took no part; the ETH page holds none of ours.
        await withRpcSession(w, "maker3", async (outsider) => {
          const viaRpc = await outsider.result<TapePage>("v1/trades/public", { startTime, limit: 1000 })
          expect(ours(viaRpc)).toEqual([partialPrint, filledPrint])
          const eth = await outsider.result<TapePage>("v1/trades/public", { startTime, baseCurrency: "ETH" })
          expect(ours(eth)).toEqual([])
        })

        // The session opened before heard each print once, on `trades` only (never on trades.ETH).
        const prints = () =>
          listener.connection.notifications
            .map((n) => (n as { params: { channel: string; data: TapeElement } }).params)
            .filter((p) => p.data.tradeId === filled.rfqTradeId || p.data.tradeId === partial.rfqTradeId)
        await until("the listener heard both prints", () => prints().length >= 2)
        expect(prints().map((p) => p.channel)).toEqual(["trades", "trades"])
        expect(prints().map((p) => p.data)).toEqual([
          { event: "created", ...filledPrint },
          { event: "created", ...partialPrint }
        ])
      } finally {
        listener.close()
      }
    }
  ),

  scenario(
    "the tape's paging: keyset cursor, limit bounds, garbage cursors, an inverted range",
    async (w) => {
      const first = await tape(w, { limit: 1 })
      expect(first.results.length).toBeLessThanOrEqual(1)
      if (first.cursor !== 0) {
        const next = await tape(w, { limit: 1, cursor: first.cursor })
        expect(next.results[0]!.tradeId).not.toBe(first.results[0]!.tradeId)
        expect(next.totalResults).toBe(first.totalResults)
      }
      const bad = async (query: Record<string, string | number>, reason: string) =>
        expectError(await w.api.get("/v1/trades/public", { token: w.token("viewer"), query }), {
          status: 400,
          message: "invalid request",
          reasonIncludes: [reason]
        })
      await bad({ limit: 0 }, "limit")
      await bad({ limit: 1001 }, "limit")
      await bad({ limit: "ten" }, "limit")
      await bad({ cursor: "abc" }, "cursor")
      await bad({ cursor: -5 }, "cursor")
      await bad({ cursor: 987_654_321_000 }, "is not a cursor of this list")
      await bad({ startTime: 2_000, endTime: 1_000 }, "endTime: must be after startTime (2000)")
      await bad({ startTime: 1_000, endTime: 1_000 }, "endTime")
      await bad({ baseCurrency: "DOGE" }, "baseCurrency")
      expectError(await w.api.get("/v1/trades/public", { query: {} }), {
        status: 401,
        message: "missing bearer token"
      })
      await withRpcSession(w, "viewer", async (viewer) => {
        expectRpcError(await viewer.call("v1/trades/public", { limit: 0 }), {
          code: -32602,
          message: "invalid request",
          status: 400,
          reasonIncludes: ["limit"]
        })
        expectRpcError(await viewer.call("v1/subscribe", { channels: ["trades.DOGE"] }), {
          code: -32602,
          message: "invalid request",
          status: 400
        })
      })
    }
  )
])

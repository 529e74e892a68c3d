import { expect } from "vitest"
import type { Query } from "../ApiClient.js"
import { createRfq, getRfq, placeQuote, rfqBody, split, trade } from "../Fixtures.js"
import { group, scenario } from "../Scenario.js"
import { expectError, expectOk } from "../Shapes.js"
import type { Party, World } from "../World.js"

/**
 * `GET /rfq` and `GET /rfq/quotes`: cursor paging, filters, parameter errors. Each scenario reads
 * only the window of time it created its own records in, so earlier data on the same deployment
 * does not matter.
 */

interface Page<T> {
  totalResults: number
  cursor: number
  results: Array<T>
}
type Item = { rfqId: number; status: string; createdAt: number; role: string }

const rfqPage = async (w: World, party: Party, query: Query) =>
  expectOk<Page<Item>>(await w.api.get("/v1/rfq", { token: w.token(party), query }), "RfqPage")

/** Every page of a query, following the cursor until it is 0. */
const allPages = async <T>(fetchPage: (cursor: number | undefined) => Promise<Page<T>>) => {
  const pages: Array<Page<T>> = []
  let cursor: number | undefined
  for (let guard = 0; guard < 100; guard++) {
    const page = await fetchPage(cursor)
    pages.push(page)
    if (page.cursor === 0) return pages
    cursor = page.cursor
  }
  throw new Error("the cursor never reached 0")
}

const ids = (items: ReadonlyArray<{ rfqId: number }>) => items.map((i) => i.rfqId)

export const lists = group("lists", [
  scenario(
    "cursor paging walks every RFQ exactly once, newest first, with totalResults on each page",
    async (w) => {
      // maker-3 acts as a taker here and nowhere else, so its RFQs in this window are exactly these.
      const created: Array<number> = []
      for (let i = 0; i < 7; i++) {
        created.push(await createRfq(w, "maker3", rfqBody(w, "maker3", { makers: { DBT: ["maker-1"] } })))
      }
      const since = (await getRfq(w, "maker3", created[0]!)).createdAt - 1
      const query = { role: "taker", startTime: since, limit: 3 }
      const pages = await allPages((cursor) => rfqPage(w, "maker3", { ...query, cursor }))
      expect(pages.map((p) => p.results.length)).toEqual([3, 3, 1])
      for (const page of pages) expect(page.totalResults).toBe(7)
      const walked = pages.flatMap((p) => ids(p.results))
      expect(walked).toEqual([...created].reverse())
      const unpaged = await rfqPage(w, "maker3", { role: "taker", startTime: since, limit: 1000 })
      expect(ids(unpaged.results)).toEqual(walked)
      expect(unpaged.cursor).toBe(0)

      // The maker's quote list pages the same way.
      const quoteIds: Array<number> = []
      for (const rfqId of created.slice(0, 5)) {
        quoteIds.push(await placeQuote(w, "maker1", rfqId, { direction: "sell", amount: 100 }))
      }
      const quoteSince = (await getRfq(w, "maker3", created[0]!)).createdAt - 1
      const quotePages = await allPages(async (cursor) =>
        expectOk<Page<{ rfqQuoteId: number }>>(
          await w.api.get("/v1/rfq/quotes", {
            token: w.token("maker1"),
            query: { startTime: quoteSince, limit: 2, cursor }
          }),
          "QuotePage"
        )
      )
      expect(quotePages.map((p) => p.results.length)).toEqual([2, 2, 1])
      expect(quotePages.flatMap((p) => p.results.map((q) => q.rfqQuoteId))).toEqual([...quoteIds].reverse())
      for (const page of quotePages) expect(page.totalResults).toBe(5)
      // The quote list filtered by RFQ.
      const one = expectOk<Page<{ rfqQuoteId: number; rfqId: number }>>(
        await w.api.get("/v1/rfq/quotes", { token: w.token("maker1"), query: { rfqId: created[2]! } }),
        "QuotePage"
      )
      expect(one.results.map((q) => q.rfqQuoteId)).toEqual([quoteIds[2]])
    }
  ),

  scenario("a last page that is exactly full answers cursor 0 (RFQs and quotes)", async (w) => {
    const created: Array<number> = []
    for (let i = 0; i < 4; i++) {
      created.push(await createRfq(w, "maker3", rfqBody(w, "maker3", { makers: { DBT: ["maker-1"] } })))
    }
    const since = (await getRfq(w, "maker3", created[0]!)).createdAt - 1
    for (const limit of [1, 2, 4]) {
      const pages = await allPages((cursor) =>
        rfqPage(w, "maker3", { role: "taker", startTime: since, limit, cursor })
      )
      // No trailing empty page: every page holds `limit` RFQs and the last one says 0.
      expect(pages.map((p) => p.results.length)).toEqual(Array(4 / limit).fill(limit))
      expect(pages.flatMap((p) => ids(p.results))).toEqual([...created].reverse())
    }
    const quoteIds: Array<number> = []
    for (const rfqId of created) {
      quoteIds.push(await placeQuote(w, "maker1", rfqId, { direction: "sell", amount: 100 }))
    }
    const quoteSince = (await getRfq(w, "maker3", created[0]!)).createdAt - 1
    for (const limit of [1, 2, 4]) {
      const pages = await allPages(async (cursor) =>
        expectOk<Page<{ rfqQuoteId: number }>>(
          await w.api.get("/v1/rfq/quotes", {
            token: w.token("maker1"),
            query: { startTime: quoteSince, limit, cursor }
          }),
          "QuotePage"
        )
      )
      const mine = pages
        .flatMap((p) => p.results.map((q) => q.rfqQuoteId))
        .filter((id) => quoteIds.includes(id))
      expect(mine).toEqual([...quoteIds].reverse())
      expect(pages.at(-1)!.results.length).toBeGreaterThan(0)
    }
  }),

  scenario(
    "a cursor the caller could not have received is answered like one that names nothing",
    async (w) => {
      const invisible = await createRfq(w, "taker", rfqBody(w, "taker", { makers: { DBT: ["maker-1"] } }))
      const quoteId = await placeQuote(w, "maker1", invisible, { direction: "sell", amount: 100 })
      const missing = 2_000_000_000
      const answer = async (path: string, party: Party, cursor: number) => {
        const got = await w.api.get(path, { token: w.token(party), query: { cursor } })
        return `${got.status} ${JSON.stringify(got.body).replaceAll(String(cursor), "N")}`
      }
      const nothing = await answer("/v1/rfq", "maker2", missing)
      expect(nothing).toContain("is not a cursor of this list")
      expect(await answer("/v1/rfq", "maker2", invisible)).toBe(nothing)
      expect(await answer("/v1/rfq", "maker1", invisible)).toMatch(/^200 /)
      const noQuote = await answer("/v1/rfq/quotes", "maker2", missing)
      expect(noQuote).toContain("is not a cursor of this list")
      expect(await answer("/v1/rfq/quotes", "maker2", quoteId)).toBe(noQuote)
      expect(await answer("/v1/rfq/quotes", "maker1", quoteId)).toMatch(/^200 /)
    }
  ),

  scenario(
    "status filters: open, traded, filled, filledPartial, cancelled and comma-separated lists",
    async (w) => {
      const open = await createRfq(w, "taker", rfqBody(w, "taker"))
      const since = (await getRfq(w, "taker", open)).createdAt - 1
      const cancelled = await createRfq(w, "taker", rfqBody(w, "taker"))
      expectOk(
        await w.api.post("/v1/rfq/cancel", { token: w.token("taker"), json: { rfqId: cancelled } }),
        "CancelRfqResponse"
      )
      const filled = await createRfq(w, "taker", rfqBody(w, "taker"))
      await trade(w, "taker", await placeQuote(w, "maker1", filled, { direction: "sell", amount: 100 }))
      const partial = await createRfq(
        w,
        "taker",
        rfqBody(w, "taker", {
          settlementAccounts: split(w, [
            ["dbt-flaky", 50],
            ["dbt-alt", 50]
          ])
        })
      )
      await trade(w, "taker", await placeQuote(w, "maker1", partial, { direction: "sell", amount: 100 }))

      const byStatus = async (status: string | undefined, party: Party = "taker") => {
        const page = await rfqPage(w, party, {
          startTime: since,
          limit: 1000,
          ...(status === undefined ? {} : { status })
        })
        expect(page.totalResults).toBe(page.results.length)
        return ids(page.results).sort((a, b) => a - b)
      }
      const sorted = (...list: Array<number>) => list.sort((a, b) => a - b)
      expect(await byStatus(undefined)).toEqual(sorted(open, cancelled, filled, partial))
      expect(await byStatus("open")).toEqual([open])
      expect(await byStatus("cancelled")).toEqual([cancelled])
      expect(await byStatus("filled")).toEqual([filled])
      expect(await byStatus("filledPartial")).toEqual([partial])
      expect(await byStatus("traded")).toEqual(sorted(filled, partial))
      expect(await byStatus("expired")).toEqual([])
      expect(await byStatus("open,cancelled")).toEqual(sorted(open, cancelled))
      expect(await byStatus("open,traded")).toEqual(sorted(open, filled, partial))
      expect(await byStatus("traded,filled")).toEqual(sorted(filled, partial))
      // The viewer shares the taker's desk; the statuses are the same.
      expect(await byStatus("traded", "viewer")).toEqual(sorted(filled, partial))
      // Each listed status is the one the filter asked for.
      for (const item of (await rfqPage(w, "taker", { startTime: since, status: "filledPartial" })).results) {
        expect(item.status).toBe("filledPartial")
      }
    }
  ),

  scenario("role, baseCurrency and time filters", async (w) => {
    const first = await createRfq(w, "taker", rfqBody(w, "taker"))
    const createdAt = (await getRfq(w, "taker", first)).createdAt
    const second = await createRfq(w, "taker", rfqBody(w, "taker"))
    const window = { startTime: createdAt - 1 }
    expect(ids((await rfqPage(w, "taker", { ...window, role: "taker" })).results)).toEqual([second, first])
    expect((await rfqPage(w, "taker", { ...window, role: "maker" })).results).toEqual([])
    expect(ids((await rfqPage(w, "maker1", { ...window, role: "maker" })).results)).toEqual(
      expect.arrayContaining([first, second])
    )
    expect(
      (await rfqPage(w, "maker1", { ...window, role: "taker" })).results.map((r) => r.rfqId)
    ).not.toContain(first)
    expect(ids((await rfqPage(w, "taker", { ...window, baseCurrency: "BTC" })).results)).toEqual([
      second,
      first
    ])
    expect((await rfqPage(w, "taker", { ...window, baseCurrency: "ETH" })).results).toEqual([])
    const before = await rfqPage(w, "taker", { startTime: createdAt - 1, endTime: createdAt + 1 })
    expect(ids(before.results)).toContain(first)
    expect((await rfqPage(w, "taker", { startTime: Date.now() + 3_600_000 })).results).toEqual([])
  }),

  scenario("list parameters out of range are 400 with the standard body", async (w) => {
    const bad = async (query: Query, message = "invalid request") =>
      expectError(await w.api.get("/v1/rfq", { token: w.token("taker"), query }), { status: 400, message })
    await bad({ limit: 0 })
    await bad({ limit: 1001 })
    await bad({ limit: "ten" })
    await bad({ status: "pending" })
    await bad({ status: "open,,filled" }, "empty value")
    await bad({ role: "admin" })
    await bad({ cursor: "abc" })
    await bad({ startTime: "yesterday" })
    await bad({ status: "" }, "empty value")
    await bad({ limit: "" }, "empty value")
    expectOk(await w.api.get("/v1/rfq", { token: w.token("taker"), query: { limit: 1000 } }), "RfqPage")
    expectOk(await w.api.get("/v1/rfq", { token: w.token("taker"), query: { limit: 1 } }), "RfqPage")
    expectError(await w.api.get("/v1/rfq/quotes", { token: w.token("maker1"), query: { limit: 1001 } }), {
      status: 400,
      message: "invalid request"
    })
  })
])

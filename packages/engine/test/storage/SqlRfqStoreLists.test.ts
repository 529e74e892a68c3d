import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { QuoteRecord, RfqRecord } from "../../src/rfq/RfqRecord.js"
import { type QuoteListFilter, type RfqListFilter, RfqStore } from "../../src/rfq/RfqStore.js"
import { SqlRfqStoreLive } from "../../src/storage/SqlRfqStore.js"
import { quoteRecord, Reference, type ReferenceData, referenceLayer, rfqRecord } from "../support/records.js"
import { put, send, start } from "../support/rfqDriver.js"
import { testDatabases } from "../support/TestDatabases.js"

/**
 * Lists and keyset paging against a plain model: a few dozen RFQs and quotes over several desks,
 * makers, statuses, currencies and (colliding, out-of-id-order) creation times; every filter is
 * paged through with a small page size and must yield exactly the model's matches, newest first.
 */

const pageSize = 7
const rfqCount = 25
const base = 1_800_000_000_000
const statuses = ["open", "trading", "filled", "filledPartial", "cancelled", "expired"] as const

interface ListedRfq {
  readonly rfq: RfqRecord
  readonly status: (typeof statuses)[number]
  readonly deleted: boolean
}

/** Creation times collide and run against id order, so the id tie-break and ordering both matter. */
const createdAtOf = (i: number) => base + ((i * 7) % 13) * 1_000

const buildRfqs = (ref: ReferenceData, firstId: number): ReadonlyArray<ListedRfq> =>
  Array.from({ length: rfqCount }, (_, i) => {
    const [a, b] = ref.takers
    const [m1, m2, m3] = ref.makers
    const taker = i === 24 ? { deskId: m1.deskId, userId: m1.userId } : i % 3 === 0 ? b : a
    // RFQ 5 invites maker-2 on BULL, which is not one of its settlement options: maker-2 must not see it.
    const dbtOnly = i === 5
    const rfq = rfqRecord(ref, firstId + i, {
      takerDeskId: taker.deskId,
      takerUserId: taker.userId,
      baseCurrency: i % 5 === 0 ? "ETH" : "BTC",
      settlementOptions: dbtOnly ? ["DBT"] : ["DBT", "BULL"],
      makers: dbtOnly
        ? { DBT: [m1.makerId], BULL: [m2.makerId] }
        : { DBT: [i % 2 === 0 ? m1.makerId : m2.makerId], BULL: i % 4 === 0 ? [m3.makerId] : [] },
      createdAt: createdAtOf(i),
      expiresAt: createdAtOf(i) + 300_000
    })
    return { rfq, status: statuses[i % statuses.length]!, deleted: i === 10 }
  })

const publicMatches = (status: ListedRfq["status"], wanted: ReadonlyArray<string>) =>
  wanted.some((w) =>
    w === "traded"
      ? status === "filled" || status === "filledPartial"
      : w === "open"
        ? status === "open" || status === "trading"
        : status === w
  )

const invited = (rfq: RfqRecord, makerId: string | undefined) =>
  makerId !== undefined && rfq.settlementOptions.some((o) => rfq.makers[o]?.includes(makerId) === true)

/** The model: which RFQs a filter matches, newest first. */
const modelList = (
  rows: ReadonlyArray<ListedRfq>,
  f: Omit<RfqListFilter, "limit" | "after">
): ReadonlyArray<number> =>
  rows
    .filter(({ rfq, status, deleted }) => {
      if (deleted) return false
      const asTaker = rfq.takerDeskId === f.deskId
      const asMaker = invited(rfq, f.makerId)
      if (f.role === "taker" ? !asTaker : f.role === "maker" ? !asMaker : !(asTaker || asMaker)) return false
      if (f.statuses !== undefined && f.statuses.length > 0 && !publicMatches(status, f.statuses))
        return false
      if (f.baseCurrency !== undefined && rfq.baseCurrency !== f.baseCurrency) return false
      if (f.startTime !== undefined && !(rfq.createdAt > f.startTime)) return false
      if (f.endTime !== undefined && !(rfq.createdAt < f.endTime)) return false
      return true
    })
    .map(({ rfq }) => rfq)
    .sort((x, y) => y.createdAt - x.createdAt || y.id - x.id)
    .map((rfq) => rfq.id)

/** Pages through `list` with the keyset of each page's last RFQ; returns every page. */
const pageThrough = (
  filter: Omit<RfqListFilter, "limit" | "after">,
  createdAt: ReadonlyMap<number, number>
) =>
  Effect.gen(function* () {
    const store = yield* RfqStore
    const pages: Array<{ readonly total: number; readonly ids: ReadonlyArray<number> }> = []
    let after: RfqListFilter["after"]
    for (;;) {
      const page = yield* store.list({ ...filter, limit: pageSize, after })
      pages.push(page)
      const last = page.ids.at(-1)
      if (page.ids.length < pageSize || last === undefined) return pages
      after = { createdAt: createdAt.get(last)!, id: last }
    }
  })

const seedRfqs = Effect.gen(function* () {
  const store = yield* RfqStore
  const sql = yield* SqlClient.SqlClient
  const ref = yield* Reference
  const firstId = yield* store.nextRfqId
  for (let i = 1; i < rfqCount; i++) yield* store.nextRfqId
  const rows = buildRfqs(ref, firstId)
  for (const { rfq, status, deleted } of rows) {
    yield* store.insertRfq(rfq, "h")
    // The list reads only these columns; the machine paths that set them are tested elsewhere.
    yield* sql`UPDATE rfqs SET status = ${status}, deleted_at = ${deleted ? rfq.createdAt + 1 : null}
      WHERE id = ${rfq.id}`
  }
  return { ref, rows }
})

const quotesSeeded = Effect.gen(function* () {
  const store = yield* RfqStore
  const ref = yield* Reference
  const [m1, m2, m3] = ref.makers
  const quotes: Array<QuoteRecord> = []
  for (let r = 0; r < 4; r++) {
    const rfq = rfqRecord(ref, yield* store.nextRfqId, {
      makers: { DBT: [m1.makerId, m2.makerId], BULL: [m1.makerId, m3.makerId] },
      createdAt: base,
      expiresAt: base + 300_000
    })
    const d = yield* start(rfq)
    for (let k = 0; k < 6; k++) {
      const maker = k === 5 ? m2 : m1
      const at = base + 1_000 + (((r * 6 + k) * 5) % 11) * 100
      const quote = quoteRecord(rfq, maker, yield* store.nextQuoteId, {
        // maker-2 is invited on DBT only.
        settlementOption: k % 2 === 0 || maker === m2 ? "DBT" : "BULL",
        createdAt: at,
        updatedAt: at
      })
      yield* put(d, ref, quote)
      quotes.push(quote)
    }
    // Closed quotes are listed too, with their status.
    if (r === 1) yield* send(d, { type: "CANCEL", now: base + 5_000 })
  }
  return { m1, m2, quotes, cancelledRfq: quotes[6]!.rfqId }
})

const listLayer = (db: Layer.Layer<SqlClient.SqlClient, unknown>) =>
  Layer.mergeAll(SqlRfqStoreLive, referenceLayer).pipe(Layer.provideMerge(db))

describe.each(testDatabases)("SqlRfqStore lists on $name", (db) => {
  layer(listLayer(db.layer), { timeout: 60_000 })((it) => {
    it.effect("every filter pages to exactly the model's matches, newest first, with the full total", () =>
      Effect.gen(function* () {
        const { ref, rows } = yield* seedRfqs
        const createdAt = new Map(rows.map(({ rfq }) => [rfq.id, rfq.createdAt] as const))
        const [a, b] = ref.takers
        const [m1, m2, m3] = ref.makers
        const filters: ReadonlyArray<Omit<RfqListFilter, "limit" | "after">> = [
          { deskId: a.deskId, role: "taker" },
          { deskId: a.deskId },
          { deskId: m2.deskId, makerId: m2.makerId, role: "maker" },
          { deskId: m3.deskId, makerId: m3.makerId },
          { deskId: m1.deskId, makerId: m1.makerId },
          { deskId: m1.deskId, makerId: m1.makerId, role: "taker" },
          { deskId: m1.deskId, role: "maker" },
          { deskId: a.deskId, role: "taker", statuses: ["open"] },
          { deskId: a.deskId, statuses: ["traded"] },
          { deskId: b.deskId, statuses: ["cancelled", "expired"] },
          { deskId: m1.deskId, makerId: m1.makerId, statuses: ["open", "traded"], baseCurrency: "BTC" },
          { deskId: a.deskId, baseCurrency: "ETH" },
          { deskId: a.deskId, startTime: base + 3_000, endTime: base + 9_000 },
          { deskId: b.deskId, startTime: base + 11_000 }
        ]
        let nonEmpty = 0
        for (const filter of filters) {
          const want = modelList(rows, filter)
          const pages = yield* pageThrough(filter, createdAt)
          const label = JSON.stringify(filter)
          assert.deepStrictEqual(
            pages.flatMap((p) => p.ids),
            [...want],
            label
          )
          for (const page of pages) assert.strictEqual(page.total, want.length, label)
          assert.strictEqual(pages.length, Math.floor(want.length / pageSize) + 1, label)
          if (want.length > pageSize) nonEmpty++
        }
        // The data set is big enough that several filters really page.
        assert.isAtLeast(nonEmpty, 3)
      })
    )

    it.effect("quotes of a maker desk page newest first, every status, optionally of one RFQ", () =>
      Effect.gen(function* () {
        const store = yield* RfqStore
        const { m1, m2, quotes, cancelledRfq } = yield* quotesSeeded
        const byNewest = (qs: ReadonlyArray<QuoteRecord>) =>
          [...qs].sort((x, y) => y.createdAt - x.createdAt || y.id - x.id).map((q) => q.id)
        const cases: ReadonlyArray<[Omit<QuoteListFilter, "limit" | "after">, ReadonlyArray<QuoteRecord>]> = [
          [{ makerDeskId: m1.deskId }, quotes.filter((q) => q.makerDeskId === m1.deskId)],
          [{ makerDeskId: m2.deskId }, quotes.filter((q) => q.makerDeskId === m2.deskId)],
          [
            { makerDeskId: m1.deskId, rfqId: cancelledRfq },
            quotes.filter((q) => q.makerDeskId === m1.deskId && q.rfqId === cancelledRfq)
          ],
          [
            { makerDeskId: m1.deskId, startTime: base + 1_200, endTime: base + 1_800 },
            quotes.filter(
              (q) => q.makerDeskId === m1.deskId && q.createdAt > base + 1_200 && q.createdAt < base + 1_800
            )
          ]
        ]
        for (const [filter, matching] of cases) {
          const got: Array<QuoteRecord> = []
          let after: QuoteListFilter["after"]
          for (;;) {
            const page = yield* store.listQuotes({ ...filter, limit: pageSize, after })
            assert.strictEqual(page.total, matching.length)
            got.push(...page.quotes)
            const last = page.quotes.at(-1)
            if (page.quotes.length < pageSize || last === undefined) break
            after = { createdAt: last.createdAt, id: last.id }
          }
          assert.deepStrictEqual(
            got.map((q) => q.id),
            byNewest(matching),
            JSON.stringify(filter)
          )
          for (const q of got) {
            const original = quotes.find((o) => o.id === q.id)!
            const status = q.rfqId === cancelledRfq ? "cancelled" : "active"
            assert.deepStrictEqual({ ...q, updatedAt: 0 }, { ...original, status, updatedAt: 0 })
          }
        }
      })
    )
  })
})

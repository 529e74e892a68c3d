import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option } from "effect"
import { step } from "../../src/rfq/RfqMachine.js"
import { RfqStore } from "../../src/rfq/RfqStore.js"
import { makeSqlRfqStore, makeSqlRfqStoreWith, SqlRfqStoreLive } from "../../src/storage/SqlRfqStore.js"
import {
  bareRfqRecord,
  looseMarket,
  makerCaller,
  pendingTrade,
  quoteRecord,
  Reference,
  referenceLayer,
  rfqRecord,
  settledTrade,
  takerCaller
} from "../support/records.js"
import { accept, type Driven, expected, json, put, send, start } from "../support/rfqDriver.js"
import { testDatabases } from "../support/TestDatabases.js"

const assertStored = (d: Driven) =>
  Effect.gen(function* () {
    const store = yield* RfqStore
    const loaded = yield* store.load(d.rfq.id)
    assert.deepStrictEqual(Option.getOrThrow(loaded), expected(d))
  })

const eventLog = (rfqId: number) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ seq: number; type: string; payload: any }>`SELECT seq, type, payload FROM rfq_events
      WHERE rfq_id = ${rfqId} ORDER BY id`
  )

/** The RFQ row's own version (PostgreSQL's `xmin`): it changes with any write of the row. */
const rowVersionOf = (rfqId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ version: string }>`SELECT xmin::text AS version FROM rfqs WHERE id = ${rfqId}`,
      ([row]) => row!.version
    )
  )

/** A fresh RFQ with two active quotes: maker-1's ask on DBT and maker-3's bid on BULL. */
const openWithQuotes = Effect.gen(function* () {
  const store = yield* RfqStore
  const ref = yield* Reference
  const rfq = rfqRecord(ref, yield* store.nextRfqId)
  const d = yield* start(rfq)
  const ask = quoteRecord(rfq, ref.makers[0], yield* store.nextQuoteId)
  const bid = quoteRecord(rfq, ref.makers[2], yield* store.nextQuoteId, {
    direction: "buy",
    settlementOption: "BULL",
    amount: "30",
    label: undefined
  })
  yield* put(d, ref, ask)
  yield* put(d, ref, json(bid))
  return { ref, rfq, d, ask, bid: json(bid) }
})

const storeLayer = (db: Layer.Layer<SqlClient.SqlClient, unknown>) =>
  Layer.mergeAll(SqlRfqStoreLive, referenceLayer).pipe(Layer.provideMerge(db))

// `layer`, not `it.layer`: @effect/vitest 0.30 assigns each block's methods onto vitest's shared
// `it`, so a second top-level `it.layer` would nest inside the first block's layer and memo map.
describe.each(testDatabases)("SqlRfqStore on $name", (db) => {
  layer(storeLayer(db.layer), { timeout: 60_000 })((it) => {
    it.effect("an RFQ round-trips through insertRfq and load, with its CREATE event", () =>
      Effect.gen(function* () {
        const store = yield* RfqStore
        const ref = yield* Reference
        const full = rfqRecord(ref, yield* store.nextRfqId, { requestId: 42 })
        const bare = bareRfqRecord(ref, yield* store.nextRfqId)
        for (const rfq of [full, bare]) {
          yield* store.insertRfq(rfq, "body-hash")
          const loaded = yield* store.load(rfq.id)
          assert.deepStrictEqual(Option.getOrThrow(loaded), {
            value: "open",
            state: { rfq, quotes: {} },
            seq: 1
          })
          const log = yield* eventLog(rfq.id)
          assert.deepStrictEqual(json(log), [{ seq: 1, type: "CREATE", payload: json(rfq) }])
        }
        const sql = yield* SqlClient.SqlClient
        const hashes = yield* sql<{
          id: number
          hash: string | null
        }>`SELECT id, request_hash AS hash FROM rfqs
          WHERE id IN ${sql.in([full.id, bare.id])} ORDER BY id`
        assert.deepStrictEqual(json(hashes), [
          { id: full.id, hash: "body-hash" },
          { id: bare.id, hash: null }
        ])
      })
    )

    it.effect("numeric columns read back as canonical decimal strings", () =>
      Effect.gen(function* () {
        const store = yield* RfqStore
        const ref = yield* Reference
        const rfq = rfqRecord(ref, yield* store.nextRfqId)
        yield* store.insertRfq(rfq, "h")
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE rfqs SET amount = '50.000', mark_price = '-0.012500' WHERE id = ${rfq.id}`
        yield* sql`UPDATE rfq_legs SET ratio = '1.50', amount = '75.0' WHERE rfq_id = ${rfq.id} AND position = 1`
        yield* sql`UPDATE rfq_legs SET price = '0.12050' WHERE rfq_id = ${rfq.id} AND position = 0`
        const loaded = Option.getOrThrow(yield* store.load(rfq.id)).state.rfq
        assert.strictEqual(loaded.amount, "50")
        assert.strictEqual(loaded.markPrice, "-0.0125")
        assert.deepStrictEqual(
          loaded.legs.map((l) => [l.ratio, l.amount, l.price]),
          [
            ["1", "50", "0.1205"],
            ["1.5", "75", undefined]
          ]
        )
      })
    )

    it.effect("quotes are stored, updated and closed, and a fully settled trade fills the RFQ", () =>
      Effect.gen(function* () {
        const store = yield* RfqStore
        const { ref, rfq, d, ask, bid } = yield* openWithQuotes
        yield* assertStored(d)
        const updated = { ...ask, price: "0.0601", amount: "40", updatedAt: ask.updatedAt + 500 }
        yield* put(d, ref, updated)
        yield* assertStored(d)
        const trade = yield* accept(d, ref, updated, updated.updatedAt + 1_000)
        yield* assertStored(d)
        assert.strictEqual(Option.getOrThrow(yield* store.load(rfq.id)).value, "settling")
        const live = (yield* store.loadLive).find((s) => s.state.rfq.id === rfq.id)
        assert.deepStrictEqual(live, expected(d))

        const settled = settledTrade(trade, [true, true], trade.createdAt + 200)
        yield* send(d, { type: "SETTLED", trade: settled, now: trade.createdAt + 300 })
        yield* assertStored(d)
        const stored = Option.getOrThrow(yield* store.load(rfq.id))
        assert.strictEqual(stored.value, "filled")
        assert.strictEqual(stored.state.closedAt, trade.createdAt + 300)
        assert.deepStrictEqual(Option.getOrThrow(yield* store.trades(rfq.id)), settled)
        assert.deepStrictEqual(
          (yield* store.quotesOf(rfq.id)).map((q) => [q.id, q.status, q.price]),
          [
            [ask.id, "filled", "0.0601"],
            [bid.id, "cancelled", bid.price]
          ]
        )
        assert.isUndefined((yield* store.loadLive).find((s) => s.state.rfq.id === rfq.id))

        const log = yield* eventLog(rfq.id)
        assert.deepStrictEqual(
          log.map((e) => [e.seq, e.type]),
          d.events.map((type, i) => [i + 1, type])
        )
        assert.deepStrictEqual(log[3]!.payload, {
          value: "open",
          effects: [{ type: "quoteStored", update: true, quote: json(updated) }]
        })
        assert.deepStrictEqual(
          log[5]!.payload.effects.map((e: { type: string }) => e.type),
          ["tradeFinished", "quotesClosed", "rfqClosed"]
        )
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ status: string }>`SELECT status FROM rfqs WHERE id = ${rfq.id}`
        assert.deepStrictEqual(json(row), { status: "filled" })
        assert.strictEqual((yield* eventLog(rfq.id)).length, d.seq)
      })
    )

    it.effect("a partly settled trade closes the RFQ filledPartial with the failed allocation's reason", () =>
      Effect.gen(function* () {
        const store = yield* RfqStore
        const { ref, rfq, d, ask } = yield* openWithQuotes
        const trade = yield* accept(d, ref, ask, ask.updatedAt + 1_000)
        const settled = settledTrade(trade, [false, true], trade.createdAt + 100)
        yield* send(d, { type: "SETTLED", trade: settled, now: trade.createdAt + 100 })
        yield* assertStored(d)
        assert.strictEqual(Option.getOrThrow(yield* store.load(rfq.id)).value, "filledPartial")
        const stored = Option.getOrThrow(yield* store.trades(rfq.id))
        assert.strictEqual(stored.filledAmount, "20")
        assert.deepStrictEqual(
          stored.allocations.map((a) => [a.status, a.reason, a.exchangeTradeId]),
          [
            ["failed", "venue refused the block trade", undefined],
            ["filled", undefined, `BT-${trade.allocations[1]!.id}`]
          ]
        )
      })
    )

    it.effect("a refused trade keeps the RFQ open and its quote active; a second accept trades", () =>
      Effect.gen(function* () {
        const store = yield* RfqStore
        const { ref, rfq, d, ask } = yield* openWithQuotes
        const first = yield* accept(d, ref, ask, ask.updatedAt + 1_000)
        yield* send(d, {
          type: "SETTLED",
          trade: settledTrade(first, [false, false], first.createdAt + 1),
          now: 1
        })
        yield* assertStored(d)
        const reopened = Option.getOrThrow(yield* store.load(rfq.id))
        assert.strictEqual(reopened.value, "open")
        assert.isUndefined(reopened.state.trade)
        assert.isTrue(Option.isNone(yield* store.trades(rfq.id)))
        assert.isTrue((yield* store.loadLive).some((s) => s.state.rfq.id === rfq.id && s.value === "open"))

        const second = yield* accept(d, ref, ask, first.createdAt + 5_000)
        yield* assertStored(d)
        assert.deepStrictEqual(Option.getOrThrow(yield* store.trades(rfq.id)), second)
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ id: number; status: string }>`SELECT id, status FROM trades
          WHERE rfq_id = ${rfq.id} ORDER BY id`
        assert.deepStrictEqual(json(rows), [
          { id: first.id, status: "failed" },
          { id: second.id, status: "pending" }
        ])
      })
    )

    it.effect(
      "cancel closes the quotes and the RFQ; delete hides it from load, loadLive and the log stays",
      () =>
        Effect.gen(function* () {
          const store = yield* RfqStore
          const { rfq, d, ask, bid } = yield* openWithQuotes
          yield* send(d, {
            type: "QUOTE.CLOSE",
            quoteIds: [bid.id],
            status: "cancelled",
            now: bid.updatedAt + 10
          })
          yield* assertStored(d)
          yield* send(d, { type: "CANCEL", now: bid.updatedAt + 20 })
          yield* assertStored(d)
          assert.deepStrictEqual(
            (yield* store.quotesOf(rfq.id)).map((q) => [q.id, q.status, q.updatedAt]),
            [
              [ask.id, "cancelled", bid.updatedAt + 20],
              [bid.id, "cancelled", bid.updatedAt + 10]
            ]
          )
          yield* send(d, { type: "DELETE", now: bid.updatedAt + 30 })
          assert.isTrue(Option.isNone(yield* store.load(rfq.id)))
          assert.isUndefined((yield* store.loadLive).find((s) => s.state.rfq.id === rfq.id))
          const sql = yield* SqlClient.SqlClient
          const [row] = yield* sql`SELECT status, closed_at AS "closedAt", deleted_at AS "deletedAt" FROM rfqs
          WHERE id = ${rfq.id}`
          assert.deepStrictEqual(json(row), {
            status: "cancelled",
            closedAt: bid.updatedAt + 20,
            deletedAt: bid.updatedAt + 30
          })
          assert.deepStrictEqual(
            (yield* eventLog(rfq.id)).map((e) => [e.seq, e.type]),
            d.events.map((type, i) => [i + 1, type])
          )
        })
    )

    it.effect("expiry expires the RFQ and its quotes", () =>
      Effect.gen(function* () {
        const store = yield* RfqStore
        const { rfq, d } = yield* openWithQuotes
        yield* send(d, { type: "EXPIRE", now: rfq.expiresAt })
        yield* assertStored(d)
        assert.strictEqual(Option.getOrThrow(yield* store.load(rfq.id)).value, "expired")
        assert.deepStrictEqual(
          (yield* store.quotesOf(rfq.id)).map((q) => q.status),
          ["expired", "expired"]
        )
      })
    )

    it.effect("a step that fails part-way writes nothing", () =>
      Effect.gen(function* () {
        const store = yield* RfqStore
        const sql = yield* SqlClient.SqlClient
        const { ref, rfq, d, ask } = yield* openWithQuotes
        const before = yield* rowVersionOf(rfq.id)

        // A new quote whose event-log row clashes with an existing seq: the quote insert and the
        // RFQ update ran before the clash and must be rolled back with it.
        const extra = quoteRecord(rfq, ref.makers[1], yield* store.nextQuoteId)
        const quoteStep = step(d.snapshot, {
          type: "QUOTE.PUT",
          candidate: {
            quote: extra,
            caller: makerCaller(ref.makers[1]),
            legMarkets: [looseMarket, looseMarket],
            now: 1
          }
        })
        const clash = yield* Effect.exit(
          store.applyStep(rfq.id, d.seq, "QUOTE.PUT", "open", quoteStep.effects)
        )
        assert.isTrue(Exit.isFailure(clash) && Cause.isDie(clash.cause))

        // An accept whose second allocation names credentials that do not exist: the trade row
        // and the first allocation were written before the failure.
        const tradeId = yield* store.nextTradeId
        const good = pendingTrade(
          rfq,
          ask,
          tradeId,
          [yield* store.nextAllocationId, yield* store.nextAllocationId],
          5
        )
        const bad = {
          ...good,
          allocations: [good.allocations[0]!, { ...good.allocations[1]!, credentialsId: 999_999 }]
        }
        const acceptStep = step(d.snapshot, {
          type: "ACCEPT",
          quoteId: ask.id,
          caller: takerCaller(ref.takers[0]),
          now: 5,
          trade: bad
        })
        assert.isTrue(acceptStep.changed)
        const refused = yield* Effect.exit(
          store.applyStep(rfq.id, d.seq + 1, "ACCEPT", "settling", acceptStep.effects)
        )
        assert.isTrue(Exit.isFailure(refused) && Cause.isDie(refused.cause))

        yield* assertStored(d)
        assert.strictEqual(yield* rowVersionOf(rfq.id), before)
        assert.deepStrictEqual(
          (yield* store.quotesOf(rfq.id)).map((q) => q.id),
          Object.keys(d.snapshot.context.quotes).map(Number)
        )
        const [trades] = yield* sql<{ n: number }>`SELECT count(*) AS n FROM trades WHERE rfq_id = ${rfq.id}`
        const [allocations] = yield* sql<{
          n: number
        }>`SELECT count(*) AS n FROM allocations WHERE trade_id = ${tradeId}`
        assert.deepStrictEqual([Number(trades!.n), Number(allocations!.n)], [0, 0])
        assert.strictEqual((yield* eventLog(rfq.id)).length, d.seq)
      })
    )

    it.effect("a write that touches other rows than the machine expects fails the whole step", () =>
      Effect.gen(function* () {
        const store = yield* RfqStore
        const sql = yield* SqlClient.SqlClient
        const { ref, rfq, d, ask } = yield* openWithQuotes
        const before = yield* rowVersionOf(rfq.id)
        // Storage no longer holds the quote as active (memory and storage disagree)...
        yield* sql`UPDATE quotes SET status = 'cancelled' WHERE id = ${ask.id}`
        // ...so an update of it must refuse, naming the write, and leave the RFQ row and log alone.
        const update = step(d.snapshot, {
          type: "QUOTE.PUT",
          candidate: {
            quote: { ...ask, amount: "20", updatedAt: 9 },
            caller: makerCaller(ref.makers[0]),
            legMarkets: [looseMarket, looseMarket],
            now: 9
          }
        })
        assert.isTrue(update.changed)
        const refused = yield* Effect.exit(
          store.applyStep(rfq.id, d.seq + 1, "QUOTE.PUT", "open", update.effects)
        )
        assert.isTrue(Exit.isFailure(refused) && Cause.isDie(refused.cause))
        assert.include(
          Cause.pretty((refused as Exit.Failure<unknown, unknown>).cause),
          `update active quote ${ask.id}`
        )
        assert.strictEqual(yield* rowVersionOf(rfq.id), before)
        assert.strictEqual((yield* eventLog(rfq.id)).length, d.seq)
      })
    )

    it.effect("loadLive restores open and settling RFQs with active quotes, pending trade and last seq", () =>
      Effect.gen(function* () {
        const store = yield* RfqStore
        const open = yield* openWithQuotes
        const settling = yield* openWithQuotes
        yield* accept(settling.d, settling.ref, settling.ask, settling.ask.updatedAt + 1)
        const cancelled = yield* openWithQuotes
        yield* send(cancelled.d, { type: "CANCEL", now: 7 })
        const live = yield* store.loadLive
        const mine = (id: number) => live.find((s) => s.state.rfq.id === id)
        assert.deepStrictEqual(mine(open.rfq.id), expected(open.d))
        assert.deepStrictEqual(mine(settling.rfq.id), expected(settling.d))
        assert.strictEqual(mine(settling.rfq.id)?.state.trade?.allocations.length, 2)
        assert.isUndefined(mine(cancelled.rfq.id))
        assert.isTrue(live.every((s) => s.value === "open" || s.value === "settling"))
        // Every live RFQ restores to what load says about it.
        for (const s of live) assert.deepStrictEqual(Option.getOrThrow(yield* store.load(s.state.rfq.id)), s)
      })
    )

    it.effect("findByRequestId is scoped to the user and ignores request id 0", () =>
      Effect.gen(function* () {
        const store = yield* RfqStore
        const ref = yield* Reference
        const requestId = 7_000 + (yield* store.nextRfqId)
        const mine = rfqRecord(ref, yield* store.nextRfqId, { requestId })
        const theirs = rfqRecord(ref, yield* store.nextRfqId, {
          requestId,
          takerDeskId: ref.takers[1].deskId,
          takerUserId: ref.takers[1].userId
        })
        const keyless = rfqRecord(ref, yield* store.nextRfqId)
        yield* store.insertRfq(mine, "mine")
        yield* store.insertRfq(theirs, "theirs")
        yield* store.insertRfq(keyless, "none")
        assert.deepStrictEqual(
          yield* store.findByRequestId(ref.takers[0].userId, requestId),
          Option.some({ rfqId: mine.id, bodyHash: "mine" })
        )
        assert.deepStrictEqual(
          yield* store.findByRequestId(ref.takers[1].userId, requestId),
          Option.some({ rfqId: theirs.id, bodyHash: "theirs" })
        )
        assert.isTrue(Option.isNone(yield* store.findByRequestId(ref.takers[0].userId, requestId + 1)))
        assert.isTrue(Option.isNone(yield* store.findByRequestId(ref.takers[0].userId, 0)))
      })
    )

    it.effect("a store built on existing data hands out ids after the largest stored ones", () =>
      Effect.gen(function* () {
        const { d, ask, ref } = yield* openWithQuotes
        const trade = yield* accept(d, ref, ask, 1)
        const restarted = yield* makeSqlRfqStore
        assert.isAbove(yield* restarted.nextRfqId, d.rfq.id)
        assert.isAbove(yield* restarted.nextQuoteId, ask.id)
        assert.isAbove(yield* restarted.nextTradeId, trade.id)
        assert.isAbove(yield* restarted.nextAllocationId, trade.allocations[1]!.id)
        const first = yield* restarted.nextRfqId
        assert.strictEqual(yield* restarted.nextRfqId, first + 1)
      })
    )

    it.effect("loadLive reads page by page: each live RFQ once, in id order, with its quotes and trade", () =>
      Effect.gen(function* () {
        const store = yield* RfqStore
        const ref = yield* Reference
        // Live: open with quotes, settling (its trade pending), open without quotes. Not live:
        // cancelled, deleted.
        const quoted = yield* openWithQuotes
        const settling = yield* openWithQuotes
        yield* accept(settling.d, settling.ref, settling.ask, 1)
        const cancelled = yield* openWithQuotes
        yield* send(cancelled.d, { type: "CANCEL", now: 2 })
        const deleted = yield* openWithQuotes
        yield* send(deleted.d, { type: "CANCEL", now: 3 })
        yield* send(deleted.d, { type: "DELETE", now: 4 })
        const bare = rfqRecord(ref, yield* store.nextRfqId)
        yield* store.insertRfq(bare, "h")

        const whole = yield* store.loadLive
        const ids = whole.map((s) => s.state.rfq.id)
        assert.deepStrictEqual(
          ids,
          [...new Set(ids)].sort((a, b) => a - b),
          "each once, in id order"
        )
        assert.deepStrictEqual(
          whole.find((s) => s.state.rfq.id === quoted.rfq.id),
          expected(quoted.d)
        )
        assert.deepStrictEqual(
          whole.find((s) => s.state.rfq.id === settling.rfq.id),
          expected(settling.d)
        )
        assert.isTrue(ids.includes(bare.id))
        assert.isFalse(ids.includes(cancelled.rfq.id))
        assert.isFalse(ids.includes(deleted.rfq.id))
        // Pages of one, two and three RFQs read exactly what one page reads.
        for (const livePage of [1, 2, 3]) {
          const paged = yield* makeSqlRfqStoreWith({ livePage })
          assert.deepStrictEqual(yield* paged.loadLive, whole, `pages of ${livePage}`)
        }
      })
    )
  })
})

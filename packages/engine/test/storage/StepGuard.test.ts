import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Layer } from "effect"
import { type RfqEvent, stateOf, step } from "../../src/rfq/RfqMachine.js"
import { RfqStore } from "../../src/rfq/RfqStore.js"
import { isStaleStep } from "../../src/storage/SqlErrors.js"
import { SqlRfqStoreLive } from "../../src/storage/SqlRfqStore.js"
import {
  looseMarket,
  makerCaller,
  quoteRecord,
  Reference,
  referenceLayer,
  rfqRecord
} from "../support/records.js"
import { type Driven, json, put, send, start } from "../support/rfqDriver.js"
import { testDatabaseTimeout, testDatabases } from "../support/TestDatabases.js"

/**
 * A step is written only onto the RFQ as its writer last saw it: its event-log row, number N,
 * goes in only when the RFQ's last event is N-1, and `rfq_events_rfq_seq_key` settles two writers
 * racing for one N. A writer whose copy is stale (another owner stepped the RFQ) writes nothing:
 * its step dies as stale, which the host answers 503. A step that only stores or closes quotes
 * leaves the RFQ's own row alone.
 */

/** What storage holds of an RFQ's steps: its event count, its quotes, its row's status and version. */
const stepsOf = (rfqId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ events: number; quotes: number; status: string; rowVersion: string }>`SELECT r.status,
        r.xmin::text AS "rowVersion",
        (SELECT count(*) FROM rfq_events e WHERE e.rfq_id = r.id) AS events,
        (SELECT count(*) FROM quotes q WHERE q.rfq_id = r.id) AS quotes
      FROM rfqs r WHERE r.id = ${rfqId}`,
      ([row]) => ({
        events: Number(row!.events),
        quotes: Number(row!.quotes),
        status: row!.status,
        rowVersion: row!.rowVersion
      })
    )
  )

/** A quote put computed from `d` as it is now, not applied to it. */
const quotePut = (d: Driven, quoteId: number, maker = 0) =>
  Effect.map(Reference, (ref) => {
    const quote = json(quoteRecord(d.rfq, ref.makers[maker]!, quoteId))
    const event: RfqEvent = {
      type: "QUOTE.PUT",
      candidate: {
        quote,
        caller: makerCaller(ref.makers[maker]!),
        legMarkets: d.rfq.legs.map(() => looseMarket),
        now: 1
      }
    }
    const { next, effects } = step(d.snapshot, event)
    return { value: stateOf(next), effects, quote }
  })

const diedStale = (exit: Exit.Exit<unknown, unknown>) => Exit.isFailure(exit) && isStaleStep(exit.cause)

describe.each(testDatabases)("the step's guard on $name", (db) => {
  layer(Layer.mergeAll(SqlRfqStoreLive, referenceLayer).pipe(Layer.provideMerge(db.layer)), {
    timeout: testDatabaseTimeout
  })((it) => {
    it.effect("a step onto another event than the RFQ's last writes nothing and dies as stale", () =>
      Effect.gen(function* () {
        const store = yield* RfqStore
        const ref = yield* Reference
        const d = yield* start(rfqRecord(ref, yield* store.nextRfqId))
        assert.deepInclude(yield* stepsOf(d.rfq.id), { events: 1, quotes: 0 })

        // A writer ahead of storage (event 3 onto event 1): no event clashes, the guard refuses.
        const ahead = yield* quotePut(d, yield* store.nextQuoteId)
        const refused = yield* Effect.exit(
          store.applyStep(d.rfq.id, 3, "QUOTE.PUT", ahead.value, ahead.effects)
        )
        assert.isTrue(diedStale(refused), Exit.isFailure(refused) ? Cause.pretty(refused.cause) : "committed")
        assert.include(Cause.pretty((refused as Exit.Failure<unknown, unknown>).cause), "onto event 2")
        assert.deepInclude(yield* stepsOf(d.rfq.id), { events: 1, quotes: 0 })

        // A stale writer: its copy is at event 1, another stepped the RFQ to event 2 meanwhile.
        const stale = yield* quotePut(d, yield* store.nextQuoteId)
        yield* put(d, ref, json(quoteRecord(d.rfq, ref.makers[1]!, yield* store.nextQuoteId)))
        assert.deepInclude(yield* stepsOf(d.rfq.id), { events: 2, quotes: 1 })
        const late = yield* Effect.exit(store.applyStep(d.rfq.id, 2, "QUOTE.PUT", stale.value, stale.effects))
        assert.isTrue(diedStale(late), Exit.isFailure(late) ? Cause.pretty(late.cause) : "committed")
        assert.deepInclude(yield* stepsOf(d.rfq.id), { events: 2, quotes: 1 })

        // The writer at the RFQ's last event writes.
        yield* put(d, ref, json(quoteRecord(d.rfq, ref.makers[0]!, yield* store.nextQuoteId)))
        assert.deepInclude(yield* stepsOf(d.rfq.id), { events: 3, quotes: 2 })
      })
    )

    it.effect("of two writers racing for one event, one writes and the other dies as stale", () =>
      Effect.gen(function* () {
        const store = yield* RfqStore
        const ref = yield* Reference
        for (let round = 0; round < 5; round++) {
          const d = yield* start(rfqRecord(ref, yield* store.nextRfqId))
          const first = yield* quotePut(d, yield* store.nextQuoteId, 0)
          const second = yield* quotePut(d, yield* store.nextQuoteId, 1)
          const exits = yield* Effect.all(
            [first, second].map((w) =>
              Effect.exit(store.applyStep(d.rfq.id, 2, "QUOTE.PUT", w.value, w.effects))
            ),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(exits.filter(Exit.isSuccess).length, 1, "exactly one writer commits")
          assert.isTrue(exits.some(diedStale), "the other dies as stale")
          assert.deepInclude(yield* stepsOf(d.rfq.id), { events: 2, quotes: 1 })
        }
      })
    )

    it.effect(
      "a step that only stores quotes leaves the RFQ's row alone; one that closes the RFQ writes it",
      () =>
        Effect.gen(function* () {
          const store = yield* RfqStore
          const ref = yield* Reference
          const d = yield* start(rfqRecord(ref, yield* store.nextRfqId))
          const created = yield* stepsOf(d.rfq.id)
          yield* put(d, ref, json(quoteRecord(d.rfq, ref.makers[0]!, yield* store.nextQuoteId)))
          yield* put(d, ref, json(quoteRecord(d.rfq, ref.makers[1]!, yield* store.nextQuoteId)))
          const quoted = yield* stepsOf(d.rfq.id)
          assert.deepStrictEqual(quoted, { ...created, events: 3, quotes: 2 })

          yield* send(d, { type: "CANCEL", now: 2 })
          const cancelled = yield* stepsOf(d.rfq.id)
          assert.strictEqual(cancelled.status, "cancelled")
          assert.notStrictEqual(cancelled.rowVersion, quoted.rowVersion)
          assert.strictEqual(cancelled.events, 4)
        })
    )
  })
})

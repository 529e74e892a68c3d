import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Layer } from "effect"
import { type RfqEvent, stateOf, step } from "../../src/rfq/RfqMachine.js"
import { RfqStore } from "../../src/rfq/RfqStore.js"
import { SqlRfqStoreLive } from "../../src/storage/SqlRfqStore.js"
import {
  looseMarket,
  makerCaller,
  quoteRecord,
  Reference,
  referenceLayer,
  rfqRecord
} from "../support/records.js"
import { type Driven, json, put, start } from "../support/rfqDriver.js"
import { testDatabaseTimeout, testDatabases } from "../support/TestDatabases.js"

/**
 * A step is written only onto the RFQ as its writer last saw it: `rfqs.version` counts the RFQ's
 * events (1 with its creation, one more per step), and the step writing event N needs version N-1.
 * A writer whose copy is stale (another owner stepped the RFQ) writes nothing; its step dies.
 */

/** What storage holds of an RFQ's steps: its version, its event count and its quotes. */
const stepsOf = (rfqId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ version: number; events: number; quotes: number }>`SELECT version,
        (SELECT count(*) FROM rfq_events e WHERE e.rfq_id = r.id) AS events,
        (SELECT count(*) FROM quotes q WHERE q.rfq_id = r.id) AS quotes
      FROM rfqs r WHERE r.id = ${rfqId}`,
      ([row]) => ({ version: Number(row!.version), events: Number(row!.events), quotes: Number(row!.quotes) })
    )
  )

/** A quote put computed from `d` as it is now, not applied to it. */
const quotePut = (d: Driven, quoteId: number) =>
  Effect.map(Reference, (ref) => {
    const quote = json(quoteRecord(d.rfq, ref.makers[0], quoteId))
    const event: RfqEvent = {
      type: "QUOTE.PUT",
      candidate: {
        quote,
        caller: makerCaller(ref.makers[0]),
        legMarkets: d.rfq.legs.map(() => looseMarket),
        now: 1
      }
    }
    const { next, effects } = step(d.snapshot, event)
    return { value: stateOf(next), effects, quote }
  })

describe.each(testDatabases)("the step's version guard on $name", (db) => {
  layer(Layer.mergeAll(SqlRfqStoreLive, referenceLayer).pipe(Layer.provideMerge(db.layer)), {
    timeout: testDatabaseTimeout
  })((it) => {
    it.effect("a step onto another version than the stored one writes nothing and dies", () =>
      Effect.gen(function* () {
        const store = yield* RfqStore
        const ref = yield* Reference
        const d = yield* start(rfqRecord(ref, yield* store.nextRfqId))
        assert.deepStrictEqual(yield* stepsOf(d.rfq.id), { version: 1, events: 1, quotes: 0 })

        // A writer ahead of storage (event 3 onto version 1): no event clashes, the guard refuses.
        const ahead = yield* quotePut(d, yield* store.nextQuoteId)
        const refused = yield* Effect.exit(
          store.applyStep(d.rfq.id, 3, "QUOTE.PUT", ahead.value, ahead.effects)
        )
        assert.isTrue(Exit.isFailure(refused) && Cause.isDie(refused.cause))
        assert.include(Cause.pretty((refused as Exit.Failure<unknown, unknown>).cause), "at version 2")
        assert.deepStrictEqual(yield* stepsOf(d.rfq.id), { version: 1, events: 1, quotes: 0 })

        // A stale writer: its copy is at event 1, another stepped the RFQ to event 2 meanwhile.
        const stale = yield* quotePut(d, yield* store.nextQuoteId)
        yield* put(d, ref, json(quoteRecord(d.rfq, ref.makers[1], yield* store.nextQuoteId)))
        assert.deepStrictEqual(yield* stepsOf(d.rfq.id), { version: 2, events: 2, quotes: 1 })
        const late = yield* Effect.exit(store.applyStep(d.rfq.id, 2, "QUOTE.PUT", stale.value, stale.effects))
        assert.isTrue(Exit.isFailure(late) && Cause.isDie(late.cause))
        assert.deepStrictEqual(yield* stepsOf(d.rfq.id), { version: 2, events: 2, quotes: 1 })

        // The writer at the stored version writes.
        yield* put(d, ref, json(quoteRecord(d.rfq, ref.makers[0], yield* store.nextQuoteId)))
        assert.deepStrictEqual(yield* stepsOf(d.rfq.id), { version: 3, events: 3, quotes: 2 })
      })
    )
  })
})

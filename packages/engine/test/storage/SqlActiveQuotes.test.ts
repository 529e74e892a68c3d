import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Either, Layer, Option, Runtime } from "effect"
import * as fc from "fast-check"
import {
  type ActiveQuote,
  ActiveQuotes,
  type ActiveQuotesService,
  makeInMemoryActiveQuotes
} from "../../src/engine/ActiveQuotes.js"
import { type RfqEvent, stateOf, step } from "../../src/rfq/RfqMachine.js"
import type { QuoteRecord } from "../../src/rfq/RfqRecord.js"
import { RfqStore } from "../../src/rfq/RfqStore.js"
import { ActiveQuotesSql } from "../../src/storage/SqlActiveQuotes.js"
import { SqlRfqStoreLive } from "../../src/storage/SqlRfqStore.js"
import {
  looseMarket,
  makerCaller,
  quoteRecord,
  Reference,
  type ReferenceData,
  referenceLayer,
  rfqRecord
} from "../support/records.js"
import { type Driven, json, send, start } from "../support/rfqDriver.js"
import { testDatabaseTimeout, testDatabases } from "../support/TestDatabases.js"

/**
 * The active-quote index read from SQL (`SqlActiveQuotes.ts`, several hosts) answers as the
 * in-memory one (one host) does, after any sequence of quote steps committed through the store; a
 * label the index calls taken is refused by the store's unique index too (`LabelTaken`).
 */

const LABELS = ["a", "b", "c"] as const
const RFQS = 3

type Op =
  | { readonly kind: "put"; readonly rfq: number; readonly maker: number; readonly label: number | null }
  | { readonly kind: "update"; readonly pick: number; readonly label: number | null | "keep" }
  | { readonly kind: "close"; readonly pick: number }
  | { readonly kind: "cancel"; readonly rfq: number }

const label = fc.option(fc.nat(LABELS.length - 1), { nil: null })
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("put" as const),
      rfq: fc.nat(RFQS - 1),
      maker: fc.nat(2),
      label
    })
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("update" as const),
      pick: fc.nat(),
      label: fc.oneof(fc.constant("keep" as const), label)
    })
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("close" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("cancel" as const), rfq: fc.nat(RFQS - 1) }) }
)

const byId = (quotes: ReadonlyArray<ActiveQuote>) => json([...quotes].sort((x, y) => x.id - y.id))

/** Every question the engine asks the index, asked of both; they must answer alike. */
const assertAlike = (
  memory: ActiveQuotesService,
  sql: ActiveQuotesService,
  ref: ReferenceData,
  rfqIds: ReadonlyArray<number>,
  quoteIds: ReadonlyArray<number>
) =>
  Effect.gen(function* () {
    for (const id of quoteIds) {
      assert.deepStrictEqual(
        json(Option.getOrNull(yield* sql.find(id))),
        json(Option.getOrNull(yield* memory.find(id))),
        `find(${id})`
      )
    }
    for (const maker of ref.makers) {
      for (const l of LABELS) {
        assert.deepStrictEqual(
          Option.getOrNull(yield* sql.labelHolder(maker.deskId, l)),
          Option.getOrNull(yield* memory.labelHolder(maker.deskId, l)),
          `labelHolder(${maker.deskId}, ${l})`
        )
      }
      const filters = [undefined, { userId: maker.userId }, ...rfqIds.map((rfqId) => ({ rfqId }))]
      for (const filter of filters) {
        assert.deepStrictEqual(
          byId(yield* sql.ofDesk(maker.deskId, filter)),
          byId(yield* memory.ofDesk(maker.deskId, filter)),
          `ofDesk(${maker.deskId}, ${JSON.stringify(filter)})`
        )
      }
    }
  })

/** Runs `ops` on fresh RFQs, the store writing every step, the in-memory index re-read after each. */
const runOps = (ops: ReadonlyArray<Op>) =>
  Effect.gen(function* () {
    const store = yield* RfqStore
    const ref = yield* Reference
    const sqlIndex = yield* ActiveQuotes
    const memory = makeInMemoryActiveQuotes()
    const driven: Array<Driven> = []
    for (let i = 0; i < RFQS; i++) driven.push(yield* start(rfqRecord(ref, yield* store.nextRfqId)))
    const quoteIds: Array<number> = []
    let refusals = 0
    let at = 1_700_000_001_000

    /** Puts `quote` as the engine does: the label checked first, the step written only if it is free. */
    const putQuote = (d: Driven, quote: QuoteRecord) =>
      Effect.gen(function* () {
        const maker = ref.makers.find((m) => m.makerId === quote.makerId)!
        const event: RfqEvent = {
          type: "QUOTE.PUT",
          candidate: {
            quote,
            caller: makerCaller(maker),
            legMarkets: d.rfq.legs.map(() => looseMarket),
            now: at
          }
        }
        if (quote.label !== undefined) {
          const free = yield* memory.reserveLabel(quote.makerDeskId, quote.label, quote.id)
          assert.strictEqual(yield* sqlIndex.reserveLabel(quote.makerDeskId, quote.label, quote.id), free)
          if (!free) {
            // Past the check anyway (as a quote on another host would be). A clash on the same RFQ
            // the machine itself refuses; one with another RFQ's quote, the store's unique index.
            const { next, effects, changed } = step(d.snapshot, event)
            if (!changed) return
            const refused = yield* Effect.either(
              store.applyStep(d.rfq.id, d.seq + 1, "QUOTE.PUT", stateOf(next), effects)
            )
            assert.isTrue(Either.isLeft(refused) && refused.left._tag === "LabelTaken")
            refusals++
            return
          }
        }
        yield* send(d, event)
        yield* memory.reindex(d.rfq.id, d.snapshot.context.quotes)
      })

    for (const o of ops) {
      at += 1000
      switch (o.kind) {
        case "put": {
          const d = driven[o.rfq]!
          if (stateOf(d.snapshot) !== "open") break
          const maker = ref.makers[o.maker]!
          const id = yield* store.nextQuoteId
          quoteIds.push(id)
          const quote = quoteRecord(d.rfq, maker, id, {
            settlementOption: o.maker === 2 ? "BULL" : "DBT",
            label: o.label === null ? undefined : LABELS[o.label],
            createdAt: at,
            updatedAt: at
          })
          yield* putQuote(d, json(quote))
          break
        }
        case "update": {
          const active = driven.flatMap((d) =>
            Object.values(d.snapshot.context.quotes).map((q) => [d, q] as const)
          )
          if (active.length === 0) break
          const [d, current] = active[o.pick % active.length]!
          const { label: _label, ...rest } = current
          const next =
            o.label === "keep" ? current : o.label === null ? rest : { ...rest, label: LABELS[o.label] }
          yield* putQuote(d, { ...next, price: `0.05${at % 7}`, updatedAt: at })
          break
        }
        case "close": {
          const active = driven.flatMap((d) =>
            Object.values(d.snapshot.context.quotes).map((q) => [d, q] as const)
          )
          if (active.length === 0) break
          const [d, q] = active[o.pick % active.length]!
          yield* send(d, { type: "QUOTE.CLOSE", quoteIds: [q.id], status: "cancelled", now: at })
          yield* memory.reindex(d.rfq.id, d.snapshot.context.quotes)
          break
        }
        case "cancel": {
          const d = driven[o.rfq]!
          if (stateOf(d.snapshot) !== "open") break
          yield* send(d, { type: "CANCEL", now: at })
          yield* memory.reindex(d.rfq.id, d.snapshot.context.quotes)
          break
        }
      }
      yield* assertAlike(
        memory,
        sqlIndex,
        ref,
        driven.map((d) => d.rfq.id),
        quoteIds
      )
    }
    return refusals
  })

/** Closes every active quote, so the next run starts from an empty index, whatever this one left. */
const closeAll = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql`UPDATE quotes SET status = 'cancelled' WHERE status = 'active'`.pipe(Effect.orDie)
)

describe.each(testDatabases)("SQL active-quote index on $name", (db) => {
  layer(Layer.mergeAll(SqlRfqStoreLive, ActiveQuotesSql, referenceLayer).pipe(Layer.provideMerge(db.layer)), {
    timeout: testDatabaseTimeout
  })((it) => {
    it.effect(
      "answers find, labelHolder and ofDesk as the in-memory index after any quote steps; a taken label is refused by the store",
      () =>
        Effect.gen(function* () {
          const runtime = yield* Effect.runtime<RfqStore | Reference | ActiveQuotes | SqlClient.SqlClient>()
          let refusals = 0
          yield* Effect.promise(() =>
            fc.assert(
              fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 24, size: "max" }), async (ops) => {
                refusals += await Runtime.runPromise(runtime)(runOps(ops).pipe(Effect.ensuring(closeAll)))
              }),
              // The first run puts one label on two RFQs: the store's refusal is always exercised.
              {
                numRuns: 20,
                examples: [
                  [
                    [
                      { kind: "put", rfq: 0, maker: 0, label: 0 },
                      { kind: "put", rfq: 1, maker: 0, label: 0 }
                    ]
                  ]
                ]
              }
            )
          )
          // The store's refusal was exercised, or the property looked at less than it claims.
          assert.isAbove(refusals, 0)
        }),
      { timeout: 240_000 }
    )
  })
})

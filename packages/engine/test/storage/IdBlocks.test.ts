import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { RfqStore } from "../../src/rfq/RfqStore.js"
import { withMigrations } from "../../src/storage/Database.js"
import { migrationScripts, migrationsTable, migrations, runMigrations } from "../../src/storage/Migrations.js"
import * as PostgresClient from "../../src/storage/PostgresClient.js"
import { makeSqlRfqStore, SqlRfqStoreLive } from "../../src/storage/SqlRfqStore.js"
import { quoteRecord, Reference, referenceLayer, rfqRecord } from "../support/records.js"
import { put, start } from "../support/rfqDriver.js"
import {
  postgresTestClientLayer,
  randomTestSchema,
  testDatabases,
  testPostgresUrl
} from "../support/TestDatabases.js"
import { insertQuote, insertRfq, seedGraph } from "./storageFixtures.js"

/**
 * Ids from the identity sequences in blocks (migration `0004_id_blocks`, `IdBlocks.ts`): unique
 * across engines sharing a database and across restarts, and past what an existing database holds.
 */

const take = (id: Effect.Effect<number>, n: number) => Effect.all(Array.from({ length: n }, () => id))

const assertDistinct = (ids: ReadonlyArray<number>) => assert.strictEqual(new Set(ids).size, ids.length)

describe.each(testDatabases)("id blocks on $name", (db) => {
  layer(Layer.mergeAll(SqlRfqStoreLive, referenceLayer).pipe(Layer.provideMerge(db.layer)), {
    timeout: 120_000
  })((it) => {
    it.effect("a restarted store hands out fresh ids: above every id before, none twice", () =>
      Effect.gen(function* () {
        const store = yield* RfqStore
        // 150 ids cross a block boundary (blocks of 100); concurrent takers share the refill.
        const before = yield* Effect.all(
          Array.from({ length: 150 }, () => store.nextQuoteId),
          {
            concurrency: 16
          }
        )
        assertDistinct(before)
        const restarted = yield* makeSqlRfqStore
        const after = yield* take(restarted.nextQuoteId, 150)
        assertDistinct([...before, ...after])
        assert.isAbove(Math.min(...after), Math.max(...before))
        // Within a block, ids follow each other.
        assert.strictEqual(after[1], after[0]! + 1)
      })
    )
  })
})

/** A second client (its own pool) on `schema`, as a second host would have; never drops it. */
const secondClient = (schema: string) =>
  PostgresClient.layer({ url: testPostgresUrl, schema, maxConnections: 4 })

describe("id blocks on PostgreSQL, several engines and existing data", () => {
  const schema = randomTestSchema()
  layer(
    Layer.mergeAll(SqlRfqStoreLive, referenceLayer).pipe(
      Layer.provideMerge(withMigrations(postgresTestClientLayer(schema)))
    ),
    { timeout: 120_000 }
  )((it) => {
    it.scoped("two engines on one schema create RFQs and quotes concurrently with disjoint ids", () =>
      Effect.gen(function* () {
        const ref = yield* Reference
        const first = yield* RfqStore
        const otherSql = Context.get(yield* Layer.build(secondClient(schema)), SqlClient.SqlClient)
        const second = yield* makeSqlRfqStore.pipe(Effect.provideService(SqlClient.SqlClient, otherSql))
        const engines = [
          Context.make(RfqStore, first).pipe(Context.add(SqlClient.SqlClient, yield* SqlClient.SqlClient)),
          Context.make(RfqStore, second).pipe(Context.add(SqlClient.SqlClient, otherSql))
        ]
        // Each engine: 120 RFQs with one quote each, 8 at a time, both engines at once.
        const created = yield* Effect.forEach(
          engines,
          (context) =>
            Effect.forEach(
              Array.from({ length: 120 }),
              () =>
                Effect.gen(function* () {
                  const store = yield* RfqStore
                  const rfq = rfqRecord(ref, yield* store.nextRfqId)
                  const d = yield* start(rfq)
                  const quote = quoteRecord(rfq, ref.makers[0], yield* store.nextQuoteId, {
                    label: undefined
                  })
                  yield* put(d, ref, quote)
                  return [rfq.id, quote.id] as const
                }),
              { concurrency: 8 }
            ).pipe(Effect.provide(context)),
          { concurrency: 2 }
        )
        const all = created.flat()
        assertDistinct(all.map(([rfqId]) => rfqId))
        assertDistinct(all.map(([, quoteId]) => quoteId))
        const sql = yield* SqlClient.SqlClient
        const ids = all.map(([rfqId]) => rfqId)
        const [row] = yield* sql<{ rfqs: number; quotes: number }>`
          SELECT (SELECT count(*) FROM rfqs WHERE id IN ${sql.in(ids)}) AS rfqs,
            (SELECT count(*) FROM quotes WHERE rfq_id IN ${sql.in(ids)}) AS quotes`
        assert.deepStrictEqual([Number(row!.rfqs), Number(row!.quotes)], [240, 240])
      })
    )
  })

  // A database migrated before `0004_id_blocks`, with rows whose ids the old counters assigned.
  const migratedTo3 = Effect.gen(function* () {
    const upTo3 = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < "0004"))
    yield* Migrator.make({})({ loader: Migrator.fromRecord(upTo3), table: migrationsTable })
  })

  layer(postgresTestClientLayer(), { timeout: 120_000 })((it) => {
    it.effect("the migration starts each sequence past the largest id an existing database holds", () =>
      Effect.gen(function* () {
        yield* migratedTo3
        const graph = yield* seedGraph
        const small = yield* insertRfq(graph)
        const rfqId = yield* insertRfq(graph, { id: 250, request_id: 0 })
        yield* insertQuote(graph, small, { id: 77 })
        const applied = yield* runMigrations
        assert.deepStrictEqual(
          applied.map(([id]) => id),
          Object.keys(migrationScripts)
            .filter((name) => name >= "0004")
            .map((name) => Number(name.slice(0, 4)))
        )
        const store = yield* makeSqlRfqStore
        assert.deepStrictEqual(
          [
            yield* store.nextRfqId,
            yield* store.nextQuoteId,
            yield* store.nextTradeId,
            yield* store.nextAllocationId
          ],
          [rfqId + 1, 78, 1, 1]
        )
        // An insert that leaves the id to its default takes a block of its own, past the store's.
        assert.isAbove(yield* insertRfq(graph), rfqId + 100)
      })
    )
  })
})

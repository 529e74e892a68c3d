import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ping, withMigrations } from "../../src/storage/Database.js"
import { migrationScripts, migrationsTable, runMigrations } from "../../src/storage/Migrations.js"
import {
  pgliteTestClientLayer,
  postgresTestClientLayer,
  randomTestSchema,
  testDatabaseTimeout
} from "../support/TestDatabases.js"

const expectedTables = [
  "allocations",
  "api_clients",
  "block_trade_nonces",
  "desks",
  "exchange_credentials",
  "makers",
  "otc_counterparties",
  "quotes",
  "refresh_tokens",
  "rfq_events",
  "rfq_legs",
  "rfq_makers",
  "rfqs",
  "trades",
  "users",
  "venue_block_trades",
  migrationsTable
]

/** `0001_initial` → [1, "initial"], the migrator's own reading of a record key. */
const expectedMigrations = Object.keys(migrationScripts)
  .sort()
  .map((key) => [Number(key.slice(0, key.indexOf("_"))), key.slice(key.indexOf("_") + 1)] as const)

// The PGlite test client starts from an already migrated snapshot in `public`; an empty schema
// first in its (single-session) search_path is an empty database for the migrator.
const emptyPglite = Layer.tap(pgliteTestClientLayer(), (context) => {
  const schema = randomTestSchema()
  return Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`)
  ).pipe(Effect.provide(context))
})

const emptyDatabases = [
  { name: "pglite", layer: emptyPglite as Layer.Layer<SqlClient.SqlClient, unknown> },
  { name: "postgres", layer: postgresTestClientLayer() as Layer.Layer<SqlClient.SqlClient, unknown> }
]

const tablesInSchema = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ table_name: string }>`
      SELECT table_name FROM information_schema.tables
      WHERE table_schema = current_schema() ORDER BY table_name`,
    (rows) => rows.map((r) => r.table_name)
  )
)

describe.each(emptyDatabases)("migrations on $name", ({ layer: database }) => {
  layer(database, { timeout: testDatabaseTimeout })((it) => {
    it.effect("apply from an empty database, then re-running them changes nothing", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        assert.deepStrictEqual(yield* tablesInSchema, [])

        const applied = yield* runMigrations
        assert.deepStrictEqual(applied, expectedMigrations)
        const tables = yield* tablesInSchema
        assert.deepStrictEqual(
          expectedTables.filter((table) => !tables.includes(table)),
          [],
          "missing tables"
        )
        const recorded = yield* sql<{ migration_id: number; name: string }>`
          SELECT migration_id, name FROM ${sql(migrationsTable)} ORDER BY migration_id`
        assert.deepStrictEqual(
          recorded.map((r) => [r.migration_id, r.name] as const),
          expectedMigrations
        )

        assert.deepStrictEqual(yield* runMigrations, [])
        assert.deepStrictEqual(yield* tablesInSchema, tables)
        // The database layer's own path on an up-to-date database: migrate (nothing), then serve.
        yield* ping.pipe(Effect.provide(withMigrations(Layer.succeed(SqlClient.SqlClient, sql))))
        const [count] = yield* sql`SELECT count(*) AS n FROM ${sql(migrationsTable)}`
        assert.strictEqual(count!.n, expectedMigrations.length)
      })
    )
  })
})

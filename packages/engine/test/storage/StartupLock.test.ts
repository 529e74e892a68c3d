import { randomBytes } from "node:crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer, Option } from "effect"
import { SecretBoxLive } from "../../src/security/SecretBox.js"
import { seedDemoData } from "../../src/storage/DemoSeed.js"
import { migrationScripts, migrationsTable, runMigrations } from "../../src/storage/Migrations.js"
import * as PostgresClient from "../../src/storage/PostgresClient.js"
import { MIGRATION_STATEMENT_DEADLINE } from "../../src/storage/Database.js"
import { withStatementDeadline } from "../../src/storage/StatementDeadline.js"
import { lockSchemaStartup } from "../../src/storage/StartupLock.js"
import { postgresTestClientLayer, randomTestSchema, testPostgresUrl } from "../support/TestDatabases.js"

/**
 * Hosts starting together on one PostgreSQL schema: the migrations and the demo seed run under the
 * schema's start-up lock, one host after the other; other schemas are not held up.
 */

const keys = new Map([[1, new Uint8Array(randomBytes(32))]])

/** A client with its own pool on `schema`, as another host would have; the schema is not dropped. */
const otherHost = (schema: string) =>
  Effect.map(
    Layer.build(PostgresClient.layer({ url: testPostgresUrl, schema, maxConnections: 2 })),
    (context) => Context.get(context, SqlClient.SqlClient)
  )

/** The first host's client: its layer drops the schema when the test's scope closes. */
const firstHost = (schema: string) =>
  Effect.map(Layer.build(postgresTestClientLayer(schema)), (context) =>
    Context.get(context, SqlClient.SqlClient)
  )

// As a host starts: statements get the migrations' long deadline (a start may wait for another's).
const hostStart = Effect.zip(
  runMigrations,
  seedDemoData({ hashSecret: (s) => Effect.succeed(`plain:${s}`) }).pipe(Effect.provide(SecretBoxLive(keys)))
).pipe(withStatementDeadline(MIGRATION_STATEMENT_DEADLINE))

describe("start-up lock on PostgreSQL", () => {
  it.scopedLive(
    "4 hosts migrating and seeding one fresh schema at once: every start succeeds, one set of demo data, each migration once",
    () =>
      Effect.gen(function* () {
        const schema = randomTestSchema()
        const clients = [yield* firstHost(schema)]
        for (let i = 0; i < 3; i++) clients.push(yield* otherHost(schema))
        const starts = yield* Effect.all(
          clients.map((sql) => Effect.provideService(hostStart, SqlClient.SqlClient, sql)),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(starts.filter(([, seed]) => seed.seeded).length, 1)
        assert.deepStrictEqual(starts.map(([applied]) => applied.length).sort(), [
          0,
          0,
          0,
          Object.keys(migrationScripts).length
        ])
        const sql = clients[0]!
        const migrated = yield* sql<{ name: string; times: number }>`
          SELECT name, count(*) AS times FROM ${sql(migrationsTable)} GROUP BY migration_id, name ORDER BY migration_id`
        assert.deepStrictEqual(
          migrated.map((r) => [r.name, Number(r.times)]),
          Object.keys(migrationScripts)
            .sort()
            .map((key) => [key.slice(key.indexOf("_") + 1), 1])
        )
        const [counts] = yield* sql<{ desks: number; clients: number }>`
          SELECT (SELECT count(*) FROM desks) AS desks, (SELECT count(*) FROM api_clients) AS clients`
        assert.deepStrictEqual([Number(counts!.desks), Number(counts!.clients)], [4, 5])
      }),
    120_000
  )

  it.scopedLive(
    "the lock is per schema: a schema held at start-up does not hold up another's migrations",
    () =>
      Effect.gen(function* () {
        const held = randomTestSchema()
        const holder = yield* firstHost(held)
        const locked = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const holding = yield* holder
          .withTransaction(
            Effect.zipRight(
              Effect.zipRight(lockSchemaStartup, Deferred.succeed(locked, undefined)),
              Deferred.await(release)
            )
          )
          .pipe(Effect.provideService(SqlClient.SqlClient, holder), Effect.fork)
        yield* Deferred.await(locked)
        // Another schema migrates while the first is held.
        const other = yield* firstHost(randomTestSchema())
        const applied = yield* Effect.provideService(runMigrations, SqlClient.SqlClient, other).pipe(
          Effect.timeoutFail({
            duration: "20 seconds",
            onTimeout: () => new Error("held up by another schema")
          })
        )
        assert.strictEqual(applied.length, Object.keys(migrationScripts).length)
        // The held schema's own migrations wait for the lock, then run.
        const waiting = yield* Effect.provideService(
          runMigrations,
          SqlClient.SqlClient,
          yield* otherHost(held)
        ).pipe(Effect.fork)
        yield* Effect.sleep("500 millis")
        assert.isTrue(Option.isNone(yield* Fiber.poll(waiting)))
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holding)
        assert.strictEqual((yield* Fiber.join(waiting)).length, Object.keys(migrationScripts).length)
      }),
    120_000
  )
})

describe("a new schema on PostgreSQL, hosts starting together", () => {
  it.scoped("every client comes up when several create the schema at once", () =>
    Effect.gen(function* () {
      for (let round = 0; round < 5; round++) {
        const schema = randomTestSchema()
        // The first one drops the schema at the end; the others race it to create it.
        const clients = yield* Effect.all(
          [firstHost(schema), otherHost(schema), otherHost(schema), otherHost(schema)],
          { concurrency: "unbounded" }
        )
        const found =
          yield* clients[3]!`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = ${schema}`
        assert.strictEqual((found[0] as { n: number }).n, 1)
      }
    })
  )
})

import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { type DatabaseConfig, makeDatabaseLayer, ping } from "../../src/storage/Database.js"
import { migrationScripts, migrationsTable } from "../../src/storage/Migrations.js"
import type { PgliteClient } from "../../src/storage/PgliteClient.js"
import { pgliteTestClientLayer } from "../support/TestDatabases.js"
import { t0 } from "./storageFixtures.js"

const temporaryDirectory = Effect.acquireRelease(
  Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "rfq-pglite-"))),
  (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
)

const open = (config: DatabaseConfig, scope: Scope.Scope) =>
  Effect.map(Layer.buildWithScope(makeDatabaseLayer(config), scope), (context) => {
    const sql = Context.get(context, SqlClient.SqlClient)
    return { sql, pglite: (sql as PgliteClient).session }
  })

const desks = (sql: SqlClient.SqlClient) =>
  Effect.map(sql<{ name: string }>`SELECT name FROM desks ORDER BY name`, (rows) => rows.map((r) => r.name))

const waitUntilSuspended = <A, E>(fiber: Fiber.RuntimeFiber<A, E>) =>
  Effect.yieldNow().pipe(
    Effect.zipRight(Fiber.status(fiber)),
    Effect.repeat({ until: (status) => status._tag !== "Running" })
  )

describe("PGlite data directory", () => {
  it.scoped(
    "starts empty, migrates, closes after the transaction in flight, and reopens with the committed data",
    () =>
      Effect.gen(function* () {
        // A directory that does not exist yet, as on a first start.
        const config: DatabaseConfig = {
          kind: "pglite",
          dataDir: path.join(yield* temporaryDirectory, "pglite")
        }

        const firstScope = yield* Scope.make()
        const first = yield* open(config, firstScope)
        yield* Effect.provideService(ping, SqlClient.SqlClient, first.sql)
        yield* first.sql`INSERT INTO desks (name, created_at) VALUES ('committed', ${t0})`
        yield* Effect.exit(
          first.sql.withTransaction(
            Effect.zipRight(
              first.sql`INSERT INTO desks (name, created_at) VALUES ('rolled back', ${t0})`,
              Effect.fail("no")
            )
          )
        )
        // Close while a transaction is open: closing waits for it instead of cutting it off.
        const inserted = yield* Deferred.make<void>()
        const finish = yield* Deferred.make<void>()
        const transaction = yield* Effect.fork(
          first.sql.withTransaction(
            Effect.gen(function* () {
              yield* first.sql`INSERT INTO desks (name, created_at) VALUES ('in flight', ${t0})`
              yield* Deferred.succeed(inserted, undefined)
              yield* Deferred.await(finish)
            })
          )
        )
        yield* Deferred.await(inserted)
        const closing = yield* Effect.fork(Scope.close(firstScope, Exit.void))
        yield* waitUntilSuspended(closing)
        assert.isFalse(first.pglite.closed)
        yield* Deferred.succeed(finish, undefined)
        yield* Fiber.join(transaction)
        yield* Fiber.join(closing)
        assert.isTrue(first.pglite.closed)

        const second = yield* open(config, yield* Effect.scope)
        assert.deepStrictEqual(yield* desks(second.sql), ["committed", "in flight"])
        const [migrations] = yield* second.sql`SELECT count(*) AS n FROM ${second.sql(migrationsTable)}`
        assert.strictEqual(migrations!.n, Object.keys(migrationScripts).length)
        const [next] = yield* second.sql<{ id: number }>`
          INSERT INTO desks (name, created_at) VALUES ('after reopen', ${t0}) RETURNING id`
        // Identity sequences continue where they were; nothing is handed out twice.
        assert.isAbove(next!.id, 3)
      }),
    180_000
  )

  it.scoped(
    "the test client starts an empty directory from the migrated snapshot and reopens it as is",
    () =>
      Effect.gen(function* () {
        const dataDir = yield* temporaryDirectory
        const insert = Effect.flatMap(SqlClient.SqlClient, (sql) =>
          Effect.map(
            sql<{ id: number }>`INSERT INTO desks (name, created_at) VALUES ('kept', ${t0}) RETURNING id`,
            (rows) => rows[0]!.id
          )
        )
        const id = yield* insert.pipe(Effect.provide(pgliteTestClientLayer(dataDir)))
        const names = yield* Effect.flatMap(SqlClient.SqlClient, desks).pipe(
          Effect.provide(pgliteTestClientLayer(dataDir))
        )
        assert.deepStrictEqual(names, ["kept"])
        assert.strictEqual(id, 1)
      }),
    180_000
  )
})

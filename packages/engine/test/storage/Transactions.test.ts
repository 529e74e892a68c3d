import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, layer } from "@effect/vitest"
import { Chunk, Deferred, Effect, Exit, Fiber, Stream } from "effect"
import { testDatabases, testDatabaseTimeout } from "../support/TestDatabases.js"
import { t0, unique } from "./storageFixtures.js"

class Boom {
  readonly _tag = "Boom"
}

const deskNamed = (name: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`INSERT INTO desks (name, created_at) VALUES (${name}, ${t0})`
  )

const desksNamed = (prefix: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ name: string }>`SELECT name FROM desks WHERE name LIKE ${`${prefix}%`} ORDER BY name`,
      (rows) => rows.map((r) => r.name)
    )
  )

describe.each(testDatabases)("transactions on $name", ({ layer: database }) => {
  layer(database, { timeout: testDatabaseTimeout })((it) => {
    it.effect("commit on success", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const prefix = unique("commit")
        const result = yield* sql.withTransaction(
          Effect.zipRight(Effect.all([deskNamed(`${prefix}-a`), deskNamed(`${prefix}-b`)]), Effect.succeed(7))
        )
        assert.strictEqual(result, 7)
        assert.deepStrictEqual(yield* desksNamed(prefix), [`${prefix}-a`, `${prefix}-b`])
      })
    )

    it.effect("rollback on failure, on a database error and on a defect", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const prefix = unique("rollback")
        const failed = yield* Effect.exit(
          sql.withTransaction(Effect.zipRight(deskNamed(`${prefix}-a`), Effect.fail(new Boom())))
        )
        assert.isTrue(Exit.isFailure(failed))
        // The second insert violates desks_name_key: the first must go with it.
        const conflict = yield* Effect.exit(
          sql.withTransaction(Effect.zipRight(deskNamed(`${prefix}-b`), deskNamed(`${prefix}-b`)))
        )
        assert.isTrue(Exit.isFailure(conflict))
        const died = yield* Effect.exit(
          sql.withTransaction(Effect.zipRight(deskNamed(`${prefix}-c`), Effect.die("bug")))
        )
        assert.isTrue(Exit.isFailure(died))
        assert.deepStrictEqual(yield* desksNamed(prefix), [])
        // The connection is usable afterwards.
        yield* deskNamed(`${prefix}-d`)
        assert.deepStrictEqual(yield* desksNamed(prefix), [`${prefix}-d`])
      })
    )

    it.effect("a nested transaction is a savepoint: its failure rolls back only its own work", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const prefix = unique("nested")
        yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* deskNamed(`${prefix}-outer`)
            const inner = yield* Effect.exit(
              sql.withTransaction(Effect.zipRight(deskNamed(`${prefix}-inner`), Effect.fail(new Boom())))
            )
            assert.isTrue(Exit.isFailure(inner))
            yield* sql.withTransaction(deskNamed(`${prefix}-kept`))
          })
        )
        assert.deepStrictEqual(yield* desksNamed(prefix), [`${prefix}-kept`, `${prefix}-outer`])
      })
    )

    it.effect("an interrupted transaction rolls back and frees the connection", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const prefix = unique("interrupted")
        const inserted = yield* Deferred.make<void>()
        const fiber = yield* Effect.fork(
          sql.withTransaction(
            Effect.zipRight(
              Effect.zipRight(deskNamed(`${prefix}-a`), Deferred.succeed(inserted, undefined)),
              Effect.never
            )
          )
        )
        yield* Deferred.await(inserted)
        yield* Fiber.interrupt(fiber)
        assert.deepStrictEqual(yield* desksNamed(prefix), [])
      })
    )

    it.effect("statements outside a transaction never see another fiber's uncommitted rows", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const prefix = unique("isolated")
        const inserted = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const writer = yield* Effect.fork(
          sql.withTransaction(
            Effect.gen(function* () {
              yield* deskNamed(`${prefix}-uncommitted`)
              yield* Deferred.succeed(inserted, undefined)
              yield* Deferred.await(release)
              return yield* Effect.fail(new Boom())
            })
          )
        )
        yield* Deferred.await(inserted)
        const reader = yield* Effect.fork(desksNamed(prefix))
        // Let the reader reach the database (PGlite: queue behind the transaction) before releasing.
        yield* Effect.yieldNow().pipe(
          Effect.zipRight(Fiber.status(reader)),
          Effect.repeat({ until: (status) => status._tag !== "Running" })
        )
        yield* Deferred.succeed(release, undefined)
        assert.isTrue(Exit.isFailure(yield* Fiber.await(writer)))
        assert.deepStrictEqual(yield* Fiber.join(reader), [])
      })
    )

    it.effect("concurrent read-modify-write transactions do not lose updates", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const name = unique("counter")
        const [desk] = yield* sql<{
          id: number
        }>`INSERT INTO desks (name, created_at) VALUES (${name}, 0) RETURNING id`
        const increment = sql.withTransaction(
          Effect.gen(function* () {
            const [row] = yield* sql<{
              created_at: number
            }>`SELECT created_at FROM desks WHERE id = ${desk!.id} FOR UPDATE`
            yield* Effect.yieldNow()
            yield* sql`UPDATE desks SET created_at = ${row!.created_at + 1} WHERE id = ${desk!.id}`
          })
        )
        const workers = 4
        const rounds = 5
        yield* Effect.all(
          Array.from({ length: workers }, () => Effect.repeatN(increment, rounds - 1)),
          {
            concurrency: "unbounded"
          }
        )
        const [final] = yield* sql<{
          created_at: number
        }>`SELECT created_at FROM desks WHERE id = ${desk!.id}`
        assert.strictEqual(final!.created_at, workers * rounds)
      })
    )

    it.effect("executeValues, executeRaw and streams answer like queries", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const prefix = unique("apis")
        yield* deskNamed(`${prefix}-1`)
        yield* deskNamed(`${prefix}-2`)
        const values =
          yield* sql`SELECT name, 1 AS one FROM desks WHERE name LIKE ${`${prefix}%`} ORDER BY name`.values
        assert.deepStrictEqual(values, [
          [`${prefix}-1`, 1],
          [`${prefix}-2`, 1]
        ])
        const streamed = yield* Stream.runCollect(
          sql`SELECT name FROM desks WHERE name LIKE ${`${prefix}%`} ORDER BY name`.stream
        )
        assert.deepStrictEqual(Chunk.toReadonlyArray(streamed), [
          { name: `${prefix}-1` },
          { name: `${prefix}-2` }
        ])
        const raw = yield* sql`SELECT count(*) AS n FROM desks WHERE name LIKE ${`${prefix}%`}`.raw
        assert.deepStrictEqual((raw as { rows: ReadonlyArray<unknown> }).rows, [{ n: 2 }])
        const script = yield* sql.unsafe("SELECT 1 AS a; SELECT 2 AS b")
        assert.deepStrictEqual(script, [[{ a: 1 }], [{ b: 2 }]])
      })
    )
  })
})

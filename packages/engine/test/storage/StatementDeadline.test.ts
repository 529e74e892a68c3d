import { createRequire } from "node:module"
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Fiber, Layer, type Scope } from "effect"
import * as PgliteClient from "../../src/storage/PgliteClient.js"
import * as PostgresClient from "../../src/storage/PostgresClient.js"
import {
  isDeadlineExceeded,
  withRequestBudget,
  withStatementDeadline
} from "../../src/storage/StatementDeadline.js"
import { randomTestSchema, testPostgresUrl } from "../support/TestDatabases.js"

/**
 * Every statement has a deadline, on both clients, and a statement that passed it never lands
 * later. On PostgreSQL the stall is a row lock held by another session: the server is up but the
 * statement does not finish, which is what a stalled server looks like from the client.
 */

interface RawClient {
  connect(): Promise<void>
  query(text: string, params?: Array<unknown>): Promise<{ rows: Array<any> }>
  end(): Promise<void>
}
const pg = createRequire(import.meta.url)("pg") as {
  Client: new (config: { connectionString: string; options?: string }) => RawClient
}

const DEADLINE_MS = 500

const failedByDeadline = <A, E>(exit: Exit.Exit<A, E>): boolean =>
  Exit.isFailure(exit) &&
  [...Cause.failures(exit.cause), ...Cause.defects(exit.cause)].some((e) => isDeadlineExceeded(e))

/** A session of its own that holds the row lock of `stall_probe` row 1 until `release`. */
const holdRowLock = (schema: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const holder = new pg.Client({ connectionString: testPostgresUrl, options: `-c search_path=${schema}` })
      await holder.connect()
      await holder.query("BEGIN")
      await holder.query("UPDATE stall_probe SET v = 1 WHERE id = 1")
      return holder
    }),
    // Already committed and closed when the test released it.
    (holder) =>
      Effect.promise(() =>
        holder
          .query("ROLLBACK")
          .then(() => holder.end())
          .catch(() => undefined)
      )
  )

const commitAndClose = (holder: RawClient) =>
  Effect.promise(() => holder.query("COMMIT").then(() => holder.end()))

const probeValue = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ v: number }>`SELECT v FROM stall_probe WHERE id = 1`, (rows) => rows[0]!.v)
)

const postgresWithDeadline = (schema: string) =>
  Layer.provideMerge(
    PostgresClient.layer({ url: testPostgresUrl, schema, maxConnections: 3, queryTimeoutMs: DEADLINE_MS }),
    Layer.scopedDiscard(
      Effect.addFinalizer(() =>
        Effect.promise(async () => {
          const admin = new pg.Client({ connectionString: testPostgresUrl })
          await admin.connect()
          await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
          await admin.end()
        })
      )
    )
  )

const withProbeTable = <A, E>(
  body: (schema: string) => Effect.Effect<A, E, SqlClient.SqlClient | Scope.Scope>
) => {
  const schema = randomTestSchema()
  return Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE stall_probe (id int PRIMARY KEY, v int NOT NULL)`
    yield* sql`INSERT INTO stall_probe VALUES (1, 0)`
    return yield* body(schema)
  }).pipe(Effect.provide(postgresWithDeadline(schema)), Effect.scoped)
}

describe("statement deadline on PostgreSQL", () => {
  it.live(
    "a stalled write fails at its deadline and never lands afterwards, even when its lock is released",
    () =>
      withProbeTable((schema) =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const holder = yield* holdRowLock(schema)
          const started = Date.now()
          const exit = yield* Effect.exit(sql`UPDATE stall_probe SET v = 2 WHERE id = 1`)
          const waited = Date.now() - started
          assert.isTrue(failedByDeadline(exit), `expected a deadline failure, got ${String(exit)}`)
          assert.isAtLeast(waited, DEADLINE_MS - 50)
          // The next statement settles the abandoned one first: its backend is gone, so releasing
          // the lock cannot let the update through any more.
          assert.strictEqual(yield* probeValue, 0)
          yield* commitAndClose(holder)
          yield* Effect.sleep("300 millis")
          assert.strictEqual(yield* probeValue, 1)
          const waiting = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE query LIKE 'UPDATE stall_probe%' AND pid <> pg_backend_pid()`
          assert.strictEqual(waiting[0]!.n, 0)
        })
      ),
    30_000
  )

  it.live(
    "two statements at once on one reserved connection run one after the other, and the second, stalled, is fenced like any",
    () =>
      withProbeTable((schema) =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const holder = yield* holdRowLock(schema)
          // A connection held for several statements (as the cluster holds its shard lock
          // connection), given a quick read and then a write that stalls behind the row lock.
          const [read, write] = yield* Effect.scoped(
            Effect.flatMap(sql.reserve, (connection) =>
              Effect.all(
                [
                  Effect.exit(connection.execute("SELECT 1 AS n", [], undefined)),
                  Effect.exit(connection.execute("UPDATE stall_probe SET v = 2 WHERE id = 1", [], undefined))
                ],
                { concurrency: "unbounded" }
              )
            )
          )
          assert.isTrue(Exit.isSuccess(read))
          assert.isTrue(failedByDeadline(write), `expected a deadline failure, got ${String(write)}`)
          // The stalled write was on the wire when it was abandoned: its backend is settled before
          // the next statement, so the lock's release cannot let it through any more.
          assert.strictEqual(yield* probeValue, 0)
          yield* commitAndClose(holder)
          yield* Effect.sleep("300 millis")
          assert.strictEqual(yield* probeValue, 1)
        })
      ),
    30_000
  )

  it.live(
    "abandoned connections do not poison the pool: more statements than connections all succeed after",
    () =>
      withProbeTable((schema) =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const holder = yield* holdRowLock(schema)
          // Every connection of the pool (3) stalls at once.
          const stalled = yield* Effect.all(
            Array.from({ length: 3 }, () => Effect.exit(sql`UPDATE stall_probe SET v = 3 WHERE id = 1`)),
            { concurrency: "unbounded" }
          )
          assert.isTrue(stalled.every(failedByDeadline))
          const answers = yield* Effect.all(
            Array.from({ length: 12 }, (_, i) =>
              Effect.map(sql<{ n: number }>`SELECT ${i}::int AS n`, (r) => r[0]!.n)
            ),
            { concurrency: "unbounded" }
          )
          assert.deepStrictEqual(
            answers,
            Array.from({ length: 12 }, (_, i) => i)
          )
          yield* commitAndClose(holder)
          yield* Effect.sleep("300 millis")
          assert.strictEqual(yield* probeValue, 1)
        })
      ),
    30_000
  )

  it.live(
    "the deadline holds inside a transaction, whose commit and rollback run uninterruptibly",
    () =>
      withProbeTable((schema) =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const holder = yield* holdRowLock(schema)
          const started = Date.now()
          const exit = yield* Effect.exit(
            sql.withTransaction(
              Effect.zipRight(
                sql`INSERT INTO stall_probe VALUES (2, 2)`,
                sql`UPDATE stall_probe SET v = 4 WHERE id = 1`
              )
            )
          )
          assert.isTrue(failedByDeadline(exit))
          assert.isBelow(Date.now() - started, 3 * DEADLINE_MS)
          yield* commitAndClose(holder)
          yield* Effect.sleep("300 millis")
          const rows = yield* sql<{ id: number; v: number }>`SELECT id, v FROM stall_probe ORDER BY id`
          assert.deepStrictEqual(
            rows.map((r) => [r.id, r.v]),
            [[1, 1]]
          )
        })
      ),
    30_000
  )

  it.live("a fiber may widen the deadline for work that is slow by nature", () =>
    withProbeTable(() =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const slow = sql`SELECT pg_sleep(0.8)`
        assert.isTrue(failedByDeadline(yield* Effect.exit(slow)))
        assert.isTrue(Exit.isSuccess(yield* Effect.exit(withStatementDeadline("5 seconds")(slow))))
      })
    )
  )

  it.live("a request's statements share one budget: what was spent waiting is not given again", () =>
    withProbeTable(() =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const shortSleep = sql`SELECT pg_sleep(0.3)`
        // Alone, the statement is well inside its deadline (500 ms) …
        assert.isTrue(Exit.isSuccess(yield* Effect.exit(withRequestBudget(shortSleep))))
        // … but a request that already spent 1.35 s of its 1.5 s (deadline + slack) has 150 ms left.
        const late = yield* Effect.exit(
          withRequestBudget(Effect.zipRight(Effect.sleep("1350 millis"), shortSleep))
        )
        assert.isTrue(failedByDeadline(late))
        // Spent entirely: refused at once, nothing sent.
        const started = Date.now()
        const spent = yield* Effect.exit(
          withRequestBudget(Effect.zipRight(Effect.sleep("1600 millis"), sql`SELECT 1`))
        )
        assert.isTrue(failedByDeadline(spent))
        assert.isBelow(Date.now() - started, 1600 + 200)
      })
    )
  )

  it.live(
    "a restarted service ends the sessions its previous process left, and no one else's",
    () =>
      withProbeTable((schema) =>
        Effect.gen(function* () {
          const exclusive = () =>
            Effect.map(
              Layer.build(
                PostgresClient.layer({
                  url: testPostgresUrl,
                  schema,
                  queryTimeoutMs: DEADLINE_MS,
                  exclusive: true
                })
              ),
              (context) => Context.get(context, SqlClient.SqlClient)
            )
          const holder = yield* holdRowLock(schema)
          // The previous process: its update waits on the lock, as one caught by a stall would.
          const previous = yield* exclusive()
          const stuck = yield* Effect.fork(
            withStatementDeadline("60 seconds")(previous`UPDATE stall_probe SET v = 5 WHERE id = 1`)
          )
          yield* Effect.sleep("200 millis")
          yield* exclusive()
          const exit = yield* Fiber.await(stuck)
          assert.isTrue(Exit.isFailure(exit), "the previous process's statement was ended")
          // The lock holder is not the service's: it is left alone and commits.
          yield* commitAndClose(holder)
          yield* Effect.sleep("300 millis")
          assert.strictEqual(yield* probeValue, 1)
        })
      ),
    30_000
  )

  it.live("an unreachable server fails the client's start within the deadline", () =>
    Effect.gen(function* () {
      const started = Date.now()
      const exit = yield* Effect.exit(
        Effect.scoped(
          Layer.build(
            PostgresClient.layer({ url: "postgres://postgres@127.0.0.1:1/test", queryTimeoutMs: 500 })
          )
        )
      )
      assert.isTrue(Exit.isFailure(exit))
      assert.isBelow(Date.now() - started, 5000)
    })
  )
})

describe("statement deadline on PGlite", () => {
  it.live(
    "a statement waiting for the session behind a transaction that does not end fails at the deadline",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const release = yield* Effect.makeLatch(false)
        const transaction = yield* Effect.fork(
          sql.withTransaction(Effect.zipRight(sql`SELECT 1`, release.await))
        )
        yield* Effect.sleep("50 millis")
        const started = Date.now()
        const exit = yield* Effect.exit(sql`SELECT 2 AS n`)
        assert.isTrue(failedByDeadline(exit))
        assert.isAtLeast(Date.now() - started, 250)
        yield* release.open
        assert.isTrue(Exit.isSuccess(yield* Fiber.await(transaction)))
        // Many waiters with deadlines that expire while they wait: no permit is lost.
        const blocker = yield* Effect.makeLatch(false)
        const held = yield* Effect.fork(sql.withTransaction(blocker.await))
        yield* Effect.sleep("20 millis")
        const waiters = yield* Effect.all(
          Array.from({ length: 20 }, (_, i) =>
            Effect.exit(withStatementDeadline(`${i * 10} millis`)(sql`SELECT ${i}::int AS n`))
          ),
          { concurrency: "unbounded" }
        )
        yield* blocker.open
        yield* Fiber.join(held)
        assert.isTrue(waiters.every(failedByDeadline))
        const after = yield* Effect.all(
          Array.from({ length: 5 }, (_, i) =>
            Effect.map(sql<{ n: number }>`SELECT ${i}::int AS n`, (r) => r[0]!.n)
          ),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(after, [0, 1, 2, 3, 4])
      }).pipe(Effect.provide(PgliteClient.layer({ dataDir: "memory://", queryTimeoutMs: 300 }))),
    60_000
  )
})

import { spawnSync } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, Scope } from "effect"
import * as PgliteClient from "../../src/storage/PgliteClient.js"
import { ping } from "../../src/storage/Database.js"
import { openWorkerSession, type WorkerSession, workerFlags } from "../../src/storage/PgliteWorker.js"
import { isDatabaseUnreachable } from "../../src/storage/SqlErrors.js"

/**
 * PGlite on a thread of its own (`PgliteWorker.ts`): the same answers as on the caller's thread,
 * statements of many fibers in flight together without ever entering another fiber's
 * transaction, the caller's event loop free while a statement runs, every acknowledged write kept
 * across a close, and a thread that stops seen as a database that is not reachable.
 */

const open = (thread: "own" | "caller", dataDir = "memory://") =>
  PgliteClient.make({ dataDir, thread }).pipe(Effect.provide(Reactivity.layer))

const schema = `
  CREATE TABLE t (id int PRIMARY KEY, label text, amount numeric, big bigint, doc jsonb);
  CREATE UNIQUE INDEX t_label_key ON t (label)`

/** Every kind of answer the engine reads: rows, arrays of values, a script's results, a refusal. */
const answers = (sql: SqlClient.SqlClient) =>
  Effect.gen(function* () {
    yield* sql.unsafe(schema)
    const insert =
      "INSERT INTO t (id, label, amount, big, doc) VALUES ($1, $2, $3, $4, $5::jsonb) RETURNING *"
    const inserted = []
    for (let i = 1; i <= 3; i++)
      inserted.push(...(yield* sql.unsafe(insert, [i, `l${i}`, "12.50", "9007199254740993", { i, s: "é" }])))
    // Hostile text crosses as PGlite would take it on the caller's thread: a lone surrogate,
    // right-to-left marks, a quote, a long value; a NUL is refused, and so it is on both.
    for (const [i, text] of ["\ud800", "\u202e\u2066'; DROP TABLE t; --", "x".repeat(10_000)].entries())
      inserted.push(...(yield* sql.unsafe(insert, [10 + i, text, "0", "0", { i, length: text.length }])))
    const nul = yield* Effect.flip(sql.unsafe(insert, [20, "a\u0000b", "0", "0", {}]))
    const values = yield* sql.unsafe("SELECT id, big FROM t WHERE id >= $1 AND id < $2 ORDER BY id", [2, 10])
      .values
    const script = yield* sql.unsafe("SELECT 1 AS a; SELECT 'x' AS b")
    const refused = yield* Effect.flip(sql.unsafe(insert, [9, "l1", "1", "1", {}]))
    const cause = refused.cause as { code?: unknown; constraint?: unknown; message?: unknown }
    const nulCause = nul.cause as { code?: unknown; message?: unknown }
    return {
      inserted,
      values,
      script,
      refusal: { code: cause.code, constraint: cause.constraint, message: cause.message },
      nul: { code: nulCause.code, message: nulCause.message }
    }
  })

describe("PGlite on its own thread", () => {
  it.scoped("answers rows, values, scripts and refusals exactly as on the caller's thread", () =>
    Effect.gen(function* () {
      const own = yield* answers(yield* open("own"))
      const caller = yield* answers(yield* open("caller"))
      assert.deepStrictEqual(own, caller)
      assert.strictEqual(own.refusal.code, "23505")
      assert.strictEqual(own.refusal.constraint, "t_label_key")
      assert.deepStrictEqual(own.values, [
        [2, 9007199254740993n],
        [3, 9007199254740993n]
      ])
    })
  )

  it.scopedLive(
    "statements of many fibers are in flight together, and none enters another fiber's transaction",
    () =>
      Effect.gen(function* () {
        const sql = yield* open("own")
        yield* sql.unsafe(schema)
        const order: Array<string> = []
        // A transaction that writes, waits, and rolls back; meanwhile 100 fibers write outside it.
        const transaction = yield* sql
          .withTransaction(
            Effect.gen(function* () {
              yield* sql.unsafe("INSERT INTO t (id, label) VALUES ($1, $2)", [0, "in the transaction"])
              yield* Effect.sleep("100 millis")
              const seen = yield* sql.unsafe<{ n: string }>("SELECT count(*)::text AS n FROM t")
              order.push(`transaction saw ${seen[0]!.n}`)
              return yield* Effect.fail("roll back" as const)
            })
          )
          .pipe(Effect.flip, Effect.fork)
        yield* Effect.sleep("20 millis")
        const writers = yield* Effect.forEach(
          Array.from({ length: 100 }, (_, i) => i + 1),
          (id) =>
            sql
              .unsafe("INSERT INTO t (id, label) VALUES ($1, $2)", [id, `w${id}`])
              .pipe(Effect.tap(() => Effect.sync(() => order.push(`writer ${id}`)))),
          { concurrency: "unbounded" }
        ).pipe(Effect.fork)
        assert.strictEqual(yield* Fiber.join(transaction), "roll back")
        yield* Fiber.join(writers)
        // The transaction saw only its own row; every writer was answered after it ended.
        assert.strictEqual(order[0], "transaction saw 1")
        assert.strictEqual(order.length, 101)
        const rows = yield* sql.unsafe<{ id: number }>("SELECT id FROM t ORDER BY id")
        assert.deepStrictEqual(
          rows.map((r) => r.id),
          Array.from({ length: 100 }, (_, i) => i + 1)
        )
      })
  )

  it.scoped("the caller's event loop keeps running while a long statement runs", () =>
    Effect.gen(function* () {
      const ticksDuring = (sql: SqlClient.SqlClient) =>
        Effect.gen(function* () {
          let ticks = 0
          const timer = setInterval(() => ticks++, 5)
          yield* sql.unsafe("SELECT count(*) FROM generate_series(1, $1::int) AS g", [3_000_000])
          clearInterval(timer)
          return ticks
        })
      const own = yield* ticksDuring(yield* open("own"))
      const caller = yield* ticksDuring(yield* open("caller"))
      // On the caller's thread the statement holds the loop: at most the tick due when it ends.
      assert.isAtMost(caller, 1)
      assert.isAtLeast(own, 5)
    })
  )

  it.effect("every acknowledged write survives a close that comes while writes are in flight", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "rfq-pglite-worker-")))
      try {
        const scope = yield* Scope.make()
        const sql = yield* open("own", dir).pipe(Scope.extend(scope))
        yield* sql.unsafe("CREATE TABLE w (id int PRIMARY KEY)")
        const writes = yield* Effect.forEach(
          Array.from({ length: 200 }, (_, i) => i),
          (id) => Effect.exit(sql.unsafe("INSERT INTO w (id) VALUES ($1)", [id])).pipe(Effect.fork)
        )
        yield* Effect.yieldNow()
        yield* Scope.close(scope, Exit.void)
        const outcomes = yield* Effect.forEach(writes, Fiber.join)
        const acknowledged = outcomes.flatMap((exit, id) => (Exit.isSuccess(exit) ? [id] : []))
        assert.isAbove(acknowledged.length, 0)
        const reopened = yield* Effect.scoped(
          Effect.flatMap(open("own", dir), (again) =>
            again.unsafe<{ id: number }>("SELECT id FROM w ORDER BY id")
          )
        )
        assert.deepStrictEqual(
          reopened.map((r) => r.id),
          acknowledged
        )
      } finally {
        yield* Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
      }
    })
  )

  it.effect("a thread that stops fails its statements as a database that is not reachable", () =>
    Effect.gen(function* () {
      const session = yield* Effect.promise(() => openWorkerSession({ dataDir: "memory://" }))
      const before = yield* Effect.promise(() => session.query("SELECT $1::int AS n", [1], {}))
      assert.deepStrictEqual(before.rows, [{ n: 1 }])
      yield* Effect.promise(() => session.stopThread())
      assert.isTrue(session.closed)
      const error = yield* Effect.flip(Effect.tryPromise(() => session.query("SELECT $1::int AS n", [2], {})))
      const failure = new SqlError({ cause: error.error, message: "Failed to execute statement" })
      assert.match(String((error.error as Error).message), /Connection terminated: the PGlite thread stopped/)
      assert.isTrue(isDatabaseUnreachable(Cause.fail(failure)))
    })
  )

  it.scoped(
    "a client whose thread stopped answers the readiness probe as a database that is not reachable",
    () =>
      Effect.gen(function* () {
        const client = yield* open("own")
        yield* ping.pipe(Effect.provideService(SqlClient.SqlClient, client))
        yield* Effect.promise(() => (client.session as WorkerSession).stopThread())
        const failed = yield* Effect.exit(ping.pipe(Effect.provideService(SqlClient.SqlClient, client)))
        assert.isTrue(Exit.isFailure(failed))
        if (Exit.isFailure(failed)) assert.isTrue(isDatabaseUnreachable(failed.cause))
      })
  )

  it("an idle open session does not keep the process alive", { timeout: 60_000 }, () => {
    const root = path.resolve(fileURLToPath(import.meta.url), "../../../../..")
    const entry = path.join(root, "packages/engine/src/storage/PgliteWorker.ts")
    const script = `import(${JSON.stringify(entry)}).then((m) => m.openWorkerSession({ dataDir: "memory://" })).then(() => console.log("open"))`
    const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "--eval", script], {
      cwd: root,
      encoding: "utf8",
      timeout: 50_000
    })
    assert.strictEqual(run.stdout.trim(), "open", run.stderr)
    assert.strictEqual(run.status, 0, run.stderr)
  })
})

describe("the worker's flags", () => {
  it("keeps module resolution, source maps and profiling, with their values, and nothing else", () => {
    assert.deepStrictEqual(
      workerFlags([
        "--conditions",
        "source",
        "--import",
        "tsx",
        "--input-type=module",
        "--conditions=development",
        "--enable-source-maps",
        "--cpu-prof",
        "--cpu-prof-dir",
        "/tmp/p",
        "--max-semi-space-size=64"
      ]),
      [
        "--conditions",
        "source",
        "--conditions=development",
        "--enable-source-maps",
        "--cpu-prof",
        "--cpu-prof-dir",
        "/tmp/p"
      ]
    )
  })
})

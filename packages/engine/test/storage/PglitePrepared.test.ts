import type * as SqlClient from "@effect/sql/SqlClient"
import { PGlite } from "@electric-sql/pglite"
import { afterEach, assert, beforeEach, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as Reactivity from "@effect/experimental/Reactivity"
import { fromPglite } from "../../src/storage/PgliteClient.js"
import { preparedOf } from "../../src/storage/PglitePrepared.js"
import { pgliteParsers } from "../../src/storage/SqlTypes.js"

/**
 * Named statements on a PGlite session (`PglitePrepared.ts`): every answer is the one PGlite's own
 * `query` gives for the same text and parameters, before and after the text is named, failures
 * included, and the session's state stays what the client believes it is.
 */

let db: PGlite
beforeEach(async () => {
  db = await PGlite.create("memory://", { parsers: pgliteParsers })
  await db.exec(`
    CREATE TABLE t (id int PRIMARY KEY, label text, amount numeric, big bigint, doc jsonb, at timestamptz);
    CREATE UNIQUE INDEX t_label_key ON t (label)`)
})
afterEach(async () => {
  await db.close()
})

const insert = "INSERT INTO t (id, label, amount, big, doc) VALUES ($1, $2, $3, $4, $5::jsonb) RETURNING *"
const named = async () =>
  (await db.query<{ name: string; statement: string }>("SELECT name, statement FROM pg_prepared_statements"))
    .rows

/** `SELECT *` run twice (so named), then the table gains a column: the named statement's result changed shape. */
const namedThenAltered = async () => {
  const prepared = preparedOf(db)
  const all = "SELECT * FROM t WHERE id = $1"
  await db.query("INSERT INTO t (id, label) VALUES (1, 'a')")
  await prepared.query(all, [1], {})
  await prepared.query(all, [1], {})
  await db.exec("ALTER TABLE t ADD COLUMN extra text DEFAULT 'x'")
  return { prepared, all }
}

describe("named statements on PGlite", () => {
  it("a text is named the second time it runs, and every run answers as PGlite's query does", async () => {
    const prepared = preparedOf(db)
    const rows = []
    for (let i = 1; i <= 4; i++) {
      const params = [
        i,
        `l${i}`,
        "12.50",
        "9007199254740993",
        JSON.stringify({ i, s: "é\u0000".slice(0, 1) })
      ]
      const ours = await prepared.query(insert, params, {})
      rows.push(ours.rows[0])
      assert.strictEqual(ours.affectedRows, 1)
    }
    assert.deepStrictEqual(rows[3], {
      id: 4,
      label: "l4",
      amount: "12.50",
      big: 9007199254740993n,
      doc: { i: 4, s: "é" },
      at: null
    })
    // The same read through both paths: PGlite's query and the named statement.
    const read = "SELECT id, label, amount, big, doc FROM t WHERE id = ANY($1::int[]) ORDER BY id"
    const plain = await db.query(read, [[1, 2, 3, 4]])
    await prepared.query(read, [[1, 2, 3, 4]], {})
    assert.deepStrictEqual((await prepared.query(read, [[1, 2, 3, 4]], {})).rows, plain.rows)
    assert.deepStrictEqual(
      (await prepared.query(read, [[2, 3]], { rowMode: "array" })).rows,
      (await db.query(read, [[2, 3]], { rowMode: "array" })).rows
    )
    assert.sameMembers(
      (await named()).map((s) => s.statement),
      [insert, read]
    )
  })

  it("null and undefined parameters are SQL nulls; parameters keep their own values run after run", async () => {
    const prepared = preparedOf(db)
    for (const [i, label] of [
      [1, null],
      [2, undefined],
      [3, "x"]
    ] as const)
      await prepared.query("INSERT INTO t (id, label) VALUES ($1, $2)", [i, label], {})
    const rows = (await db.query("SELECT id, label FROM t ORDER BY id")).rows
    assert.deepStrictEqual(rows, [
      { id: 1, label: null },
      { id: 2, label: null },
      { id: 3, label: "x" }
    ])
  })

  it("a failure carries the server's SQLSTATE and constraint, and the session goes on", async () => {
    const prepared = preparedOf(db)
    await prepared.query(insert, [1, "a", "1", "1", "{}"], {})
    await prepared.query(insert, [2, "b", "1", "1", "{}"], {})
    const failed = await prepared.query(insert, [3, "a", "1", "1", "{}"], {}).catch((e: unknown) => e)
    assert.strictEqual((failed as { code?: unknown }).code, "23505")
    assert.strictEqual((failed as { constraint?: unknown }).constraint, "t_label_key")
    await prepared.query(insert, [3, "c", "1", "1", "{}"], {})
    assert.strictEqual((await db.query<{ n: number }>("SELECT count(*)::int AS n FROM t")).rows[0]!.n, 3)
  })

  it("inside a transaction: a failure aborts it as usual, and the statement survives its rollback", async () => {
    const prepared = preparedOf(db)
    await db.exec("BEGIN")
    await prepared.query(insert, [1, "a", "1", "1", "{}"], {})
    await prepared.query(insert, [2, "b", "1", "1", "{}"], {})
    const failed = await prepared.query(insert, [3, "a", "1", "1", "{}"], {}).catch((e: unknown) => e)
    assert.strictEqual((failed as { code?: unknown }).code, "23505")
    const aborted = await prepared.query(insert, [4, "d", "1", "1", "{}"], {}).catch((e: unknown) => e)
    assert.strictEqual((aborted as { code?: unknown }).code, "25P02")
    await db.exec("ROLLBACK")
    assert.strictEqual((await db.query<{ n: number }>("SELECT count(*)::int AS n FROM t")).rows[0]!.n, 0)
    // Prepared during the rolled-back transaction, still there and still right.
    assert.lengthOf(await named(), 1)
    assert.deepStrictEqual((await prepared.query(insert, [5, "e", "2", "3", "[]"], {})).rows[0]!.id, 5)
  })

  it("a statement deallocated behind its back is prepared again", async () => {
    const prepared = preparedOf(db)
    await prepared.query(insert, [1, "a", "1", "1", "{}"], {})
    await prepared.query(insert, [2, "b", "1", "1", "{}"], {})
    await db.exec("DEALLOCATE ALL")
    assert.lengthOf(await named(), 0)
    assert.strictEqual((await prepared.query(insert, [3, "c", "1", "1", "{}"], {})).rows[0]!.id, 3)
    assert.lengthOf(await named(), 1)
  })

  it("a statement whose result changed shape under it runs unnamed from then on", async () => {
    const { prepared, all } = await namedThenAltered()
    const after = await prepared.query(all, [1], {})
    assert.strictEqual(after.rows[0]!.extra, "x")
    assert.lengthOf(await named(), 0)
    assert.strictEqual((await prepared.query(all, [1], {})).rows[0]!.extra, "x")
  })

  it("inside a transaction, a result that changed shape aborts it and reaches the caller; the text runs unnamed afterwards", async () => {
    const { prepared, all } = await namedThenAltered()
    await db.exec("BEGIN")
    const refused = await prepared.query(all, [1], {}).catch((e: unknown) => e)
    assert.strictEqual((refused as { code?: unknown }).code, "0A000")
    assert.isTrue(db.isInTransaction())
    await db.exec("ROLLBACK")
    assert.strictEqual((await prepared.query(all, [1], {})).rows[0]!.extra, "x")
    assert.lengthOf(await named(), 0)
  })

  it.effect("two clients over one PGlite share its session's names", () =>
    Effect.gen(function* () {
      const first = yield* fromPglite(db).pipe(Effect.provide(Reactivity.layer))
      const second = yield* fromPglite(db).pipe(Effect.provide(Reactivity.layer))
      const run = (sql: SqlClient.SqlClient, id: number) =>
        sql.unsafe("INSERT INTO t (id, label) VALUES ($1, $2) RETURNING id", [id, `l${id}`])
      for (let id = 1; id <= 6; id++) {
        const exit = yield* Effect.exit(run(id % 2 === 0 ? first : second, id))
        assert.isTrue(Exit.isSuccess(exit), `insert ${id}: ${Exit.isFailure(exit) ? exit.cause : ""}`)
      }
      const rows = yield* Effect.promise(() => named())
      assert.lengthOf(rows, 1)
    })
  )
})

import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { PreparedNames } from "../../src/storage/PreparedNames.js"
import { postgresTestClientLayer, testDatabaseTimeout } from "../support/TestDatabases.js"

describe("PreparedNames", () => {
  it("names a text the second time it is seen, and always by the same name", () => {
    const names = new PreparedNames()
    assert.isUndefined(names.nameOf("SELECT $1"))
    const name = names.nameOf("SELECT $1")
    assert.isString(name)
    assert.strictEqual(names.nameOf("SELECT $1"), name)
    assert.isUndefined(names.nameOf("SELECT $1 + 1"))
    const other = names.nameOf("SELECT $1 + 1")
    assert.isString(other)
    assert.notStrictEqual(other, name)
  })

  it("names at most `capacity` texts; later texts stay unnamed, named ones keep their names", () => {
    const names = new PreparedNames(2)
    const twice = (text: string) => {
      names.nameOf(text)
      return names.nameOf(text)
    }
    const a = twice("a")
    const b = twice("b")
    assert.isString(a)
    assert.isString(b)
    assert.isUndefined(twice("c"))
    assert.strictEqual(names.size, 2)
    assert.strictEqual(names.nameOf("a"), a)
    assert.strictEqual(names.nameOf("b"), b)
  })
})

// Named statements on a real server: node-postgres prepares each on a connection once and then only
// binds it, so a repeated text must keep giving the right answers, failures included.
layer(postgresTestClientLayer(), { timeout: testDatabaseTimeout })(
  "prepared statements on PostgreSQL",
  (it) => {
    it.effect("a statement sent many times answers each time with its own parameters", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const answers = yield* Effect.forEach(
          Array.from({ length: 12 }, (_, i) => i),
          (i) => sql<{ n: number }>`SELECT ${i}::int * 2 AS n`,
          { concurrency: 4 }
        )
        assert.deepStrictEqual(
          answers.map((rows) => rows[0]!.n),
          Array.from({ length: 12 }, (_, i) => i * 2)
        )
      })
    )

    it.effect("a named statement that failed runs again, and a failure does not leak into other texts", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE prepared_names_t (id int PRIMARY KEY)`
        const insert = (id: number) => sql`INSERT INTO prepared_names_t (id) VALUES (${id})`
        // The third send is named; it fails on the key, and the same text then works again.
        yield* insert(1)
        yield* insert(2)
        const duplicate = yield* Effect.exit(insert(1))
        assert.isTrue(Exit.isFailure(duplicate))
        yield* insert(3)
        yield* insert(4)
        const rows = yield* sql<{ id: number }>`SELECT id FROM prepared_names_t WHERE id > ${0} ORDER BY id`
        assert.deepStrictEqual(
          rows.map((r) => r.id),
          [1, 2, 3, 4]
        )
      })
    )

    it.effect("statements without parameters (scripts of several statements) still run", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        for (let i = 0; i < 3; i++)
          yield* sql.unsafe("CREATE TABLE IF NOT EXISTS prepared_names_s (x int); SELECT 1")
        const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM prepared_names_s`
        assert.strictEqual(rows[0]!.n, 0)
      })
    )
  }
)

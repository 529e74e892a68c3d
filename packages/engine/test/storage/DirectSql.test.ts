import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Exit } from "effect"
import fc from "fast-check"
import { directRun, placeholders, shiftPlaceholders, StatementShapes } from "../../src/storage/DirectSql.js"
import { testDatabases, testDatabaseTimeout } from "../support/TestDatabases.js"
import { t0, unique } from "./storageFixtures.js"

/** The numbers of a text's placeholders, in order. */
const numbersOf = (text: string): ReadonlyArray<number> =>
  Array.from(text.matchAll(/\$(\d+)/g), (m) => Number(m[1]))

/** The text with every placeholder blanked: what must not change when they are renumbered. */
const skeletonOf = (text: string): string => text.replace(/\$\d+/g, "$#")

/**
 * A statement part: SQL-ish text, placeholders among it (one to three digits), and `$` signs that
 * are not placeholders. Literal pieces never start with a digit, so a placeholder never runs into
 * the text after it.
 */
const literal = fc.oneof(
  fc.string({ unit: fc.constantFrom("a", "x", " ", ",", "(", ")", "'", "=", "$"), maxLength: 8 }),
  fc.tuple(fc.constantFrom("c", "x_"), fc.nat(999)).map(([name, n]) => `${name}${n}`)
)
const placeholder = fc.integer({ min: 1, max: 999 }).map((n) => `$${n}`)
const statementPart = fc
  .array(fc.oneof(literal, placeholder), { maxLength: 16 })
  .map((pieces) => pieces.join(""))
const offset = fc.integer({ min: 0, max: 10_000 })

describe("shiftPlaceholders", () => {
  it("moves every placeholder by the offset and leaves the rest of the text as it was", () => {
    fc.assert(
      fc.property(statementPart, offset, (text, k) => {
        const shifted = shiftPlaceholders(text, k)
        assert.deepStrictEqual(
          numbersOf(shifted),
          numbersOf(text).map((n) => n + k)
        )
        assert.strictEqual(skeletonOf(shifted), skeletonOf(text))
      })
    )
  })

  it("shifting twice is shifting once by the sum", () => {
    fc.assert(
      fc.property(statementPart, offset, offset, (text, a, b) => {
        assert.strictEqual(shiftPlaceholders(shiftPlaceholders(text, a), b), shiftPlaceholders(text, a + b))
      })
    )
  })

  it("offset 0 gives the same text", () => {
    fc.assert(fc.property(statementPart, (text) => assert.strictEqual(shiftPlaceholders(text, 0), text)))
  })

  it("renumbers multi-digit placeholders as whole numbers", () => {
    // $12 is twelve, not $1 followed by "2"; a `$` without digits is not a placeholder.
    assert.strictEqual(
      shiftPlaceholders("SELECT $1, $12, $123 WHERE a = '$' AND b = $$x$$", 9),
      "SELECT $10, $21, $132 WHERE a = '$' AND b = $$x$$"
    )
  })
})

describe("placeholders", () => {
  it("lists `count` consecutive placeholders from `from`, comma separated", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5000 }), fc.nat(60), (from, count) => {
        const text = placeholders(from, count)
        assert.deepStrictEqual(
          numbersOf(text),
          Array.from({ length: count }, (_, i) => from + i)
        )
        assert.strictEqual(skeletonOf(text), Array.from({ length: count }, () => "$#").join(", "))
      })
    )
  })

  it("is the list from $1 shifted to start at `from`", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5000 }), fc.nat(60), (from, count) => {
        assert.strictEqual(placeholders(from, count), shiftPlaceholders(placeholders(1, count), from - 1))
      })
    )
  })
})

describe("StatementShapes", () => {
  it("builds a key's text once while it is kept", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom("a", "b", "c", "d"), { maxLength: 40 }), (keys) => {
        const shapes = new StatementShapes(8)
        const builds = new Map<string, number>()
        for (const key of keys) {
          const text = shapes.text(key, () => {
            builds.set(key, (builds.get(key) ?? 0) + 1)
            return `text of ${key}`
          })
          assert.strictEqual(text, `text of ${key}`)
        }
        for (const [key, count] of builds) assert.strictEqual(count, 1, key)
        assert.deepStrictEqual(new Set(builds.keys()), new Set(keys))
      })
    )
  })

  it("keeps the first text of a key, not a later build's", () => {
    const shapes = new StatementShapes()
    assert.strictEqual(
      shapes.text("k", () => "first"),
      "first"
    )
    assert.strictEqual(
      shapes.text("k", () => "second"),
      "first"
    )
  })

  it("keeps at most `capacity` keys: a new key past it starts again from nothing", () => {
    // The model: the keys kept; a key not kept is built, and if `capacity` are kept they all go.
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(
          fc.nat(9).map((n) => `key-${n}`),
          { maxLength: 60 }
        ),
        (capacity, keys) => {
          const shapes = new StatementShapes(capacity)
          const kept = new Map<string, string>()
          let builds = 0
          for (const key of keys) {
            const expectBuild = !kept.has(key)
            const text = shapes.text(key, () => `${key} build ${++builds}`)
            if (expectBuild) {
              if (kept.size >= capacity) kept.clear()
              kept.set(key, `${key} build ${builds}`)
            }
            assert.strictEqual(text, kept.get(key), `${key} at capacity ${capacity}`)
            assert.isAtMost(kept.size, capacity)
          }
        }
      )
    )
  })
})

const deskNamesLike = (prefix: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ name: string }>`SELECT name FROM desks WHERE name LIKE ${`${prefix}%`} ORDER BY name`,
      (rows) => rows.map((row) => row.name)
    )
  )

class Boom {
  readonly _tag = "Boom"
}

const insertDesk = "INSERT INTO desks (name, created_at) VALUES ($1, $2) RETURNING name"

describe.each(testDatabases)("directRun on $name", ({ layer: database }) => {
  layer(database, { timeout: testDatabaseTimeout })((it) => {
    it.effect("is the client's own runner, not the sql.unsafe fallback", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        // The fallback is a new function per call; the attached runner is one per client.
        assert.strictEqual(directRun(sql), directRun(sql))
      })
    )

    it.effect("inside withTransaction runs on the transaction's connection", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const run = directRun(sql)
        const prefix = unique("direct-tx")
        const [viaStatement, viaDirect, seenByStatement, seenByDirect] = yield* sql.withTransaction(
          Effect.gen(function* () {
            const [statement] = yield* sql<{ txid: string }>`SELECT txid_current()::text AS txid`
            const [direct] = yield* run<{ txid: string }>("SELECT txid_current()::text AS txid", [])
            yield* run(insertDesk, [`${prefix}-direct`, t0])
            yield* sql`INSERT INTO desks (name, created_at) VALUES (${`${prefix}-statement`}, ${t0})`
            // Each sees the other's uncommitted row: one connection, one transaction.
            const byStatement = yield* deskNamesLike(prefix)
            const byDirect = yield* run<{ name: string }>(
              "SELECT name FROM desks WHERE name LIKE $1 ORDER BY name",
              [`${prefix}%`]
            )
            return [statement!.txid, direct!.txid, byStatement, byDirect.map((row) => row.name)] as const
          })
        )
        assert.strictEqual(viaDirect, viaStatement)
        const both = [`${prefix}-direct`, `${prefix}-statement`]
        assert.deepStrictEqual(seenByStatement, both)
        assert.deepStrictEqual(seenByDirect, both)
        assert.deepStrictEqual(yield* deskNamesLike(prefix), both)
      })
    )

    it.effect("a row it wrote in a transaction that then fails is gone; one in a committed one stays", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const run = directRun(sql)
        const prefix = unique("direct-rollback")
        const failure = yield* Effect.flip(
          sql.withTransaction(
            Effect.gen(function* () {
              const written = yield* run<{ name: string }>(insertDesk, [`${prefix}-rolled-back`, t0])
              // The write itself succeeded: the row goes with the transaction, not with an error.
              assert.deepStrictEqual(
                written.map((row) => row.name),
                [`${prefix}-rolled-back`]
              )
              return yield* Effect.fail(new Boom())
            })
          )
        )
        // The transaction failed on its own error, not on the write (a deadline, a lock).
        assert.instanceOf(failure, Boom)
        assert.deepStrictEqual(yield* deskNamesLike(prefix), [])

        yield* sql.withTransaction(run(insertDesk, [`${prefix}-committed`, t0]))
        assert.deepStrictEqual(yield* deskNamesLike(prefix), [`${prefix}-committed`])
      })
    )

    it.effect("inside a nested transaction that fails, only that savepoint's row is gone", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const run = directRun(sql)
        const prefix = unique("direct-savepoint")
        yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* run(insertDesk, [`${prefix}-outer`, t0])
            const inner = yield* Effect.exit(
              sql.withTransaction(
                Effect.zipRight(run(insertDesk, [`${prefix}-inner`, t0]), Effect.fail(new Boom()))
              )
            )
            assert.isTrue(Exit.isFailure(inner))
          })
        )
        assert.deepStrictEqual(yield* deskNamesLike(prefix), [`${prefix}-outer`])
      })
    )
  })
})

it("is the ordinary unsafe query for a client without a runner of its own", () => {
  const calls: Array<readonly [string, ReadonlyArray<unknown>]> = []
  const foreign = {
    unsafe: (text: string, params: ReadonlyArray<unknown>) => {
      calls.push([text, params])
      return Effect.succeed([{ one: 1 }])
    }
  } as unknown as SqlClient.SqlClient
  const rows = Effect.runSync(directRun(foreign)("SELECT $1::int AS one", [1]))
  assert.deepStrictEqual(rows, [{ one: 1 }])
  assert.deepStrictEqual(calls, [["SELECT $1::int AS one", [1]]])
})

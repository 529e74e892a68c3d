import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { makeDatabaseLayer, ping } from "../../src/storage/Database.js"
import * as PostgresClient from "../../src/storage/PostgresClient.js"
import { randomTestSchema, testPostgresUrl } from "../support/TestDatabases.js"

const dropSchema = (schema: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).pipe(
    Effect.provide(PostgresClient.layer({ url: testPostgresUrl, maxConnections: 1 })),
    Effect.orDie
  )

describe("Database on PostgreSQL", () => {
  it.scoped(
    "a schema is created when missing, migrated, and confines every connection",
    () =>
      Effect.gen(function* () {
        const schema = randomTestSchema()
        yield* Effect.addFinalizer(() => dropSchema(schema))
        const context = yield* Layer.build(
          makeDatabaseLayer({ kind: "postgres", url: testPostgresUrl, schema })
        )
        const sql = SqlClient.SqlClient.pipe(Effect.provide(context))
        yield* ping.pipe(Effect.provide(context))
        // Several connections at once: each one has the schema as its search_path.
        const schemas = yield* Effect.all(
          Array.from({ length: 4 }, () =>
            Effect.flatMap(sql, (client) =>
              client.withTransaction(client<{ s: string }>`SELECT current_schema() AS s, pg_sleep(0.05)`)
            )
          ),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(
          schemas.map((rows) => rows[0]!.s),
          [schema, schema, schema, schema]
        )
        const tables = yield* Effect.flatMap(
          sql,
          (client) =>
            client`SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = ${schema}`
        )
        assert.isAbove(tables[0]!.n as number, 10)
      }),
    60_000
  )

  it.effect("a schema name that would need quoting is refused", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(
        ping.pipe(
          Effect.provide(
            makeDatabaseLayer({ kind: "postgres", url: testPostgresUrl, schema: "x; DROP TABLE y" })
          )
        )
      )
      assert.isTrue(Exit.isFailure(exit))
    })
  )

  it.effect("ping fails when the server does not answer", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(
        ping.pipe(
          Effect.provide(makeDatabaseLayer({ kind: "postgres", url: "postgres://postgres@127.0.0.1:1/test" }))
        )
      )
      assert.isTrue(Exit.isFailure(exit))
    })
  )
})

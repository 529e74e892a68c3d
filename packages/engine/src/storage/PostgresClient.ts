import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { pgTypeParsers } from "./SqlTypes.js"

export interface PostgresClientOptions {
  /** `postgres://user:password@host:port/database` */
  readonly url: string
  /**
   * A schema to work in: it becomes the only entry of `search_path` on every pooled connection
   * and is created when missing. Tests use one per file to isolate themselves.
   */
  readonly schema?: string | undefined
  readonly maxConnections?: number | undefined
}

const schemaName = /^[a-z_][a-z0-9_]{0,62}$/

/** Accepts only plain lower-case identifiers, so the name needs no quoting anywhere. */
export const isValidSchemaName = (name: string): boolean => schemaName.test(name)

// libpq's `options` startup parameter sets search_path per connection, before any statement runs,
// so even the pool's first connection and the migrator see the schema.
const urlWithSearchPath = (url: string, schema: string): string => {
  const parsed = new URL(url)
  const existing = parsed.searchParams.get("options")
  parsed.searchParams.set("options", `${existing ? `${existing} ` : ""}-c search_path=${schema}`)
  return parsed.toString()
}

const ensureSchema = (schema: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // Checked first: CREATE SCHEMA IF NOT EXISTS still needs CREATE on the database.
    const found = yield* sql`SELECT 1 FROM pg_namespace WHERE nspname = ${schema}`
    if (found.length === 0) yield* sql.unsafe(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
  })

/** PostgreSQL through `@effect/sql-pg`, with the same type parsing as the PGlite client. */
export const layer = (options: PostgresClientOptions): Layer.Layer<SqlClient.SqlClient, SqlError> => {
  const schema = options.schema
  if (schema !== undefined && !isValidSchemaName(schema)) {
    return Layer.fail(
      new SqlError({ message: `invalid schema name ${JSON.stringify(schema)}: use [a-z_][a-z0-9_]*` })
    )
  }
  const client = PgClient.layer({
    url: Redacted.make(schema === undefined ? options.url : urlWithSearchPath(options.url, schema)),
    types: pgTypeParsers,
    applicationName: "rfq-service",
    ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections })
  })
  return schema === undefined
    ? client
    : Layer.tap(client, (context) => Effect.provide(ensureSchema(schema), context))
}

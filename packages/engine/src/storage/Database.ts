import type { MigrationError } from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Layer } from "effect"
import { runMigrations } from "./Migrations.js"
import * as PgliteClient from "./PgliteClient.js"
import * as PostgresClient from "./PostgresClient.js"

/**
 * Where the data lives. `pglite`: embedded PostgreSQL persisted in `dataDir` (`memory://` for a
 * throw-away database); one process per directory, which the host must lock. `postgres`: a
 * server, optionally confined to one schema (created when missing).
 */
export type DatabaseConfig =
  | { readonly kind: "pglite"; readonly dataDir: string }
  | { readonly kind: "postgres"; readonly url: string; readonly schema?: string | undefined }

export type DatabaseError = SqlError | MigrationError

/** The bare client for a configuration, without migrations. */
export const makeClientLayer = (config: DatabaseConfig): Layer.Layer<SqlClient.SqlClient, SqlError> =>
  config.kind === "pglite"
    ? PgliteClient.layer({ dataDir: config.dataDir })
    : PostgresClient.layer({ url: config.url, schema: config.schema })

/** Runs the pending migrations once the client is up; the client is provided only after that. */
export const withMigrations = <ROut extends SqlClient.SqlClient, E, R>(
  client: Layer.Layer<ROut, E, R>
): Layer.Layer<ROut, E | DatabaseError, R> =>
  // ROut includes SqlClient, which TypeScript cannot subtract from the migrations' needs generically.
  Layer.provideMerge(Layer.effectDiscard(runMigrations), client) as Layer.Layer<ROut, E | DatabaseError, R>

/** `SqlClient` with the schema migrated, for either backend; closing the layer closes the database. */
export const makeDatabaseLayer = (config: DatabaseConfig): Layer.Layer<SqlClient.SqlClient, DatabaseError> =>
  withMigrations(makeClientLayer(config))

/** Readiness probe: the database answers a trivial query. */
export const ping: Effect.Effect<void, SqlError, SqlClient.SqlClient> = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => Effect.asVoid(sql`SELECT 1`)
)

import type { MigrationError } from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, Layer } from "effect"
import { runMigrations } from "./Migrations.js"
import * as PgliteClient from "./PgliteClient.js"
import * as PostgresClient from "./PostgresClient.js"
import { withStatementDeadline } from "./StatementDeadline.js"

/**
 * Where the data lives. `pglite`: embedded PostgreSQL persisted in `dataDir` (`memory://` for a
 * throw-away database); one process per directory, which the host must lock. `postgres`: a
 * server, optionally confined to one schema (created when missing). `queryTimeoutMs` is the
 * deadline of every statement (PostgreSQL) or of the wait for the session (PGlite); 3000 ms by
 * default (see `StatementDeadline.ts`).
 */
export type DatabaseConfig =
  | {
      readonly kind: "pglite"
      readonly dataDir: string
      readonly queryTimeoutMs?: number | undefined
      /** Where PGlite runs: its own thread by default for a directory, the caller's for `memory://`. */
      readonly thread?: "own" | "caller" | undefined
    }
  | {
      readonly kind: "postgres"
      readonly url: string
      readonly schema?: string | undefined
      readonly queryTimeoutMs?: number | undefined
      /** The one engine on this database and schema: ends a previous process's sessions at start. */
      readonly exclusive?: boolean | undefined
    }

export type DatabaseError = SqlError | MigrationError

/** The bare client for a configuration, without migrations. */
export const makeClientLayer = (config: DatabaseConfig): Layer.Layer<SqlClient.SqlClient, SqlError> =>
  config.kind === "pglite"
    ? PgliteClient.layer({
        dataDir: config.dataDir,
        queryTimeoutMs: config.queryTimeoutMs,
        thread: config.thread
      })
    : PostgresClient.layer({
        url: config.url,
        schema: config.schema,
        queryTimeoutMs: config.queryTimeoutMs,
        exclusive: config.exclusive
      })

/**
 * Migrations may rewrite large tables: their statements get this long rather than the request
 * deadline. A database that stalls during a start therefore holds the start for up to this long.
 */
export const MIGRATION_STATEMENT_DEADLINE = Duration.minutes(10)

/** Runs the pending migrations once the client is up; the client is provided only after that. */
export const withMigrations = <ROut extends SqlClient.SqlClient, E, R>(
  client: Layer.Layer<ROut, E, R>
): Layer.Layer<ROut, E | DatabaseError, R> =>
  // ROut includes SqlClient, which TypeScript cannot subtract from the migrations' needs generically.
  Layer.provideMerge(
    Layer.effectDiscard(withStatementDeadline(MIGRATION_STATEMENT_DEADLINE)(runMigrations)),
    client
  ) as Layer.Layer<ROut, E | DatabaseError, R>

/** `SqlClient` with the schema migrated, for either backend; closing the layer closes the database. */
export const makeDatabaseLayer = (config: DatabaseConfig): Layer.Layer<SqlClient.SqlClient, DatabaseError> =>
  withMigrations(makeClientLayer(config))

/** Readiness probe: the database answers a trivial query. */
export const ping: Effect.Effect<void, SqlError, SqlClient.SqlClient> = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => Effect.asVoid(sql`SELECT 1`)
)

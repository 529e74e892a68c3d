import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

/**
 * The start-up lock of one schema: hosts starting together on one database take it around the
 * migrations and around the demo seed's "is the database empty → seed" decision, so they run one
 * after the other instead of racing. A PostgreSQL transaction-level advisory lock: released at
 * commit or rollback, and by the server when a session dies, so a killed host never leaves it held.
 *
 * The key is per schema (`hashtext(current_schema())`), so test schemas in one database do not wait
 * on each other; a hash collision between two schemas would only serialise their starts. It is the
 * two-integer form under our own namespace, which never meets single-key advisory locks (those of
 * `@effect/cluster`'s shards, for one). PGlite has one session per data directory, where the lock
 * is free and harmless.
 */

/** Our advisory-lock namespace (the first key of the two-integer form): "RFQ1" as an int4. */
export const ADVISORY_LOCK_NAMESPACE = 0x52465131

/** Takes this schema's start-up lock until the current transaction ends; use inside `withTransaction`. */
export const lockSchemaStartup: Effect.Effect<void, SqlError, SqlClient.SqlClient> = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    Effect.asVoid(sql`SELECT pg_advisory_xact_lock(${ADVISORY_LOCK_NAMESPACE}, hashtext(current_schema()))`)
)

import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { initialSchema } from "./migrations/0001_initial.js"
import { rfqStoreSchema } from "./migrations/0002_rfq_store.js"
import { bulkBlockTradeIdsSchema } from "./migrations/0003_bulk_block_trade_ids.js"
import { idBlocksSchema } from "./migrations/0004_id_blocks.js"
import { mmpSchema } from "./migrations/0005_mmp.js"
import { quoteExpiryAndTapeSchema } from "./migrations/0006_quote_expiry_and_tape.js"
import { stepGuardOnEventsSchema } from "./migrations/0007_step_guard_on_events.js"
import { recentlyClosedSchema } from "./migrations/0008_recently_closed.js"
import { recentlyDeletedSchema } from "./migrations/0009_recently_deleted.js"
import { lockSchemaStartup } from "./StartupLock.js"

/**
 * The one set of migrations, for PGlite and PostgreSQL alike: `<id>_<name>` → SQL script.
 * Never edit a shipped entry; append a new one. (The text is also what test caches are keyed on.)
 */
export const migrationScripts: Readonly<Record<string, string>> = {
  "0001_initial": initialSchema,
  "0002_rfq_store": rfqStoreSchema,
  "0003_bulk_block_trade_ids": bulkBlockTradeIdsSchema,
  "0004_id_blocks": idBlocksSchema,
  "0005_mmp": mmpSchema,
  "0006_quote_expiry_and_tape": quoteExpiryAndTapeSchema,
  "0007_step_guard_on_events": stepGuardOnEventsSchema,
  "0008_recently_closed": recentlyClosedSchema,
  "0009_recently_deleted": recentlyDeletedSchema
}

export const migrationsTable = "rfq_schema_migrations"

const runScript = (script: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.asVoid(sql.unsafe(script)))

export const migrations: Record<
  string,
  Effect.Effect<void, SqlError, SqlClient.SqlClient>
> = Object.fromEntries(Object.entries(migrationScripts).map(([name, script]) => [name, runScript(script)]))

// The generic migrator with the pg dialect's table handling (both clients compile as "pg"); the
// PgMigrator of @effect/sql-pg only adds a pg_dump step we do not use.
const migrator = Migrator.make({})

/**
 * Applies the pending migrations in one transaction, under the schema's start-up lock
 * (`StartupLock.ts`), so hosts starting together apply each migration once. The lock is taken before
 * the migrations table is made: `@effect/sql`'s migrator creates it outside its transaction, where
 * two processes on an empty schema would race. Returns the applied migrations.
 */
export const runMigrations: Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  Migrator.MigrationError | SqlError,
  SqlClient.SqlClient
> = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.withTransaction(
    Effect.gen(function* () {
      yield* lockSchemaStartup
      // The migrator's own table, made here under the lock; the migrator then finds it, and its
      // transaction becomes a savepoint of this one.
      yield* sql`CREATE TABLE IF NOT EXISTS ${sql(migrationsTable)} (
        migration_id integer primary key,
        created_at timestamp with time zone not null default now(),
        name text not null
      )`
      return yield* migrator({ loader: Migrator.fromRecord(migrations), table: migrationsTable })
    })
  )
)

/** Names of the constraints that repositories map to client errors. */
export const StorageConstraints = {
  credentialsAliasPerDesk: "exchange_credentials_desk_alias_key",
  defaultCredentialsPerExchange: "exchange_credentials_desk_default_key",
  rfqRequestIdPerUser: "rfqs_user_request_key",
  activeQuoteLabelPerMaker: "quotes_maker_active_label_key",
  oneTradePerRfq: "trades_rfq_key",
  allocationIdempotencyKey: "allocations_idempotency_key",
  blockTradeNoncePerDesk: "block_trade_nonces_pkey",
  rfqEventSeq: "rfq_events_rfq_seq_key",
  venueIdempotencyKey: "venue_block_trades_key",
  apiClientId: "api_clients_client_id_key",
  userEmail: "users_email_key",
  deskName: "desks_name_key",
  makerPerDesk: "makers_desk_key"
} as const

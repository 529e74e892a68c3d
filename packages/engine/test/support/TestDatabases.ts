import { createHash, randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { type Duration, Effect, Layer } from "effect"
import { type DatabaseError, withMigrations } from "../../src/storage/Database.js"
import { migrationScripts, migrationsTable, runMigrations } from "../../src/storage/Migrations.js"
import * as PgliteClient from "../../src/storage/PgliteClient.js"
import { pgliteVersion } from "../../src/storage/PgliteTemplate.js"
import * as PostgresClient from "../../src/storage/PostgresClient.js"

/**
 * Databases for tests, the same schema on both backends:
 *
 *   describe.each(testDatabases)("… on $name", ({ layer: database }) => {
 *     layer(database, { timeout: testDatabaseTimeout })((it) => { it.effect("…", () => …) })
 *   })
 *
 * Each build of a layer is a fresh, migrated, empty database that only that build sees; an
 * `layer` block shares one build among its tests, so tests in a block must not depend on
 * each other's rows (use fresh names/ids) or get their own block. Building a PGlite takes a
 * second or more (several on a loaded machine, and initdb once per migrations change), longer
 * than Vitest's default 10 s hook timeout allows for comfort: pass `testDatabaseTimeout`.
 */
export interface TestDatabase {
  readonly name: "pglite" | "postgres"
  readonly layer: Layer.Layer<SqlClient.SqlClient, DatabaseError>
}

/** The PostgreSQL server tests use (trust authentication); `TEST_DATABASE_URL` overrides it. */
/** Hook timeout for `it.layer` over a test database. */
export const testDatabaseTimeout: Duration.DurationInput = "2 minutes"

export const testPostgresUrl: string =
  process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

const snapshotKey = (): string =>
  createHash("sha256")
    .update(JSON.stringify({ pglite: pgliteVersion(), table: migrationsTable, scripts: migrationScripts }))
    .digest("hex")
    .slice(0, 16)

/** Where migrated PGlite snapshots are cached, one file per migrations fingerprint. */
export const pgliteSnapshotDir: string = path.join(os.tmpdir(), "rfq-engine-pglite-snapshots")

const snapshotError = (cause: unknown) => new SqlError({ cause, message: "PGlite test snapshot failed" })

const createSnapshot = (file: string): Effect.Effect<Blob, DatabaseError> =>
  Effect.gen(function* () {
    const client = yield* PgliteClient.PgliteClient
    yield* runMigrations
    const blob = yield* Effect.tryPromise({
      try: () => client.session.dumpDataDir(),
      catch: snapshotError
    })
    // Written aside and renamed, so a concurrent test worker never reads half a file.
    yield* Effect.tryPromise({
      try: async () => {
        await fs.mkdir(path.dirname(file), { recursive: true })
        const partial = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.partial`
        await fs.writeFile(partial, Buffer.from(await blob.arrayBuffer()))
        await fs.rename(partial, file)
      },
      catch: snapshotError
    })
    return blob
  }).pipe(Effect.provide(PgliteClient.layer({ dataDir: "memory://" })))

let snapshot: Promise<Blob> | undefined

/**
 * A gzipped PGlite data directory with every migration applied. Built once (initdb costs seconds)
 * and cached on disk keyed by the PGlite version and the migration scripts, so test files start
 * from it in about a second.
 */
export const migratedPgliteSnapshot: Effect.Effect<Blob, SqlError> = Effect.suspend(() => {
  snapshot ??= Effect.runPromise(
    Effect.gen(function* () {
      const file = path.join(pgliteSnapshotDir, `${snapshotKey()}.tgz`)
      const cached = yield* Effect.tryPromise(() => fs.readFile(file)).pipe(Effect.option)
      if (cached._tag === "Some") return new Blob([cached.value])
      return yield* createSnapshot(file)
    })
  )
  return Effect.tryPromise({ try: () => snapshot!, catch: snapshotError })
})

const holdsDatabase = (dataDir: string): Effect.Effect<boolean> =>
  dataDir.startsWith("memory://")
    ? Effect.succeed(false)
    : Effect.promise(() =>
        fs.access(path.join(dataDir, "PG_VERSION")).then(
          () => true,
          () => false
        )
      )

/**
 * A PGlite in a directory (`memory://` by default), not migrated by itself: an empty directory
 * starts from the migrated snapshot, one that already holds a database (a restart) opens as is.
 */
export const pgliteTestClientLayer = (
  dataDir = "memory://"
): Layer.Layer<PgliteClient.PgliteClient | SqlClient.SqlClient, SqlError> =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      if (yield* holdsDatabase(dataDir)) return PgliteClient.layer({ dataDir })
      return PgliteClient.layer({ dataDir, loadDataDir: yield* migratedPgliteSnapshot })
    })
  )

/** A fresh in-memory PGlite, migrated. */
export const pgliteTestLayer: Layer.Layer<SqlClient.SqlClient, DatabaseError> = withMigrations(
  pgliteTestClientLayer()
)

/** `rfq_test_<random>`: a schema name no other test uses. */
export const randomTestSchema = (): string => `rfq_test_${randomBytes(6).toString("hex")}`

const dropSchema = (schema: string): Effect.Effect<void, SqlError> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).pipe(
    Effect.asVoid,
    Effect.provide(PostgresClient.layer({ url: testPostgresUrl, maxConnections: 1 }))
  )

/**
 * A client confined to a fresh schema (`rfq_test_<random>`, or `schema`) on the test server, not
 * migrated; the schema is dropped (CASCADE) when the layer is released.
 */
export const postgresTestClientLayer = (
  schema: string = randomTestSchema()
): Layer.Layer<SqlClient.SqlClient, SqlError> =>
  Layer.provide(
    PostgresClient.layer({ url: testPostgresUrl, schema, maxConnections: 4 }),
    Layer.scopedDiscard(Effect.addFinalizer(() => dropSchema(schema).pipe(Effect.orDie)))
  )

/** A fresh schema on the test server, migrated, dropped when the layer is released. */
export const postgresTestLayer: Layer.Layer<SqlClient.SqlClient, DatabaseError> = Layer.suspend(() =>
  withMigrations(postgresTestClientLayer())
)

export const testDatabases: ReadonlyArray<TestDatabase> = [
  { name: "pglite", layer: pgliteTestLayer },
  { name: "postgres", layer: postgresTestLayer }
]

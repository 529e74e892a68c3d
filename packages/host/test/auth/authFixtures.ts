import { randomBytes } from "node:crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import { makeDatabaseLayer } from "@rfq/engine"
import { Effect, Layer } from "effect"
import { hashSecret, type ScryptParams } from "../../src/auth/SecretHash.js"

/**
 * Databases and accounts for the auth tests: a migrated PGlite in memory, and a fresh schema on
 * the test PostgreSQL server (dropped afterwards), the latter being where concurrent refreshes
 * really race on row locks.
 */

export const testPostgresUrl: string =
  process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

export const databaseTimeout = 120_000

/** Cheap hashes for seeded clients: the tests are about the flows, SecretHash.test about the cost. */
export const testScryptParams: ScryptParams = { N: 2 ** 10, r: 8, p: 1 }

export const jwtSecret = new Uint8Array(randomBytes(32))

const pglite: Layer.Layer<SqlClient.SqlClient, unknown> = makeDatabaseLayer({
  kind: "pglite",
  dataDir: "memory://"
})

const postgres: Layer.Layer<SqlClient.SqlClient, unknown> = Layer.unwrapEffect(
  Effect.sync(() => {
    const schema = `rfq_auth_test_${randomBytes(6).toString("hex")}`
    const database = makeDatabaseLayer({ kind: "postgres", url: testPostgresUrl, schema })
    // Dropped through the same pool, before the pool closes (the finalizer depends on the client).
    const dropOnRelease = Layer.scopedDiscard(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.addFinalizer(() => Effect.orDie(sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)))
      )
    )
    return Layer.provideMerge(dropOnRelease, database)
  })
)

export const testDatabases: ReadonlyArray<{
  readonly name: string
  readonly layer: Layer.Layer<SqlClient.SqlClient, unknown>
}> = [
  { name: "pglite", layer: pglite },
  { name: "postgres", layer: postgres }
]

export const pgliteDatabase = pglite

let counter = 0
export const unique = (prefix: string): string => `${prefix}-${++counter}-${randomBytes(3).toString("hex")}`

export interface SeedOptions {
  readonly roles?: ReadonlyArray<"trader" | "viewer">
  readonly makerId?: string
  readonly userActive?: boolean
  readonly clientActive?: boolean
}

export interface SeededAccount {
  readonly deskId: number
  readonly userId: number
  readonly clientId: string
  readonly clientSecret: string
  readonly makerId: string | undefined
}

/** A desk with one user and one API client (and a maker id when asked), all with fresh names. */
export const seedAccount = (options: SeedOptions = {}) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const clientId = unique("client")
    const clientSecret = `${clientId}-secret`
    const roles = options.roles ?? ["trader"]
    const [desk] = yield* sql<{ id: number }>`INSERT INTO desks (name, created_at)
      VALUES (${unique("desk")}, 0) RETURNING id`
    const deskId = Number(desk!.id)
    const [user] = yield* sql<{ id: number }>`INSERT INTO users (desk_id, name, roles, active, created_at)
      VALUES (${deskId}, ${unique("user")}, string_to_array(${roles.join(",")}, ',')::text[],
        ${options.userActive ?? true}, 0)
      RETURNING id`
    const userId = Number(user!.id)
    const secretHash = yield* hashSecret(clientSecret, testScryptParams)
    yield* sql`INSERT INTO api_clients (client_id, secret_hash, user_id, active, created_at)
      VALUES (${clientId}, ${secretHash}, ${userId}, ${options.clientActive ?? true}, 0)`
    if (options.makerId !== undefined) {
      yield* sql`INSERT INTO makers (maker_id, desk_id, name, created_at)
        VALUES (${options.makerId}, ${deskId}, ${options.makerId}, 0)`
    }
    return { deskId, userId, clientId, clientSecret, makerId: options.makerId } satisfies SeededAccount
  })

export const setUserActive = (userId: number, active: boolean) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE users SET active = ${active} WHERE id = ${userId}`)

export const setClientActive = (clientId: string, active: boolean) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`UPDATE api_clients SET active = ${active} WHERE client_id = ${clientId}`
  )

export interface RefreshRow {
  readonly jti: string
  readonly family: string
  readonly used: boolean
  readonly revoked: boolean
}

export const refreshRowsOfClient = (clientId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<RefreshRow>`SELECT jti, family, used_at IS NOT NULL AS used, revoked_at IS NOT NULL AS revoked
      FROM refresh_tokens WHERE client_id = ${clientId} ORDER BY created_at, jti`
  )

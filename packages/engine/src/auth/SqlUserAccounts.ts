import { randomBytes } from "node:crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Clock, Effect, Layer, Option, Schema } from "effect"
import { makeRefreshFamilies } from "./RefreshFamilies.js"
import {
  type AccountStatus,
  type ClientAccount,
  type StatusKey,
  UserAccounts,
  type UserAccountsService,
  type UserListing,
  type UserRole
} from "./UserAccounts.js"

/** `UserAccounts` over PostgreSQL (or PGlite): the `users`, `api_clients` and `refresh_tokens` tables. */

/** Keys per query of `accountStatuses`, so that one statement's parameter list stays small. */
const STATUS_CHUNK = 500

const ClientAccountRow = Schema.Struct({
  clientId: Schema.String,
  secretHash: Schema.String,
  clientActive: Schema.Boolean,
  userId: Schema.Number,
  userActive: Schema.Boolean,
  deskId: Schema.Number,
  roles: Schema.Array(Schema.Literal("trader", "viewer")),
  makerId: Schema.NullOr(Schema.String)
})

const UserListingRow = Schema.Struct({
  userId: Schema.Number,
  name: Schema.String,
  desk: Schema.String,
  roles: Schema.Array(Schema.Literal("trader", "viewer")),
  active: Schema.Boolean
})

const ClientListingRow = Schema.Struct({
  userId: Schema.Number,
  clientId: Schema.String,
  active: Schema.Boolean
})

const StatusRow = Schema.Struct({
  userActive: Schema.Boolean,
  clientActive: Schema.NullOr(Schema.Boolean),
  familyRevoked: Schema.Boolean
})

export const makeUserAccounts: Effect.Effect<UserAccountsService, never, SqlClient.SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient

    const findClient = SqlSchema.findOne({
      Request: Schema.String,
      Result: ClientAccountRow,
      execute: (clientId) => sql`
      SELECT c.client_id AS "clientId", c.secret_hash AS "secretHash", c.active AS "clientActive",
        u.id AS "userId", u.active AS "userActive", u.desk_id AS "deskId", u.roles,
        m.maker_id AS "makerId"
      FROM api_clients c
      JOIN users u ON u.id = c.user_id
      LEFT JOIN makers m ON m.desk_id = u.desk_id
      WHERE c.client_id = ${clientId}`
    })

    const clientAccount = Effect.fn("UserAccounts.clientAccount")(function* (clientId: string) {
      const row = yield* findClient(clientId).pipe(Effect.orDie)
      return Option.map(row, (found): ClientAccount => ({ ...found, makerId: found.makerId ?? undefined }))
    })

    const accountStatus = Effect.fn("UserAccounts.accountStatus")(function* (
      userId: number,
      clientId: string | undefined,
      family: string | undefined
    ) {
      const clientActive =
        clientId === undefined
          ? sql`NULL::boolean`
          : sql`(SELECT c.active FROM api_clients c WHERE c.client_id = ${clientId} AND c.user_id = u.id)`
      const familyRevoked =
        family === undefined
          ? sql`false`
          : sql`EXISTS (SELECT 1 FROM refresh_tokens t WHERE t.family = ${family} AND t.revoked_at IS NOT NULL)`
      const rows = yield* Effect.flatMap(
        sql`SELECT u.active AS "userActive", ${clientActive} AS "clientActive", ${familyRevoked} AS "familyRevoked"
        FROM users u WHERE u.id = ${userId}`,
        Schema.decodeUnknown(Schema.Array(StatusRow))
      ).pipe(Effect.orDie)
      const row = rows[0]
      if (row === undefined) return { active: false, familyRevoked: false }
      // A token naming a client that no longer exists or belongs to someone else is not active either.
      const active = row.userActive && (clientId === undefined || row.clientActive === true)
      return { active, familyRevoked: row.familyRevoked }
    })

    const statusChunk = (keys: ReadonlyArray<StatusKey>) =>
      Effect.gen(function* () {
        const userIds = [...new Set(keys.map((k) => k.userId))]
        const clientIds = [...new Set(keys.flatMap((k) => (k.clientId === undefined ? [] : [k.clientId])))]
        const families = [...new Set(keys.flatMap((k) => (k.family === undefined ? [] : [k.family])))]
        const users = yield* sql<{ id: number; active: boolean }>`
          SELECT id, active FROM users WHERE id IN ${sql.in(userIds)}`
        const clients =
          clientIds.length === 0
            ? []
            : yield* sql<{ clientId: string; userId: number; active: boolean }>`
              SELECT client_id AS "clientId", user_id AS "userId", active FROM api_clients
              WHERE client_id IN ${sql.in(clientIds)}`
        const revoked =
          families.length === 0
            ? []
            : yield* sql<{ family: string }>`
              SELECT DISTINCT family FROM refresh_tokens
              WHERE family IN ${sql.in(families)} AND revoked_at IS NOT NULL`
        const userActive = new Map(users.map((u) => [Number(u.id), u.active]))
        const clientOf = new Map(clients.map((c) => [c.clientId, c]))
        const revokedFamilies = new Set(revoked.map((r) => r.family))
        return keys.map((key): AccountStatus => {
          const client = key.clientId === undefined ? undefined : clientOf.get(key.clientId)
          // The same rule as accountStatus: a client that is gone or now someone else's is not active.
          const clientActive =
            key.clientId === undefined ||
            (client !== undefined && Number(client.userId) === key.userId && client.active)
          return {
            active: userActive.get(key.userId) === true && clientActive,
            familyRevoked: key.family !== undefined && revokedFamilies.has(key.family)
          }
        })
      })

    const accountStatuses = Effect.fn("UserAccounts.accountStatuses")(function* (
      keys: ReadonlyArray<StatusKey>
    ) {
      const chunks: Array<ReadonlyArray<StatusKey>> = []
      for (let i = 0; i < keys.length; i += STATUS_CHUNK) chunks.push(keys.slice(i, i + STATUS_CHUNK))
      const answers = yield* Effect.forEach(chunks, statusChunk).pipe(Effect.orDie)
      return answers.flat()
    })

    const createUser = Effect.fn("UserAccounts.createUser")(function* (
      deskId: number,
      name: string,
      role: UserRole
    ) {
      const now = yield* Clock.currentTimeMillis
      const rows = yield* sql<{ id: number }>`
          INSERT INTO users (desk_id, name, roles, created_at) VALUES (${deskId}, ${name}, ${[role]}, ${now}) RETURNING id`
      return Number(rows[0]!.id)
    })

    const createClient = Effect.fn("UserAccounts.createClient")(function* (
      userId: number,
      hashSecret: (secret: string) => Effect.Effect<string>
    ) {
      const clientId = `client-${randomBytes(6).toString("hex")}`
      const clientSecret = randomBytes(24).toString("base64url")
      const hash = yield* hashSecret(clientSecret)
      const now = yield* Clock.currentTimeMillis
      yield* sql`INSERT INTO api_clients (client_id, secret_hash, user_id, created_at)
          VALUES (${clientId}, ${hash}, ${userId}, ${now})`
      return { clientId, clientSecret }
    })

    const deactivateClient = Effect.fn("UserAccounts.deactivateClient")(function* (clientId: string) {
      const rows =
        yield* sql`UPDATE api_clients SET active = false WHERE client_id = ${clientId} RETURNING id`
      return rows.length > 0
    })

    const deactivateUser = Effect.fn("UserAccounts.deactivateUser")(function* (userId: number) {
      const rows = yield* sql`UPDATE users SET active = false WHERE id = ${userId} RETURNING id`
      return rows.length > 0
    })

    const listUsers = Effect.fn("UserAccounts.listUsers")(function* (deskId?: number) {
      const users = yield* Effect.flatMap(
        sql`SELECT u.id AS "userId", u.name, d.name AS desk, u.roles, u.active FROM users u
          JOIN desks d ON d.id = u.desk_id
          WHERE ${deskId === undefined ? sql`true` : sql`u.desk_id = ${deskId}`} ORDER BY u.id`,
        Schema.decodeUnknown(Schema.Array(UserListingRow))
      ).pipe(Effect.orDie)
      const clients = yield* Effect.flatMap(
        sql`SELECT c.user_id AS "userId", c.client_id AS "clientId", c.active FROM api_clients c
          JOIN users u ON u.id = c.user_id
          WHERE ${deskId === undefined ? sql`true` : sql`u.desk_id = ${deskId}`} ORDER BY c.id`,
        Schema.decodeUnknown(Schema.Array(ClientListingRow))
      ).pipe(Effect.orDie)
      const byUser = new Map<number, Array<{ clientId: string; active: boolean }>>()
      for (const c of clients) {
        const list = byUser.get(c.userId) ?? []
        list.push({ clientId: c.clientId, active: c.active })
        byUser.set(c.userId, list)
      }
      return users.map((user): UserListing => ({ ...user, clients: byUser.get(user.userId) ?? [] }))
    })

    return {
      clientAccount,
      accountStatus,
      accountStatuses,
      ...makeRefreshFamilies(sql),
      createUser,
      createClient,
      deactivateClient,
      deactivateUser,
      listUsers
    } satisfies UserAccountsService
  }
)

/** `UserAccounts` over the `SqlClient` in context (a migrated database). */
export const UserAccountsLive: Layer.Layer<UserAccounts, never, SqlClient.SqlClient> = Layer.effect(
  UserAccounts,
  makeUserAccounts
)

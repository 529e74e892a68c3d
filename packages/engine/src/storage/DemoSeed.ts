import { randomBytes } from "node:crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect } from "effect"
import type { ApiError } from "../domain/Errors.js"
import type { SettlementOption } from "../domain/Primitives.js"
import { credentialsAad, SecretBox } from "../security/SecretBox.js"
import type { AccountRegistration } from "../venues/VenueAccounts.js"
import { lockSchemaStartup } from "./StartupLock.js"

/**
 * The contract's demo data (docs: contract "Demo data"), seeded on an empty database only: four
 * desks, their users and API clients (secret `<clientId>-secret`), three makers, exchange
 * credentials per desk (venue client id `<desk client>-<alias>`, a random venue secret sealed with
 * the AAD `credentials:<deskId>:<alias>`), and every desk listing every other as OTC counterparty.
 *
 * "Empty" means no desk exists. The check and the inserts run in one transaction under the schema's
 * start-up lock (`StartupLock.ts`), so hosts starting together on one empty database seed it once,
 * and under a lock on `desks`, which also keeps out a desk made meanwhile by the admin command.
 */

export interface DemoClient {
  readonly clientId: string
  readonly clientSecret: string
  readonly role: "trader" | "viewer"
  /** The desk's name. */
  readonly desk: string
}

export interface DemoSeedResult {
  /** False when the database already had desks: nothing was written. */
  readonly seeded: boolean
  /** The API clients created (empty when nothing was seeded). */
  readonly clients: ReadonlyArray<DemoClient>
  /**
   * Venue accounts the simulated venues must treat specially: the taker's `dbt-flaky` fails every
   * execution. Found in the database on every call (registrations live in memory: register them at
   * every start), empty when the demo taker's `dbt-flaky` credentials do not exist.
   */
  readonly venueAccounts: ReadonlyArray<AccountRegistration>
}

export interface DemoSeedOptions {
  /** Hashes an API client secret for `api_clients.secret_hash`; the host owns the scheme. */
  readonly hashSecret: (secret: string) => Effect.Effect<string>
}

interface DemoCredentials {
  readonly alias: string
  readonly exchange: SettlementOption
  readonly isExchangeDefault: boolean
}

interface DemoDesk {
  readonly name: string
  /** The desk's API clients' ids start with this; its venue client ids too. */
  readonly slug: string
  readonly makerId?: string
  readonly users: ReadonlyArray<{
    readonly name: string
    readonly clientId: string
    readonly role: DemoClient["role"]
  }>
  readonly credentials: ReadonlyArray<DemoCredentials>
}

const makerDesk = (n: 1 | 2 | 3): DemoDesk => ({
  name: `Demo Maker ${n}`,
  slug: `demo-maker-${n}`,
  makerId: `maker-${n}`,
  users: [{ name: `Demo Maker ${n} trader`, clientId: `demo-maker-${n}`, role: "trader" }],
  credentials:
    n === 3
      ? [{ alias: "dbt-main", exchange: "DBT", isExchangeDefault: true }]
      : [
          { alias: "dbt-main", exchange: "DBT", isExchangeDefault: true },
          { alias: "bull-main", exchange: "BULL", isExchangeDefault: true }
        ]
})

export const demoDesks: ReadonlyArray<DemoDesk> = [
  {
    name: "Demo Taker",
    slug: "demo-taker",
    users: [
      { name: "Demo Taker trader", clientId: "demo-taker", role: "trader" },
      { name: "Demo Taker viewer", clientId: "demo-viewer", role: "viewer" }
    ],
    credentials: [
      { alias: "dbt-main", exchange: "DBT", isExchangeDefault: true },
      { alias: "dbt-alt", exchange: "DBT", isExchangeDefault: false },
      { alias: "dbt-flaky", exchange: "DBT", isExchangeDefault: false },
      { alias: "bull-main", exchange: "BULL", isExchangeDefault: true }
    ]
  },
  makerDesk(1),
  makerDesk(2),
  makerDesk(3)
]

/** The demo account whose every execution fails (it still passes the block trade simulation). */
export const flakyDemoAccount = { desk: "Demo Taker", alias: "dbt-flaky" } as const
const flakyReason = "the venue rejected the block trade (demo account dbt-flaky)"

export const demoClientSecret = (clientId: string): string => `${clientId}-secret`

/** Every demo API client with its secret, the taker's first: what a demo host tells its users at start. */
export const demoClientLogins: ReadonlyArray<{ readonly clientId: string; readonly clientSecret: string }> =
  demoDesks.flatMap((desk) =>
    desk.users.map((user) => ({ clientId: user.clientId, clientSecret: demoClientSecret(user.clientId) }))
  )

const flakyRegistrations = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ clientId: string; exchange: SettlementOption }>`
    SELECT c.client_id AS "clientId", c.exchange FROM exchange_credentials c JOIN desks d ON d.id = c.desk_id
    WHERE d.name = ${flakyDemoAccount.desk} AND c.alias = ${flakyDemoAccount.alias} AND c.deleted_at IS NULL`
  return rows.map(
    (r): AccountRegistration => ({
      venue: r.exchange,
      clientId: r.clientId,
      behaviour: { failExecution: flakyReason }
    })
  )
})

const hasDesks = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ found: boolean }>`SELECT EXISTS (SELECT 1 FROM desks) AS found`,
    ([row]) => row?.found === true
  )
)

const insertAll = (hashes: ReadonlyMap<string, string>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const box = yield* SecretBox
    const now = yield* Clock.currentTimeMillis
    const deskIds: Array<number> = []
    const clients: Array<DemoClient> = []
    for (const desk of demoDesks) {
      const [row] = yield* sql<{
        id: number
      }>`INSERT INTO desks (name, created_at) VALUES (${desk.name}, ${now})
        RETURNING id`
      const deskId = Number(row!.id)
      deskIds.push(deskId)
      for (const user of desk.users) {
        const [u] = yield* sql<{ id: number }>`INSERT INTO users (desk_id, name, roles, created_at)
          VALUES (${deskId}, ${user.name}, ARRAY[${user.role}]::text[], ${now}) RETURNING id`
        yield* sql`INSERT INTO api_clients (client_id, secret_hash, user_id, created_at)
          VALUES (${user.clientId}, ${hashes.get(user.clientId)!}, ${u!.id}, ${now})`
        clients.push({
          clientId: user.clientId,
          clientSecret: demoClientSecret(user.clientId),
          role: user.role,
          desk: desk.name
        })
      }
      if (desk.makerId !== undefined) {
        yield* sql`INSERT INTO makers (maker_id, desk_id, name, created_at)
          VALUES (${desk.makerId}, ${deskId}, ${desk.name}, ${now})`
      }
      for (const c of desk.credentials) {
        // A venue secret nobody needs to know: the simulated venues accept any.
        const sealed = yield* box.seal(randomBytes(24).toString("base64url"), credentialsAad(deskId, c.alias))
        yield* sql`INSERT INTO exchange_credentials
            (desk_id, alias, exchange, client_id, client_secret_encrypted, is_exchange_default, created_at)
          VALUES (${deskId}, ${c.alias}, ${c.exchange}, ${`${desk.slug}-${c.alias}`}, ${sealed},
            ${c.isExchangeDefault}, ${now})`
      }
    }
    const pairs = deskIds.flatMap((deskId) =>
      deskIds
        .filter((other) => other !== deskId)
        .map((other) => ({
          desk_id: deskId,
          counterparty_desk_id: other,
          allows_block_trade: true,
          created_at: now
        }))
    )
    yield* sql`INSERT INTO otc_counterparties ${sql.insert(pairs)}`
    return clients
  })

/** Seeds the demo data when the database has no desk; see `DemoSeedResult`. */
export const seedDemoData = (
  options: DemoSeedOptions
): Effect.Effect<DemoSeedResult, SqlError | ApiError, SqlClient.SqlClient | SecretBox> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    let clients: ReadonlyArray<DemoClient> = []
    if (!(yield* hasDesks)) {
      // Hashing is slow on purpose; done before taking the lock, and only when seeding is likely.
      const hashes = new Map<string, string>()
      for (const desk of demoDesks) {
        for (const user of desk.users)
          hashes.set(user.clientId, yield* options.hashSecret(demoClientSecret(user.clientId)))
      }
      clients = yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* lockSchemaStartup
          yield* sql`LOCK TABLE desks IN SHARE ROW EXCLUSIVE MODE`
          return (yield* hasDesks) ? [] : yield* insertAll(hashes)
        })
      )
    }
    return { seeded: clients.length > 0, clients, venueAccounts: yield* flakyRegistrations }
  }).pipe(Effect.withSpan("seedDemoData"))

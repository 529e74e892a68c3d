import { randomBytes } from "node:crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { SecretBox, SecretBoxLive } from "../../src/security/SecretBox.js"
import { demoClientLogins, seedDemoData } from "../../src/storage/DemoSeed.js"
import type { AccountRegistration } from "../../src/venues/VenueAccounts.js"
import { testDatabases } from "../support/TestDatabases.js"

const hashSecret = (secret: string) => Effect.succeed(`hashed:${secret}`)
const keys = new Map([[1, new Uint8Array(randomBytes(32))]])

const seedLayer = (db: Layer.Layer<SqlClient.SqlClient, unknown>) => Layer.merge(db, SecretBoxLive(keys))

/** The contract's "Demo data" table, written out independently of the seed's own constants. */
const contract = {
  desks: ["Demo Maker 1", "Demo Maker 2", "Demo Maker 3", "Demo Taker"],
  clients: [
    { clientId: "demo-maker-1", desk: "Demo Maker 1", role: "trader" },
    { clientId: "demo-maker-2", desk: "Demo Maker 2", role: "trader" },
    { clientId: "demo-maker-3", desk: "Demo Maker 3", role: "trader" },
    { clientId: "demo-taker", desk: "Demo Taker", role: "trader" },
    { clientId: "demo-viewer", desk: "Demo Taker", role: "viewer" }
  ],
  makers: [
    { makerId: "maker-1", desk: "Demo Maker 1" },
    { makerId: "maker-2", desk: "Demo Maker 2" },
    { makerId: "maker-3", desk: "Demo Maker 3" }
  ],
  credentials: [
    {
      desk: "Demo Maker 1",
      alias: "bull-main",
      exchange: "BULL",
      isDefault: true,
      clientId: "demo-maker-1-bull-main"
    },
    {
      desk: "Demo Maker 1",
      alias: "dbt-main",
      exchange: "DBT",
      isDefault: true,
      clientId: "demo-maker-1-dbt-main"
    },
    {
      desk: "Demo Maker 2",
      alias: "bull-main",
      exchange: "BULL",
      isDefault: true,
      clientId: "demo-maker-2-bull-main"
    },
    {
      desk: "Demo Maker 2",
      alias: "dbt-main",
      exchange: "DBT",
      isDefault: true,
      clientId: "demo-maker-2-dbt-main"
    },
    {
      desk: "Demo Maker 3",
      alias: "dbt-main",
      exchange: "DBT",
      isDefault: true,
      clientId: "demo-maker-3-dbt-main"
    },
    {
      desk: "Demo Taker",
      alias: "bull-main",
      exchange: "BULL",
      isDefault: true,
      clientId: "demo-taker-bull-main"
    },
    {
      desk: "Demo Taker",
      alias: "dbt-alt",
      exchange: "DBT",
      isDefault: false,
      clientId: "demo-taker-dbt-alt"
    },
    {
      desk: "Demo Taker",
      alias: "dbt-flaky",
      exchange: "DBT",
      isDefault: false,
      clientId: "demo-taker-dbt-flaky"
    },
    {
      desk: "Demo Taker",
      alias: "dbt-main",
      exchange: "DBT",
      isDefault: true,
      clientId: "demo-taker-dbt-main"
    }
  ]
}

const everyOtherDesk = contract.desks.flatMap((desk) =>
  contract.desks.filter((other) => other !== desk).map((other) => ({ desk, counterparty: other }))
)

const tableCounts = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<
    Record<string, number>
  >`SELECT (SELECT count(*) FROM desks) AS desks, (SELECT count(*) FROM users) AS users,
    (SELECT count(*) FROM api_clients) AS clients, (SELECT count(*) FROM makers) AS makers,
    (SELECT count(*) FROM exchange_credentials) AS credentials,
    (SELECT count(*) FROM otc_counterparties) AS counterparties`.pipe(
    Effect.map(([row]) => Object.fromEntries(Object.entries(row!).map(([k, v]) => [k, Number(v)])))
  )
)

const flakyRegistration: AccountRegistration = {
  venue: "DBT",
  clientId: "demo-taker-dbt-flaky",
  behaviour: { failExecution: "the venue rejected the block trade (demo account dbt-flaky)" }
}

describe.each(testDatabases)("seedDemoData on $name", (db) => {
  layer(seedLayer(db.layer), { timeout: 60_000 })((it) => {
    it.effect("an empty database gets exactly the contract's demo data, once", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const box = yield* SecretBox
        const result = yield* seedDemoData({ hashSecret })
        assert.isTrue(result.seeded)
        assert.deepStrictEqual(
          [...result.clients].sort((a, b) => a.clientId.localeCompare(b.clientId)),
          contract.clients.map((c) => ({ ...c, clientSecret: `${c.clientId}-secret` }))
        )
        assert.deepStrictEqual(result.venueAccounts, [flakyRegistration])

        const desks = yield* sql<{ name: string }>`SELECT name FROM desks ORDER BY name`
        assert.deepStrictEqual(
          desks.map((d) => d.name),
          contract.desks
        )
        const clients = yield* sql<{ clientId: string; desk: string; roles: Array<string>; hash: string }>`
          SELECT c.client_id AS "clientId", d.name AS desk, u.roles, c.secret_hash AS hash
          FROM api_clients c JOIN users u ON u.id = c.user_id JOIN desks d ON d.id = u.desk_id
          WHERE c.active AND u.active ORDER BY c.client_id`
        assert.deepStrictEqual(
          clients.map((c) => ({ ...c, roles: [...c.roles] })),
          contract.clients.map((c) => ({
            clientId: c.clientId,
            desk: c.desk,
            roles: [c.role],
            hash: `hashed:${c.clientId}-secret`
          }))
        )
        const makers = yield* sql<{ makerId: string; desk: string }>`
          SELECT m.maker_id AS "makerId", d.name AS desk FROM makers m JOIN desks d ON d.id = m.desk_id
          ORDER BY m.maker_id`
        assert.deepStrictEqual([...makers], contract.makers)

        const credentials = yield* sql<{
          deskId: number
          desk: string
          alias: string
          exchange: string
          isDefault: boolean
          clientId: string
          sealed: Uint8Array
        }>`SELECT c.desk_id AS "deskId", d.name AS desk, c.alias, c.exchange, c.is_exchange_default AS "isDefault",
            c.client_id AS "clientId", c.client_secret_encrypted AS sealed
          FROM exchange_credentials c JOIN desks d ON d.id = c.desk_id
          WHERE c.deleted_at IS NULL ORDER BY d.name, c.alias`
        assert.deepStrictEqual(
          credentials.map(({ deskId: _, sealed: __, ...rest }) => rest),
          contract.credentials
        )
        // Each venue secret is sealed for its own row: it opens with its AAD and no other.
        const secrets = new Set<string>()
        for (const c of credentials) {
          secrets.add(yield* box.open(new Uint8Array(c.sealed), `credentials:${c.deskId}:${c.alias}`))
          const elsewhere = yield* Effect.either(
            box.open(new Uint8Array(c.sealed), `credentials:${c.deskId}:other`)
          )
          assert.isTrue(Either.isLeft(elsewhere))
        }
        assert.strictEqual(secrets.size, credentials.length)

        const counterparties = yield* sql<{ desk: string; counterparty: string; allows: boolean }>`
          SELECT d.name AS desk, c.name AS counterparty, o.allows_block_trade AS allows FROM otc_counterparties o
          JOIN desks d ON d.id = o.desk_id JOIN desks c ON c.id = o.counterparty_desk_id ORDER BY d.name, c.name`
        assert.deepStrictEqual(
          [...counterparties],
          everyOtherDesk.map((p) => ({ ...p, allows: true }))
        )

        const before = yield* tableCounts
        const again = yield* seedDemoData({ hashSecret })
        assert.deepStrictEqual(again, { seeded: false, clients: [], venueAccounts: [flakyRegistration] })
        assert.deepStrictEqual(yield* tableCounts, before)
      })
    )
  })

  layer(seedLayer(db.layer), { timeout: 60_000 })((it) => {
    it.effect("a database that already has a desk is left alone", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO desks (name, created_at) VALUES ('Production desk', 0)`
        const result = yield* seedDemoData({ hashSecret })
        assert.deepStrictEqual(result, { seeded: false, clients: [], venueAccounts: [] })
        assert.deepStrictEqual(yield* tableCounts, {
          desks: 1,
          users: 0,
          clients: 0,
          makers: 0,
          credentials: 0,
          counterparties: 0
        })
      })
    )
  })

  layer(seedLayer(db.layer), { timeout: 60_000 })((it) => {
    it.effect("two seeds racing on an empty database seed it once", () =>
      Effect.gen(function* () {
        const results = yield* Effect.all([seedDemoData({ hashSecret }), seedDemoData({ hashSecret })], {
          concurrency: 2
        })
        assert.deepStrictEqual(results.map((r) => r.seeded).sort(), [false, true])
        assert.deepStrictEqual(yield* tableCounts, {
          desks: 4,
          users: 5,
          clients: 5,
          makers: 3,
          credentials: 9,
          counterparties: 12
        })
      })
    )
  })
})

describe("demoClientLogins", () => {
  it("lists the contract's demo clients with their secrets, the taker's first", () => {
    assert.deepStrictEqual(
      demoClientLogins.map((c) => `${c.clientId} / ${c.clientSecret}`),
      [
        "demo-taker / demo-taker-secret",
        "demo-viewer / demo-viewer-secret",
        "demo-maker-1 / demo-maker-1-secret",
        "demo-maker-2 / demo-maker-2-secret",
        "demo-maker-3 / demo-maker-3-secret"
      ]
    )
  })
})

import { randomBytes } from "node:crypto"
import * as path from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import { makeDatabaseLayer } from "@rfq/engine"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { testPostgresUrl } from "./auth/authFixtures.js"
import { REPO_ROOT, type SpawnedHost, spawnHost, spawnScript } from "./support/spawnHost.js"
import { RpcClient } from "./ws/wsClient.js"

/**
 * Class 1 of issue 12 the way an operator meets it: the host runs on PostgreSQL, and
 * `npm run admin -- client deactivate` (another process, writing the database) deactivates a
 * client whose sessions are open and idle. The host hears of it only through the database; its
 * sessions must still end within the 5 s REST documents, with 4003.
 */

const ADMIN = path.join(REPO_ROOT, "packages/host/src/admin.ts")
const schema = `rfq_admin_deact_${randomBytes(5).toString("hex")}`
const env = {
  DATABASE_URL: testPostgresUrl,
  DATABASE_SCHEMA: schema,
  JWT_SECRET: randomBytes(32).toString("hex"),
  ENCRYPTION_KEY: randomBytes(32).toString("hex"),
  DEMO: "1"
}
let host: SpawnedHost

const dropSchema = () =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      ).pipe(
        // Through a pool on that schema (already migrated by the host), dropped before the pool closes.
        Effect.provide(makeDatabaseLayer({ kind: "postgres", url: testPostgresUrl, schema }))
      )
    )
  )

beforeAll(async () => {
  host = await spawnHost({ env })
}, 180_000)

afterAll(async () => {
  await host?.stop()
  await dropSchema()
}, 60_000)

const wsUrl = () => `${host.url.replace(/^http/, "ws")}/ws/v1`

describe("npm run admin -- client deactivate while the client is connected", () => {
  it("closes its idle sessions within 5 s with 4003 account is inactive; REST and new logins are refused", async () => {
    const byCredentials = await RpcClient.connect(wsUrl())
    await byCredentials.result("auth", { clientId: "demo-maker-1", clientSecret: "demo-maker-1-secret" })
    const auth = await fetch(`${host.url}/v1/auth`, {
      method: "POST",
      body: JSON.stringify({ clientId: "demo-maker-1", clientSecret: "demo-maker-1-secret" })
    })
    const { access_token } = (await auth.json()) as { access_token: string }
    const byToken = await RpcClient.connect(wsUrl())
    await byToken.result("auth", { token: access_token })
    const bystander = await RpcClient.connect(wsUrl())
    await bystander.result("auth", { clientId: "demo-maker-2", clientSecret: "demo-maker-2-secret" })
    // Heartbeats keep the sessions open; nothing else is sent (idle).
    const beat = setInterval(() => {
      for (const c of [byCredentials, byToken, bystander]) c.send({ jsonrpc: "2.0", method: "heartbeat" })
    }, 1_000)
    try {
      const run = spawnScript(ADMIN, ["client", "deactivate", "demo-maker-1"], env)
      const exit = await run.exited
      const deactivatedAt = Date.now()
      expect([exit.code, exit.stdout.trim()]).toEqual([0, "client demo-maker-1 deactivated"])
      for (const session of [byCredentials, byToken]) {
        const closed = await session.closed
        expect(closed).toEqual({ code: 4003, reason: "account is inactive" })
      }
      // Both closes were awaited from the moment the command had committed and exited.
      expect(Date.now() - deactivatedAt).toBeLessThan(5_000)
      const rest = await fetch(`${host.url}/v1/rfq/quotes`, {
        headers: { authorization: `Bearer ${access_token}` }
      })
      expect([rest.status, ((await rest.json()) as { message: string }).message]).toEqual([
        401,
        "account is inactive"
      ])
      const again = await RpcClient.connect(wsUrl())
      const login = await again.call("auth", {
        clientId: "demo-maker-1",
        clientSecret: "demo-maker-1-secret"
      })
      expect(login.error.message).toBe("account is inactive")
      await again.close()
      expect((await bystander.call("v1/quote/list")).result).toBeDefined()
    } finally {
      clearInterval(beat)
      for (const c of [byCredentials, byToken, bystander]) await c.terminate()
    }
  }, 120_000)
})

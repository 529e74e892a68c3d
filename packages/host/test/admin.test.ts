import { mkdtempSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { REPO_ROOT, spawnHost, spawnScript } from "./support/spawnHost.js"

const ADMIN = path.join(REPO_ROOT, "packages/host/src/admin.ts")

const admin = async (dataDir: string, ...args: Array<string>) => {
  const run = spawnScript(ADMIN, args, { DATA_DIR: dataDir, DEMO: "0" })
  const exit = await run.exited
  return { code: exit.code, stdout: exit.stdout.trim(), stderr: exit.stderr.trim() }
}

describe("npm run admin, then the host", () => {
  it("provisions a desk, a user and an API client whose once-shown secret gets a token; /metrics counts it", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "rfq-admin-"))
    expect((await admin(dataDir, "desk", "create", "Acme")).stdout).toBe("desk 1 created: Acme")
    expect((await admin(dataDir, "user", "create", "Acme", "alice", "trader")).stdout).toBe(
      "user 1 created: alice (trader) on Acme"
    )
    const client = await admin(dataDir, "client", "create", "1")
    const clientId = /clientId: (\S+)/.exec(client.stdout)?.[1]
    const clientSecret = /clientSecret: (\S+)/.exec(client.stdout)?.[1]
    expect(clientId).toBeDefined()
    expect(clientSecret).toBeDefined()
    const bad = await admin(dataDir, "user", "create", "Nowhere", "bob", "trader")
    expect(bad.code).toBe(1)
    expect(bad.stderr).toBe("desk not found: Nowhere")

    const host = await spawnHost({ dataDir, env: { DEMO: "0" } })
    try {
      const token = await fetch(`${host.url}/v1/auth`, {
        method: "POST",
        body: JSON.stringify({ clientId, clientSecret })
      })
      expect(token.status).toBe(200)
      const { access_token } = (await token.json()) as { access_token: string }
      const makers = await fetch(`${host.url}/v1/exchange/maker`, {
        headers: { Authorization: `Bearer ${access_token}` }
      })
      expect(makers.status).toBe(200)
      expect(await makers.json()).toEqual([])
      const metrics = await (await fetch(`${host.url}/metrics`)).text()
      expect(metrics).toMatch(
        /rfq_http_requests_total\{route="\/v1\/exchange\/maker",method="GET",status="200"\} 1/
      )
      expect(metrics).toMatch(/rfq_open_rfqs 0/)
      expect(metrics).toMatch(/rfq_websocket_sessions 0/)
    } finally {
      await host.stop()
    }
  }, 180_000)
})

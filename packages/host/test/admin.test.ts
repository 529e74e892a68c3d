import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { REPO_ROOT, seedDataDir, spawnHost, spawnScript } from "./support/spawnHost.js"

const ADMIN = path.join(REPO_ROOT, "packages/host/src/admin.ts")

/** Every data directory a test made, removed after the file. */
const made: Array<string> = []
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix))
  made.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

const admin = async (dataDir: string, ...args: Array<string>) => adminWith({}, dataDir, ...args)

const adminWith = async (env: Readonly<Record<string, string>>, dataDir: string, ...args: Array<string>) => {
  await seedDataDir(dataDir)
  const run = spawnScript(ADMIN, args, { DATA_DIR: dataDir, DEMO: "0", ...env })
  const exit = await run.exited
  return { code: exit.code, stdout: exit.stdout.trim(), stderr: exit.stderr.trim() }
}

describe("npm run admin, then the host", () => {
  it("provisions a desk, a user and an API client whose once-shown secret gets a token; /metrics counts it", async () => {
    const dataDir = tempDir("rfq-admin-")
    expect((await admin(dataDir, "desk", "create", "Acme")).stdout.split("\n")[0]).toBe(
      "desk 1 created: Acme"
    )
    expect((await admin(dataDir, "user", "create", "Acme", "alice", "trader")).stdout).toBe(
      "user 1 created: alice (trader) on Acme\nnext: client create 1"
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

/** Every exchange-credentials secret a demo desk can read over the API, by credentials id. */
const credentialSecrets = async (url: string, clientId: string) => {
  const auth = await fetch(`${url}/v1/auth`, {
    method: "POST",
    body: JSON.stringify({ clientId, clientSecret: `${clientId}-secret` })
  })
  expect(auth.status).toBe(200)
  const { access_token } = (await auth.json()) as { access_token: string }
  const get = async (path: string) => {
    const answer = await fetch(`${url}${path}`, { headers: { Authorization: `Bearer ${access_token}` } })
    return { status: answer.status, body: (await answer.json()) as any }
  }
  const list = await get("/v1/account/exchange-credentials")
  expect(list.status).toBe(200)
  const secrets: Record<number, unknown> = {}
  for (const { credentialsId } of list.body as Array<{ credentialsId: number }>) {
    const one = await get(`/v1/account/exchange-credentials/${credentialsId}`)
    secrets[credentialsId] = one.status === 200 ? one.body.clientSecret : `${one.status} ${one.body.message}`
  }
  return secrets
}

describe("npm run admin -- credentials rotate-key", () => {
  it("re-encrypts every secret under the highest key; a host with only that key reads them unchanged", async () => {
    const dataDir = tempDir("rfq-admin-rotate-")
    const key1 = randomBytes(32).toString("hex")
    const key2 = randomBytes(32).toString("hex")
    const desks = ["demo-taker", "demo-maker-1"]

    // Demo data sealed under key version 1 (ENCRYPTION_KEY is version 1).
    const first = await spawnHost({ dataDir, env: { DEMO: "1", ENCRYPTION_KEY: key1 } })
    const before: Record<string, Record<number, unknown>> = {}
    try {
      for (const desk of desks) before[desk] = await credentialSecrets(first.url, desk)
    } finally {
      await first.stop()
    }
    expect(Object.keys(before["demo-taker"]!).length).toBeGreaterThan(1)
    for (const secrets of Object.values(before))
      for (const secret of Object.values(secrets)) expect(typeof secret).toBe("string")

    // Without key 1 in the ring nothing can be opened, and nothing is written.
    const withoutOld = await adminWith({ ENCRYPTION_KEYS: `2:${key2}` }, dataDir, "credentials", "rotate-key")
    expect(withoutOld.code).toBe(1)
    expect(withoutOld.stderr).toMatch(
      /^credentials \d+ cannot be re-encrypted \(encryption key not found\); nothing was rewritten/
    )

    const ring = { ENCRYPTION_KEYS: `1:${key1},2:${key2}` }
    const rotated = await adminWith(ring, dataDir, "credentials", "rotate-key")
    expect(rotated.stderr).toBe("")
    expect(rotated.code).toBe(0)
    const count = Number(
      /^(\d+) credential secrets re-encrypted under key version 2 \(0 already under it\)$/.exec(
        rotated.stdout
      )?.[1]
    )
    expect(count).toBeGreaterThanOrEqual(Object.keys(before["demo-taker"]!).length)
    const again = await adminWith(ring, dataDir, "credentials", "rotate-key")
    expect(again.code).toBe(0)
    expect(again.stdout).toBe(
      `0 credential secrets re-encrypted under key version 2 (${count} already under it)`
    )

    // Key 1 retired: the host opens every secret with key 2 alone.
    const second = await spawnHost({ dataDir, env: { DEMO: "1", ENCRYPTION_KEYS: `2:${key2}` } })
    try {
      for (const desk of desks) expect(await credentialSecrets(second.url, desk)).toEqual(before[desk])
    } finally {
      await second.stop()
    }
  }, 240_000)

  it("refuses extra arguments, and a bad ring with one line", async () => {
    const dataDir = tempDir("rfq-admin-rotate-")
    const extra = await admin(dataDir, "credentials", "rotate-key", "now")
    expect(extra.code).toBe(1)
    expect(extra.stderr).toBe(
      'credentials rotate-key: unexpected argument "now"\nusage: npm run admin -- credentials rotate-key'
    )
    const bad = await adminWith({ ENCRYPTION_KEYS: "1:abcd" }, dataDir, "credentials", "rotate-key")
    expect(bad.code).toBe(1)
    expect(bad.stderr).toBe(
      "invalid configuration: ENCRYPTION_KEYS entry 1 (version 1): the key must be 64 hex characters or the base64 encoding of 32 bytes"
    )
  }, 60_000)
})

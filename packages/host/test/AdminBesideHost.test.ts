import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { acquireSync, releaseSync } from "../src/DataDirLock.js"
import { makeTempDir, REPO_ROOT, type SpawnedHost, spawnHost, spawnScript } from "./support/spawnHost.js"
import { RpcClient } from "./ws/wsClient.js"

/**
 * `npm run admin` beside a running embedded host (issue 17, item 4): the host holds the data
 * directory, so the command goes through its admin socket, and what it changes takes effect at
 * once. One host (spawned as `npm start` runs it) serves the whole file; its data directory and the
 * host are removed at the end.
 */

const ADMIN = path.join(REPO_ROOT, "packages/host/src/admin.ts")
let host: SpawnedHost
let dataDir: string

const admin = async (...args: Array<string>) => {
  const exit = await spawnScript(ADMIN, args, { DATA_DIR: dataDir, DEMO: "0" }).exited
  return { code: exit.code, stdout: exit.stdout.trim(), stderr: exit.stderr.trim() }
}

const login = (clientId: string, clientSecret: string) =>
  fetch(`${host.url}/v1/auth`, { method: "POST", body: JSON.stringify({ clientId, clientSecret }) })

const tokenOf = async (clientId: string, clientSecret: string) => {
  const answer = await login(clientId, clientSecret)
  expect(answer.status).toBe(200)
  return ((await answer.json()) as { access_token: string }).access_token
}

const get = async (url: string, token: string) => {
  const answer = await fetch(`${host.url}${url}`, { headers: { authorization: `Bearer ${token}` } })
  return { status: answer.status, body: (await answer.json()) as any }
}

/** A new API client through the running host: its id and once-shown secret. */
const newClient = async (userId: number) => {
  const made = await admin("client", "create", String(userId))
  expect(made.code).toBe(0)
  return {
    clientId: /^clientId: (\S+)$/m.exec(made.stdout)![1]!,
    clientSecret: /^clientSecret: (\S+)$/m.exec(made.stdout)![1]!
  }
}

/** A session authenticated with the client, kept open with heartbeats until it closes. */
const openSession = async (clientId: string, clientSecret: string) => {
  const session = await RpcClient.connect(`${host.url.replace(/^http/, "ws")}/ws/v1`)
  await session.result("auth", { clientId, clientSecret })
  const beat = setInterval(() => session.send({ jsonrpc: "2.0", method: "heartbeat" }), 1_000)
  void session.closed.then(() => clearInterval(beat))
  return session
}

/**
 * A command sent straight to the socket, as `npm run admin` sends it: used where the test shows a
 * change taking effect at once, so that no process start (seconds) lies between a cached read and
 * the change, which the caches' own 5 s lifetime could otherwise cover.
 */
const viaSocket = async (...args: Array<string>) =>
  JSON.parse(await rawExchange(`${JSON.stringify({ args })}\n`)) as {
    ok: boolean
    output?: string
    error?: string
  }

/** One raw exchange on the admin socket: what the host answers to `text`, until it closes. */
const rawExchange = (text: string | Buffer) =>
  new Promise<string>((resolve, reject) => {
    const socket = net.createConnection(path.join(dataDir, "admin.sock"))
    let received = ""
    socket.setEncoding("utf8")
    socket.on("connect", () => socket.end(text))
    socket.on("data", (chunk: string) => (received += chunk))
    socket.on("close", () => resolve(received))
    socket.on("error", reject)
  })

beforeAll(async () => {
  dataDir = makeTempDir("rfq-admin-host-")
  host = await spawnHost({ dataDir, env: { DEMO: "0" } })
}, 180_000)

afterAll(async () => {
  await host?.stop()
  fs.rmSync(dataDir, { recursive: true, force: true })
}, 60_000)

describe("npm run admin while the host runs (embedded)", () => {
  it("answers --help and a command's --help with descriptions, without touching the lock", async () => {
    const help = await admin("--help")
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/^usage: npm run admin -- <command>/)
    expect(help.stdout).toMatch(/^ {2}user list \[<desk>\] +list the users: desk, roles, active, client ids/m)
    expect(help.stdout).toContain("POST /v1/account/exchange-credentials")
    const one = await admin("counterparty", "add", "--help")
    expect(one.code).toBe(0)
    expect(one.stdout).toMatch(
      /^usage: npm run admin -- counterparty add <desk> <counterparty> \[--no-block-trade\]\n/
    )
    expect(one.stdout).toMatch(/^ {2}<counterparty> +the counterparty desk, by name/m)
    expect(one.stdout).toMatch(/^ {2}--no-block-trade +the counterparty may not use bulk block trades$/m)
    const noun = await admin("desk", "-h")
    expect(noun.stdout.split("\n").filter((l) => l.startsWith("  desk "))).toHaveLength(2)
    // The host still holds its lock and answers.
    expect((await fetch(`${host.url}/readyz`)).status).toBe(200)
  }, 60_000)

  it("provisions a desk, a user and a client that logs in at once; user list shows it, never a secret", async () => {
    const desk = await admin("desk", "create", "Acme")
    expect(desk.code).toBe(0)
    expect(desk.stdout).toMatch(/^desk \d+ created: Acme\n/)
    expect(desk.stdout).toContain("needs exchange credentials")
    expect(desk.stdout).toContain("POST /v1/account/exchange-credentials")
    const user = await admin("user", "create", "Acme", "alice", "trader")
    const userId = Number(/^user (\d+) created: alice \(trader\) on Acme$/m.exec(user.stdout)?.[1])
    const { clientId, clientSecret } = await newClient(userId)
    expect(await get("/v1/exchange/maker", await tokenOf(clientId, clientSecret))).toEqual({
      status: 200,
      body: []
    })

    const list = await admin("user", "list", "Acme")
    expect(list.code).toBe(0)
    expect(list.stdout.split("\n")).toEqual([
      "id\tname\tdesk\troles\tstanding\tclients",
      `${userId}\talice\tAcme\ttrader\tactive\t${clientId} (active)`
    ])
    expect(list.stdout).not.toContain(clientSecret)
  }, 120_000)

  it("a maker made through the host is listed at once by a host that had the list cached", async () => {
    await admin("desk", "create", "MakerDesk")
    const user = await admin("user", "create", "MakerDesk", "mia", "trader")
    const { clientId, clientSecret } = await newClient(Number(/^user (\d+)/.exec(user.stdout)![1]))
    const token = await tokenOf(clientId, clientSecret)
    const before = await get("/v1/exchange/maker", token)
    expect(before.body.some((m: { makerId: string }) => m.makerId === "mk-acme")).toBe(false)
    expect(await viaSocket("maker", "create", "MakerDesk", "mk-acme")).toEqual({
      ok: true,
      output: "maker mk-acme created for MakerDesk"
    })
    const after = await get("/v1/exchange/maker", token)
    expect(after.body.map((m: { makerId: string }) => m.makerId)).toContain("mk-acme")
    // The host's own key ring: it seals and opens the desk's secrets (none here yet).
    expect(await viaSocket("credentials", "rotate-key")).toEqual({
      ok: true,
      output: "0 credential secrets re-encrypted under key version 1 (0 already under it)"
    })
  }, 120_000)

  it("client deactivate: REST refuses the token at once and the client's open session is closed with 4003", async () => {
    await admin("desk", "create", "Gone")
    const user = await admin("user", "create", "Gone", "gus", "trader")
    const userId = Number(/^user (\d+)/.exec(user.stdout)![1])
    const doomed = await newClient(userId)
    const other = await newClient(userId)
    const token = await tokenOf(doomed.clientId, doomed.clientSecret)
    const otherToken = await tokenOf(other.clientId, other.clientSecret)
    // Cached as standing on the host before the change.
    expect((await get("/v1/rfq/quotes", token)).status).toBe(200)
    const session = await openSession(doomed.clientId, doomed.clientSecret)
    const bystander = await openSession(other.clientId, other.clientSecret)
    try {
      expect((await get("/v1/rfq/quotes", token)).status).toBe(200)
      const off = await viaSocket("client", "deactivate", doomed.clientId)
      expect(off).toEqual({ ok: true, output: `client ${doomed.clientId} deactivated` })
      expect(await get("/v1/rfq/quotes", token)).toEqual({
        status: 401,
        body: expect.objectContaining({ message: "account is inactive" })
      })
      expect(await session.closed).toEqual({ code: 4003, reason: "account is inactive" })
      expect((await login(doomed.clientId, doomed.clientSecret)).status).toBe(401)
      // The user's other client is untouched.
      expect((await get("/v1/rfq/quotes", otherToken)).status).toBe(200)
      expect((await bystander.result("v1/quote/list")) !== undefined).toBe(true)

      expect((await get("/v1/rfq/quotes", otherToken)).status).toBe(200)
      const userOff = await admin("user", "deactivate", String(userId))
      expect([userOff.code, userOff.stdout]).toEqual([0, `user ${userId} deactivated`])
      expect((await get("/v1/rfq/quotes", otherToken)).status).toBe(401)
      expect(await bystander.closed).toEqual({ code: 4003, reason: "account is inactive" })
      const list = await admin("user", "list", "Gone")
      expect(list.stdout.split("\n")[1]).toBe(
        `${userId}\tgus\tGone\ttrader\tinactive\t${doomed.clientId} (inactive), ${other.clientId} (active)`
      )
    } finally {
      await session.terminate()
      await bystander.terminate()
    }
  }, 120_000)

  it("wrong arguments: one line saying what is wrong, then that command's usage only", async () => {
    const role = await admin("user", "create", "Acme", "bob", "admin")
    expect([role.code, role.stdout]).toEqual([1, ""])
    expect(role.stderr).toBe(
      'user create: <role> must be trader or viewer, got "admin"\nusage: npm run admin -- user create <desk> <name> <role>'
    )
    const missing = await admin("maker", "create", "Acme")
    expect(missing.stderr).toBe(
      "maker create: missing <makerId>\nusage: npm run admin -- maker create <desk> <makerId>"
    )
    const id = await admin("client", "create", "1e3")
    expect(id.stderr.split("\n")[0]).toBe(
      'client create: <userId> must be a positive whole number, got "1e3"'
    )
    const option = await admin("desk", "list", "--all")
    expect(option.stderr).toBe('desk list: unknown option "--all"\nusage: npm run admin -- desk list')
    const unknown = await admin("desk", "remove", "Acme")
    expect(unknown.stderr.split("\n")[0]).toBe('unknown command "desk remove"')
    expect(unknown.stderr).not.toContain("user create")
    const absent = await admin("user", "create", "Nowhere", "bob", "trader")
    expect([absent.code, absent.stderr]).toEqual([1, "desk not found: Nowhere"])
    const twice = await admin("desk", "create", "Acme")
    expect([twice.code, twice.stderr]).toEqual([1, 'a desk named "Acme" already exists'])
  }, 120_000)

  it("hostile names are refused with the API's text rules, on the command line and on the socket", async () => {
    const terminalEscape = await admin("desk", "create", "evil\u001b[2Jdesk")
    expect(terminalEscape.stderr.split("\n")[0]).toBe(
      "desk create: <name> must not contain the control character U+001B"
    )
    const csi = await admin("user", "create", "Acme", "x\u009b31m", "viewer")
    expect(csi.stderr.split("\n")[0]).toBe(
      "user create: <name> must not contain the control character U+009B"
    )
    const blank = await admin("desk", "create", "   ")
    expect(blank.stderr.split("\n")[0]).toBe("desk create: <name> must not be empty")
    const long = await admin("maker", "create", "Acme", "m".repeat(65))
    expect(long.stderr.split("\n")[0]).toBe("maker create: <makerId> must be at most 64 characters")
    // Right-to-left text and emoji are names like any other.
    expect((await admin("desk", "create", "مكتب 🚀")).code).toBe(0)

    // What no command line can carry (U+0000, a lone surrogate) the socket refuses just the same.
    const nul = JSON.parse(await rawExchange('{"args":["desk","create","a\\u0000b"]}\n'))
    expect(nul).toEqual({
      ok: false,
      error:
        "desk create: <name> must not contain the control character U+0000\nusage: npm run admin -- desk create <name>"
    })
    const surrogate = JSON.parse(await rawExchange('{"args":["user","create","Acme","\\ud800","viewer"]}\n'))
    expect(surrogate.error.split("\n")[0]).toBe(
      "user create: <name> must not contain a lone surrogate (U+D800)"
    )
    expect(JSON.parse(await rawExchange("not json\n"))).toEqual({
      ok: false,
      error: 'expected one JSON object per line: {"args": ["desk", "list"]}'
    })
    // A line the admin ends its side without finishing: answered, not run, not silently dropped.
    expect(JSON.parse(await rawExchange('{"args":["desk","create","half"]}'))).toEqual({
      ok: false,
      error: "the request line must end with a newline; nothing was run"
    })
    expect(JSON.parse(await rawExchange(Buffer.alloc(70_000, "a")))).toEqual({
      ok: false,
      error: "a request line is at most 65536 bytes"
    })
    const listed = (await admin("desk", "list")).stdout
    expect(listed).not.toContain("evil")
    expect(listed).not.toContain("half")
    expect(listed).not.toContain("a\u0000b")
    expect(listed).toContain("مكتب 🚀")
  }, 120_000)

  it("the socket is the host user's only (0600)", () => {
    const mode = fs.statSync(path.join(dataDir, "admin.sock")).mode & 0o777
    expect(mode).toBe(0o600)
  })
})

describe("npm run admin without a host to answer", () => {
  it("says so in one line when another process holds the directory and nothing answers", async () => {
    const other = makeTempDir("rfq-admin-held-")
    // This test process holds the lock, as a host still opening its database would.
    const held = acquireSync(other)
    if (!("token" in held)) throw held
    try {
      const exit = await spawnScript(ADMIN, ["desk", "list"], { DATA_DIR: other, DEMO: "0" }).exited
      expect(exit.code).toBe(1)
      expect(exit.stderr.trim()).toBe(
        `data directory ${other} is locked by another process (pid ${process.pid}), and nothing answers on ${path.join(other, "admin.sock")} (no socket there): a host still starting, or another npm run admin; try again in a moment`
      )
      // Help needs nothing.
      const help = await spawnScript(ADMIN, ["desk", "create", "--help"], { DATA_DIR: other }).exited
      expect([help.code, help.stdout.split("\n")[0]]).toEqual([
        0,
        "usage: npm run admin -- desk create <name>"
      ])
    } finally {
      releaseSync(other, held.token)
      fs.rmSync(other, { recursive: true, force: true })
    }
  }, 60_000)
})

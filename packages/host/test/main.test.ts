import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { LOCK_FILE } from "../src/DataDirLock.js"
import { ENCRYPTION_KEY_FILE, JWT_SECRET_FILE } from "../src/Secrets.js"
import { HOST_MAIN, logMessage, makeTempDir, runToExit, spawnHost } from "./support/spawnHost.js"

// Every test starts real processes (tsx, and PGlite's first start runs initdb): seconds each, more
// on a busy machine. The timeouts bound a hang; no assertion depends on time.
const PROCESS_TIMEOUT_MS = 240_000
// Trust authentication on the local server, as the engine's tests use it; the user is explicit
// because an environment without USER gives node-postgres no default.
const POSTGRES_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

const getJson = async (url: string, init?: RequestInit) => {
  const response = await fetch(url, init)
  return { status: response.status, body: (await response.json()) as unknown }
}

const messages = (stdout: string): ReadonlyArray<string> =>
  stdout
    .split("\n")
    .map(logMessage)
    .filter((m): m is string => m !== undefined)

describe("the host process on embedded PGlite", () => {
  it(
    "serves health, readiness and the standard errors, refuses a second process on its data directory, and exits 0 on SIGTERM with the lock released",
    async () => {
      // A user's first start: PGlite runs initdb itself here, not seeded as elsewhere.
      const host = await spawnHost({ initdb: true })
      const dataDir = host.dataDir!
      try {
        expect(await getJson(`${host.url}/healthz`)).toEqual({ status: 200, body: { status: "ok" } })
        expect(await getJson(`${host.url}/readyz`)).toEqual({ status: 200, body: { status: "ready" } })
        expect(await getJson(`${host.url}/v1/nothing-here`)).toEqual({
          status: 404,
          body: { code: 404, message: "not found" }
        })
        const wrongMethod = await getJson(`${host.url}/healthz`, { method: "DELETE" })
        expect(wrongMethod.status).toBe(405)
        expect(wrongMethod.body).toMatchObject({ code: 405, message: "method not allowed" })
        const tooLarge = await getJson(`${host.url}/healthz`, {
          method: "POST",
          body: new Uint8Array(1024 * 1024 + 1)
        })
        expect(tooLarge.status).toBe(413)
        expect(tooLarge.body).toMatchObject({ code: 413, message: "request body too large" })

        const second = await runToExit(HOST_MAIN, { PORT: "0", DATA_DIR: dataDir })
        expect(second.code).toBe(1)
        expect(second.stderr.trimEnd().split("\n")).toEqual([
          `data directory ${dataDir} is locked by another process (pid ${host.child.pid})`
        ])
        expect(messages(second.stdout)).not.toContainEqual(expect.stringMatching(/^listening on /))
        // The refused process must not have touched the holder's lock.
        expect(JSON.parse(fs.readFileSync(path.join(dataDir, LOCK_FILE), "utf8")).pid).toBe(host.child.pid)
      } finally {
        const exit = await host.stop("SIGTERM")
        expect({ code: exit.code, signal: exit.signal }).toEqual({ code: 0, signal: null })
      }
      expect(fs.existsSync(path.join(dataDir, LOCK_FILE))).toBe(false)
      expect(messages(host.output().stdout)).toEqual(expect.arrayContaining(["shutting down", "stopped"]))
      for (const name of [ENCRYPTION_KEY_FILE, JWT_SECRET_FILE]) {
        expect(fs.statSync(path.join(dataDir, name)).mode & 0o777).toBe(0o600)
      }
    },
    PROCESS_TIMEOUT_MS
  )

  it(
    "after a SIGKILL the next start takes over the stale lock, reuses the generated keys and keeps serving",
    async () => {
      const dataDir = makeTempDir()
      const keys = () =>
        [ENCRYPTION_KEY_FILE, JWT_SECRET_FILE].map((f) => fs.readFileSync(path.join(dataDir, f), "utf8"))
      const first = await spawnHost({ dataDir })
      const generated = keys()
      const killed = await first.stop("SIGKILL")
      expect(killed.signal).toBe("SIGKILL")
      expect(fs.existsSync(path.join(dataDir, LOCK_FILE))).toBe(true)

      const second = await spawnHost({ dataDir })
      try {
        expect(await getJson(`${second.url}/readyz`)).toEqual({ status: 200, body: { status: "ready" } })
        expect(keys()).toEqual(generated)
      } finally {
        expect((await second.stop("SIGINT")).code).toBe(0)
      }
      expect(fs.existsSync(path.join(dataDir, LOCK_FILE))).toBe(false)
    },
    PROCESS_TIMEOUT_MS
  )
})

describe("the host process with a bad configuration", () => {
  it(
    "prints one line naming the variable on stderr, nothing on stdout, and exits 1",
    async () => {
      const cases: ReadonlyArray<readonly [Record<string, string>, string]> = [
        [{ PORT: "abc" }, 'invalid configuration: PORT must be an integer between 0 and 65535, got "abc"'],
        [
          { DATABASE_URL: "mysql://db/x" },
          "invalid configuration: DATABASE_URL must be a postgres:// or postgresql:// URL"
        ],
        [
          { DATABASE_URL: POSTGRES_URL },
          "invalid configuration: ENCRYPTION_KEY or ENCRYPTION_KEYS is required when DATABASE_URL is set; JWT_SECRET is required when DATABASE_URL is set"
        ]
      ]
      const exits = await Promise.all(cases.map(([env]) => runToExit(HOST_MAIN, env)))
      exits.forEach((exit, i) => {
        expect({ code: exit.code, stderr: exit.stderr, stdout: exit.stdout }).toEqual({
          code: 1,
          stderr: `${cases[i]![1]}\n`,
          stdout: ""
        })
      })
    },
    PROCESS_TIMEOUT_MS
  )
})

describe("the host process on PostgreSQL", () => {
  it(
    "starts on DATABASE_URL without touching DATA_DIR, is ready, and exits 0 on SIGTERM",
    async () => {
      const schema = `host_test_${randomBytes(4).toString("hex")}`
      const dataDir = path.join(makeTempDir(), "unused")
      try {
        const host = await spawnHost({
          env: {
            DATABASE_URL: POSTGRES_URL,
            DATABASE_SCHEMA: schema,
            DATA_DIR: dataDir,
            DEMO: "1",
            ENCRYPTION_KEY: randomBytes(32).toString("hex"),
            JWT_SECRET: randomBytes(32).toString("base64url")
          }
        })
        try {
          expect(await getJson(`${host.url}/readyz`)).toEqual({ status: 200, body: { status: "ready" } })
          expect(messages(host.output().stdout)).toContain("database ready")
          // The demo clients' secrets are public: their hashes take the demo cost, and still verify.
          const hashes = await Effect.runPromise(
            Effect.gen(function* () {
              const sql = yield* PgClient.PgClient
              return yield* sql.unsafe<{ hash: string }>(
                `SELECT secret_hash AS hash FROM ${schema}.api_clients`
              )
            }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(POSTGRES_URL) })))
          )
          expect(hashes.length).toBeGreaterThan(0)
          for (const { hash } of hashes) expect(hash).toMatch(/^scrypt\$1024\$8\$1\$/)
          const login = (clientSecret: string) =>
            getJson(`${host.url}/v1/auth`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ clientId: "demo-taker", clientSecret })
            })
          expect((await login("demo-taker-secret")).status).toBe(200)
          expect((await login("demo-taker-secret ")).status).toBe(401)
        } finally {
          expect((await host.stop("SIGTERM")).code).toBe(0)
        }
        expect(fs.existsSync(dataDir)).toBe(false)
        expect(host.output().stdout).not.toContain("postgres://")
      } finally {
        await Effect.runPromise(
          Effect.gen(function* () {
            const sql = yield* PgClient.PgClient
            yield* sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
          }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(POSTGRES_URL) })))
        )
      }
    },
    PROCESS_TIMEOUT_MS
  )
})

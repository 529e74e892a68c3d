import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { seedPgliteDataDir } from "@rfq/engine"
import { PGLITE_SUBDIR } from "@rfq/host"

/**
 * The real host as a child process, started the way `npm start` starts it, for tests that must
 * kill it (SIGKILL), restart it on the same data, or watch its memory. The host's own test support
 * is not part of its package's public surface, hence this small copy.
 */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..")
const HOST_MAIN = path.join(REPO_ROOT, "packages/host/src/main.ts")

/** Variables the host reads; dropped from the inherited environment so every start is explicit. */
const HOST_VARIABLES = [
  "PORT",
  "HOST",
  "DATABASE_URL",
  "DATABASE_SCHEMA",
  "DATA_DIR",
  "DEMO",
  "RATE_LIMIT_PER_MINUTE",
  "WS_RATE_LIMIT_PER_MINUTE",
  "LOGIN_FAILURES_PER_MINUTE",
  "WS_HEARTBEAT_TIMEOUT_MS",
  "WS_MAX_BACKPRESSURE_BYTES",
  "RFQ_TTL_SECONDS",
  "DATABASE_QUERY_TIMEOUT_MS",
  "ENCRYPTION_KEY",
  "ENCRYPTION_KEYS",
  "JWT_SECRET",
  "LOG_LEVEL",
  "RUNNER_ADDRESS",
  "NATS_URL",
  "REDIS_URL"
]

export interface HostExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface RunningHost {
  readonly url: string
  readonly pid: number
  readonly child: ChildProcess
  readonly exited: Promise<HostExit>
  readonly stdout: () => string
  readonly stderr: () => string
  /** Sends `signal` and waits for the exit. */
  readonly stop: (signal?: NodeJS.Signals) => Promise<HostExit>
  /** Resident set size in bytes (Linux /proc), or undefined once the process is gone. */
  readonly rss: () => number | undefined
}

const LISTENING = /"message":"listening on (http:\/\/[^"]+)"/

// Hosts still running when the test process exits (an interrupted run) are killed with it.
const children = new Set<ChildProcess>()
process.on("exit", () => {
  for (const child of children) child.kill("SIGKILL")
})

export const makeTempDir = (prefix: string): string => fs.mkdtempSync(path.join(os.tmpdir(), prefix))

export const readRss = (pid: number): number | undefined => {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
    const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1]
    return kb === undefined ? undefined : Number(kb) * 1024
  } catch {
    return undefined
  }
}

/** Starts the host with exactly `env` (plus PATH and the like) and waits until it listens. */
export const startHost = async (
  env: Readonly<Record<string, string>>,
  timeoutMs = 180_000,
  onSpawn?: (child: ChildProcess) => void
): Promise<RunningHost> => {
  // An embedded host's empty data directory gets an initialised empty cluster instead of running
  // initdb (`seedPgliteDataDir`: seconds of CPU per start, PGlite's work, not what these items test).
  if (env.DATA_DIR !== undefined && env.DATA_DIR !== "" && (env.DATABASE_URL ?? "") === "")
    await seedPgliteDataDir(path.join(env.DATA_DIR, PGLITE_SUBDIR))
  return listeningHost(env, timeoutMs, onSpawn)
}

const listeningHost = (
  env: Readonly<Record<string, string>>,
  timeoutMs: number,
  onSpawn?: (child: ChildProcess) => void
): Promise<RunningHost> => {
  const base: NodeJS.ProcessEnv = { ...process.env }
  for (const name of HOST_VARIABLES) delete base[name]
  const child = spawn(
    process.execPath,
    // --liftoff-only: as the host's test support starts hosts (its spawnHost.ts, TEST_NODE_FLAGS).
    ["--conditions=source", "--enable-source-maps", "--liftoff-only", "--import", "tsx", HOST_MAIN],
    { cwd: REPO_ROOT, env: { ...base, PORT: "0", ...env }, stdio: ["ignore", "pipe", "pipe"] }
  )
  children.add(child)
  child.on("close", () => children.delete(child))
  onSpawn?.(child)
  let out = ""
  let err = ""
  // Only the tail is kept: a long run must not grow the test runner's memory.
  const keep = (text: string) => (text.length > 200_000 ? text.slice(-100_000) : text)
  const exited = new Promise<HostExit>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal }))
  )
  return new Promise<RunningHost>((resolve, reject) => {
    let listening = false
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`host did not listen within ${timeoutMs} ms\n${out}\n${err}`))
    }, timeoutMs)
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      out = keep(out + chunk)
      if (listening) return
      const match = LISTENING.exec(out)
      if (match === null) return
      listening = true
      clearTimeout(timer)
      const pid = child.pid!
      resolve({
        url: match[1]!,
        pid,
        child,
        exited,
        stdout: () => out,
        stderr: () => err,
        stop: (signal = "SIGTERM") => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal)
          return exited
        },
        rss: () => readRss(pid)
      })
    })
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      err = keep(err + chunk)
    })
    void exited.then((exit) => {
      if (listening) return
      clearTimeout(timer)
      reject(new Error(`host exited (${exit.code ?? exit.signal}) before listening\n${out}\n${err}`))
    })
  })
}

export const DEFAULT_PG_URL = "postgres://postgres@127.0.0.1:5432/test"

/** A fresh schema name, so concurrent runs on one PostgreSQL never meet. */
export const randomSchema = (prefix = "rel"): string =>
  `${prefix}_${Date.now().toString(36)}_${Math.floor(Math.random() * 1e9).toString(36)}`

/** Fixed secrets for a PostgreSQL start (required there) or to forge tokens with a known key. */
export const TEST_JWT_SECRET = "reliability-jwt-secret-0123456789abcdef"
export const TEST_ENCRYPTION_KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

export type Backend = "pglite" | "postgres"

/** The environment of a host on `backend`; the same value restarts it on the same data. */
export const hostEnv = (
  backend: Backend,
  place: { readonly dataDir: string; readonly schema: string },
  extra: Readonly<Record<string, string>> = {}
): Record<string, string> => ({
  DATA_DIR: place.dataDir,
  DEMO: "1",
  RATE_LIMIT_PER_MINUTE: "1000000",
  WS_RATE_LIMIT_PER_MINUTE: "1000000",
  // Runs that send wrong secrets from one address on purpose (fuzzing, hostile text) must not lock
  // out their own logins; the guessing item sets the real limit again.
  LOGIN_FAILURES_PER_MINUTE: "1000000",
  JWT_SECRET: TEST_JWT_SECRET,
  ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
  ...(backend === "postgres"
    ? { DATABASE_URL: process.env.RELIABILITY_DATABASE_URL ?? DEFAULT_PG_URL, DATABASE_SCHEMA: place.schema }
    : {}),
  ...extra
})

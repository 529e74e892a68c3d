import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { seedPgliteDataDir } from "@rfq/engine"
import { PGLITE_SUBDIR } from "../../src/Host.js"

/**
 * Starts real processes the way `npm start` does, for black-box tests: the host itself
 * (`spawnHost`) or any TypeScript script (`spawnScript`, `runToExit`).
 */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..")
export const HOST_MAIN = path.join(REPO_ROOT, "packages/host/src/main.ts")

/** The variables the host reads; stripped from the inherited environment so tests start clean. */
export const HOST_VARIABLES = [
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
  "ENCRYPTION_KEY",
  "ENCRYPTION_KEYS",
  "JWT_SECRET",
  "LOG_LEVEL"
] as const

export interface Output {
  readonly stdout: string
  readonly stderr: string
}

export interface ProcessExit extends Output {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface Spawned {
  readonly child: ChildProcess
  readonly output: () => Output
  /** Settles when the process has exited. */
  readonly exited: Promise<ProcessExit>
  /** Resolves with the first stdout line that satisfies `predicate`; rejects if the process exits first. */
  readonly waitForLine: (predicate: (line: string) => boolean, timeoutMs?: number) => Promise<string>
}

const cleanEnv = (env: Readonly<Record<string, string>>): NodeJS.ProcessEnv => {
  const base: NodeJS.ProcessEnv = { ...process.env }
  for (const name of HOST_VARIABLES) delete base[name]
  return { ...base, ...env }
}

const newestMtime = (dir: string): number => {
  let newest = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : fs.statSync(full).mtimeMs)
  }
  return newest
}

/**
 * The compiled JavaScript of a package source file (`packages/x/src/y.ts` → `packages/x/dist/y.js`)
 * when `tsc -b` has built it after the last source change (as `npm test` does first): starting
 * from JavaScript skips transpiling the whole engine in every spawned process, which dominates
 * start time on a busy machine. Otherwise the source runs through tsx, as `npm start` does.
 */
const compiledEntry = (script: string): string | undefined => {
  const match = /^(.*\/packages\/[^/]+)\/src\/(.+)\.ts$/.exec(script)
  if (match === null) return undefined
  const compiled = path.join(match[1]!, "dist", `${match[2]}.js`)
  if (!fs.existsSync(compiled)) return undefined
  // tsc -b rewrites a package's build info whenever it rebuilds it; outputs it did not change keep
  // their old times, so freshness is judged by the build info against the newest source.
  const fresh = ["packages/engine", "packages/host"].every((pkg) => {
    const info = path.join(REPO_ROOT, pkg, "build/src.tsbuildinfo")
    return fs.existsSync(info) && fs.statSync(info).mtimeMs >= newestMtime(path.join(REPO_ROOT, pkg, "src"))
  })
  return fresh ? compiled : undefined
}

/**
 * V8 flags of every process the tests start. `--liftoff-only`: PGlite's WebAssembly runs on V8's
 * baseline code and is never recompiled by the optimising tier, which costs about 2 s of CPU per
 * host start on a two-core VM and pays back nothing at test sizes (spec.test: 89 → 64 s of CPU).
 * Only how fast the code runs changes, not what it does; `npm start` and the bench keep V8's
 * defaults (docs/storage.md, Tests).
 */
export const TEST_NODE_FLAGS: ReadonlyArray<string> = ["--enable-source-maps", "--liftoff-only"]

export const spawnScript = (
  script: string,
  args: ReadonlyArray<string> = [],
  env: Readonly<Record<string, string>> = {}
): Spawned => {
  const compiled = compiledEntry(script)
  const nodeArgs =
    compiled === undefined
      ? [...TEST_NODE_FLAGS, "--conditions=source", "--import", "tsx", script, ...args]
      : [...TEST_NODE_FLAGS, compiled, ...args]
  const child = spawn(process.execPath, nodeArgs, {
    cwd: REPO_ROOT,
    env: cleanEnv(env),
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  const lineListeners = new Set<(line: string) => void>()
  let partial = ""
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk
    partial += chunk
    const lines = partial.split("\n")
    partial = lines.pop() ?? ""
    for (const line of lines) for (const listener of lineListeners) listener(line)
  })
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  const output = () => ({ stdout, stderr })
  const exited = new Promise<ProcessExit>((resolve) => {
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))
  })

  const waitForLine = (predicate: (line: string) => boolean, timeoutMs = 60_000) =>
    new Promise<string>((resolve, reject) => {
      const seen = stdout.split("\n").find(predicate)
      if (seen !== undefined) return resolve(seen)
      const timer = setTimeout(() => {
        lineListeners.delete(listener)
        reject(new Error(`no matching line within ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`))
      }, timeoutMs)
      const listener = (line: string) => {
        if (!predicate(line)) return
        clearTimeout(timer)
        lineListeners.delete(listener)
        resolve(line)
      }
      lineListeners.add(listener)
      void exited.then((exit) => {
        clearTimeout(timer)
        lineListeners.delete(listener)
        reject(
          new Error(
            `process exited (code ${exit.code}, signal ${exit.signal}) before a matching line\n` +
              `stdout:\n${exit.stdout}\nstderr:\n${exit.stderr}`
          )
        )
      })
    })

  return { child, output, exited, waitForLine }
}

/** Runs a script to its end (killing it after `timeoutMs`) and returns its exit and output. */
export const runToExit = async (
  script: string,
  env: Readonly<Record<string, string>> = {},
  timeoutMs = 60_000
): Promise<ProcessExit> => {
  const spawned = spawnScript(script, [], env)
  const timer = setTimeout(() => spawned.child.kill("SIGKILL"), timeoutMs)
  try {
    return await spawned.exited
  } finally {
    clearTimeout(timer)
  }
}

export interface SpawnHostOptions {
  /** Extra environment; `PORT` defaults to 0 (any free port). */
  readonly env?: Readonly<Record<string, string>>
  /** Embedded data directory; a fresh temporary one unless given or `DATABASE_URL` is set. */
  readonly dataDir?: string
  readonly startTimeoutMs?: number
  /**
   * Let the host's PGlite run initdb on an empty data directory, as a user's first `npm start`
   * does. By default the directory gets a copy of an initialised empty cluster
   * (`seedPgliteDataDir`): initdb is PGlite's work, seconds of CPU per start, not ours to test.
   */
  readonly initdb?: boolean
}

export interface SpawnedHost {
  /** `http://127.0.0.1:<port>`, read from the host's "listening on" log line. */
  readonly url: string
  readonly dataDir: string | undefined
  readonly child: ChildProcess
  readonly output: () => Output
  readonly exited: Promise<ProcessExit>
  /** Sends `signal` (SIGTERM by default) and resolves with the exit. */
  readonly stop: (signal?: NodeJS.Signals) => Promise<ProcessExit>
}

const LISTENING = /^listening on (http:\/\/\S+)$/

/** The message of a JSON log line, or undefined for anything else. */
export const logMessage = (line: string): string | undefined => {
  try {
    const parsed: unknown = JSON.parse(line)
    return typeof parsed === "object" &&
      parsed !== null &&
      "message" in parsed &&
      typeof parsed.message === "string"
      ? parsed.message
      : undefined
  } catch {
    return undefined
  }
}

export const makeTempDir = (prefix = "rfq-host-"): string => fs.mkdtempSync(path.join(os.tmpdir(), prefix))

/**
 * Gives an embedded data directory an initialised empty cluster unless it has one
 * (`seedPgliteDataDir`), so the host or `npm run admin` started on it skips PGlite's initdb.
 */
export const seedDataDir = (dataDir: string): Promise<void> =>
  seedPgliteDataDir(path.join(dataDir, PGLITE_SUBDIR))

/** Starts the host as `npm start` does and waits until it listens. */
export const spawnHost = async (options: SpawnHostOptions = {}): Promise<SpawnedHost> => {
  const external = options.env?.DATABASE_URL !== undefined
  const dataDir = options.dataDir ?? (external ? undefined : makeTempDir())
  const env = { PORT: "0", ...(dataDir === undefined ? {} : { DATA_DIR: dataDir }), ...options.env }
  if (dataDir !== undefined && !external && options.initdb !== true) await seedDataDir(dataDir)
  const spawned = spawnScript(HOST_MAIN, [], env)
  let line: string
  try {
    line = await spawned.waitForLine((l) => LISTENING.test(logMessage(l) ?? ""), options.startTimeoutMs)
  } catch (error) {
    spawned.child.kill("SIGKILL")
    throw error
  }
  const url = LISTENING.exec(logMessage(line)!)![1]!
  const stop = (signal: NodeJS.Signals = "SIGTERM") => {
    if (spawned.child.exitCode === null && spawned.child.signalCode === null) spawned.child.kill(signal)
    return spawned.exited
  }
  return { url, dataDir, child: spawned.child, output: spawned.output, exited: spawned.exited, stop }
}

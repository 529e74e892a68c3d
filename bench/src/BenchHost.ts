import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { seedPgliteDataDir } from "@rfq/engine"
import { PGLITE_SUBDIR } from "@rfq/host"
import { dropSchema, freshSchemaName } from "./Postgres.js"
import { type Child, REPO_ROOT, spawnTs } from "./Processes.js"

export type DatabaseChoice = { readonly kind: "pglite" } | { readonly kind: "postgres"; readonly url: string }

export interface BenchHost {
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  /** `ws://127.0.0.1:<port>/ws/v1` */
  readonly wsUrl: string
  readonly database: DatabaseChoice["kind"]
  /** The PostgreSQL schema the host works in. */
  readonly schema: string | undefined
  readonly child: Child
  readonly stop: () => Promise<void>
}

export interface StartHostOptions {
  readonly database: DatabaseChoice
  /** Extra node flags for the host process (`--cpu-prof`, ...). */
  readonly nodeArgs?: ReadonlyArray<string>
  readonly env?: Readonly<Record<string, string>>
  readonly startTimeoutMs?: number
  /**
   * PostgreSQL: work in this schema, which the caller owns (several hosts of one service share
   * it; it is not dropped when the host stops). Default: a fresh schema of the host's own.
   */
  readonly schema?: string
}

const HOST_MAIN = path.join(REPO_ROOT, "packages/host/src/main.ts")
/**
 * `BENCH_COMPILED=1` runs hosts from `packages/host/dist` (after `npm run build`) with plain node:
 * the same code, but CPU profiles then name every function with its real line.
 */
const COMPILED_MAIN = path.join(REPO_ROOT, "packages/host/dist/main.js")
const compiled = process.env.BENCH_COMPILED === "1"
const LISTENING = /"message":"listening on (http:\/\/[^"]+)"/

/**
 * The host exactly as `npm start` runs it, on a free port, with the demo desks, and with the
 * limits that would otherwise throttle a benchmark lifted: HTTP and WebSocket rate limits at their
 * maximum, WebSocket heartbeat timeout at an hour (load clients do not send heartbeats between
 * calls), RFQ time-to-live at a day. Embedded mode gets a fresh temporary data directory;
 * PostgreSQL a fresh schema, dropped again on stop.
 */
export const startHost = async (options: StartHostOptions): Promise<BenchHost> => {
  const database = options.database
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "rfq-bench-host-"))
  const ownSchema = database.kind === "postgres" && options.schema === undefined
  const schema = database.kind === "postgres" ? (options.schema ?? freshSchemaName("bench_host")) : undefined
  const env: Record<string, string> = {
    PORT: "0",
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    DEMO: "1",
    RATE_LIMIT_PER_MINUTE: "1000000000",
    WS_RATE_LIMIT_PER_MINUTE: "1000000000",
    WS_HEARTBEAT_TIMEOUT_MS: "3600000",
    WS_MAX_BACKPRESSURE_BYTES: String(64 * 1024 * 1024),
    RFQ_TTL_SECONDS: "86400",
    LOG_LEVEL: "info",
    DATABASE_URL: "",
    DATABASE_SCHEMA: "",
    ENCRYPTION_KEY: "",
    ENCRYPTION_KEYS: "",
    JWT_SECRET: "",
    // One host unless the caller asks for multi-host mode (empty is unset).
    RUNNER_ADDRESS: "",
    NATS_URL: "",
    REDIS_URL: "",
    // No wait profile unless the caller asks for one (`--waits`), whatever the bench's own environment.
    RFQ_WAIT_PROFILE: "",
    ...(database.kind === "postgres"
      ? {
          DATABASE_URL: database.url,
          DATABASE_SCHEMA: schema!,
          ENCRYPTION_KEY: randomBytes(32).toString("hex"),
          JWT_SECRET: randomBytes(32).toString("base64url")
        }
      : {}),
    ...options.env
  }
  // An initialised empty cluster instead of PGlite's initdb (seconds of CPU, not the host's work).
  if (database.kind !== "postgres") await seedPgliteDataDir(path.join(dataDir, PGLITE_SUBDIR))
  const child = spawnTs(compiled ? COMPILED_MAIN : HOST_MAIN, [], {
    env,
    compiled,
    ...(options.nodeArgs ? { nodeArgs: options.nodeArgs } : {})
  })
  const cleanup = async () => {
    fs.rmSync(dataDir, { recursive: true, force: true })
    if (ownSchema && database.kind === "postgres")
      await dropSchema(database.url, schema!).catch(() => undefined)
  }

  let url: string
  try {
    url = await new Promise<string>((resolve, reject) => {
      let seen = ""
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `the host did not listen within ${options.startTimeoutMs ?? 180_000} ms\n${child.output()}`
            )
          ),
        options.startTimeoutMs ?? 180_000
      )
      child.process.stdout!.on("data", (chunk: string) => {
        seen = (seen + chunk).slice(-4096)
        const match = LISTENING.exec(seen)
        if (match !== null) {
          clearTimeout(timer)
          resolve(match[1]!)
        }
      })
      child.process.on("exit", (code) => {
        clearTimeout(timer)
        reject(new Error(`the host exited (${code}) before listening\n${child.output()}`))
      })
    })
  } catch (error) {
    await child.stop(2_000)
    await cleanup()
    throw error
  }
  return {
    url,
    wsUrl: `${url.replace(/^http/, "ws")}/ws/v1`,
    database: database.kind,
    schema,
    child,
    stop: async () => {
      await child.stop()
      await cleanup()
    }
  }
}

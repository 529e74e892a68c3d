/**
 * The durable-write ceiling for the lifecycle: the same number of concurrent clients, each
 * running the lifecycle's shape of raw single-row transactions (one, then three at once, then
 * one: create, three quotes, accept), each `BEGIN; INSERT one row; COMMIT` with nothing else, for
 * a fixed time. On PostgreSQL through `pg` with a pool as large as the host's (10 connections);
 * on PGlite, which `pg` cannot reach, through PGlite's own client in this process on a
 * file-backed data directory, as the embedded host has it.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { childConfig, measureWindow, runChild, tell } from "../ChildIo.js"
import { type PgPool, pg } from "../Postgres.js"
import { type LatencySummary, Samples } from "../Stats.js"

export interface SqlBaselineConfig {
  readonly database:
    | { readonly kind: "pglite" }
    | { readonly kind: "postgres"; readonly url: string; readonly schema: string }
  readonly clients: number
  readonly poolSize: number
  readonly warmupMs: number
  readonly durationMs: number
  /** Bytes of the text column, about the size of an RFQ row's JSON. */
  readonly payloadBytes: number
}

export interface SqlBaselineResult {
  readonly type: "result"
  readonly transactions: number
  readonly lifecycles: number
  readonly elapsedMs: number
  readonly transactionsPerSecond: number
  readonly lifecyclesPerSecond: number
  /** This process's CPU (user + system) over the measured window ÷ lifecycles measured, ms. */
  readonly clientCpuMsPerLifecycle: number
  readonly transaction: LatencySummary
}

type Transact = (client: number, step: number, payload: string) => Promise<void>

const TABLE = "bench_baseline_rows"
const CREATE = `CREATE TABLE IF NOT EXISTS ${TABLE} (id bigserial PRIMARY KEY, client int NOT NULL, step int NOT NULL, payload text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`
const INSERT = `INSERT INTO ${TABLE} (client, step, payload) VALUES ($1, $2, $3)`

const postgres = async (url: string, schema: string, poolSize: number) => {
  const setup = new pg.Client({ connectionString: url })
  await setup.connect()
  await setup.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
  await setup.end()
  const target = new URL(url)
  target.searchParams.set("options", `-c search_path=${schema}`)
  const pool: PgPool = new pg.Pool({
    connectionString: target.toString(),
    max: poolSize,
    application_name: "rfq-bench"
  })
  await pool.query(CREATE)
  const transact: Transact = async (client, step, payload) => {
    const connection = await pool.connect()
    try {
      await connection.query("BEGIN")
      await connection.query(INSERT, [client, step, payload])
      await connection.query("COMMIT")
      connection.release()
    } catch (error) {
      connection.release(error as Error)
      throw error
    }
  }
  return { transact, close: () => pool.end() }
}

const pglite = async () => {
  const { PGlite } = await import("@electric-sql/pglite")
  const { seedPgliteDataDir } = await import("@rfq/engine")
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rfq-bench-pglite-"))
  // An initialised empty cluster copied in rather than initdb run here: initdb is not what the
  // baseline measures, and costs seconds of CPU per run (as for the bench's PGlite hosts).
  await seedPgliteDataDir(dir)
  const db = await PGlite.create({ dataDir: dir })
  await db.exec(CREATE)
  const transact: Transact = async (client, step, payload) => {
    await db.transaction(async (tx) => {
      await tx.query(INSERT, [client, step, payload])
    })
  }
  return {
    transact,
    close: async () => {
      await db.close()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}

runChild(async () => {
  const config = childConfig<SqlBaselineConfig>()
  const database = config.database
  const { transact, close } =
    database.kind === "postgres"
      ? await postgres(database.url, database.schema, config.poolSize)
      : await pglite()
  const payload = "x".repeat(config.payloadBytes)
  const latency = new Samples()
  let measuring = false
  let stopping = false
  let transactions = 0
  let lifecycles = 0

  const timed = async (client: number, step: number) => {
    const started = performance.now()
    await transact(client, step, payload)
    if (measuring) {
      latency.add(performance.now() - started)
      transactions++
    }
  }
  const loop = async (client: number) => {
    while (!stopping) {
      await timed(client, 0)
      await Promise.all([timed(client, 1), timed(client, 2), timed(client, 3)])
      await timed(client, 4)
      if (measuring) lifecycles++
      // PGlite answers without ever leaving the microtask queue: without this the timers that
      // end the run would never fire. One macrotask turn per lifecycle costs microseconds.
      await new Promise((resolve) => setImmediate(resolve))
    }
  }
  const loops = Array.from({ length: config.clients }, (_, i) => loop(i))
  await new Promise((r) => setTimeout(r, config.warmupMs))
  measuring = true
  const started = performance.now()
  const cpuAtStart = process.cpuUsage()
  await measureWindow(config.durationMs, () => lifecycles > 0)
  measuring = false
  const elapsedMs = performance.now() - started
  const cpu = process.cpuUsage(cpuAtStart)
  stopping = true
  await Promise.all(loops)
  await close()
  const result: SqlBaselineResult = {
    type: "result",
    transactions,
    lifecycles,
    elapsedMs,
    transactionsPerSecond: (transactions / elapsedMs) * 1000,
    lifecyclesPerSecond: (lifecycles / elapsedMs) * 1000,
    clientCpuMsPerLifecycle: (cpu.user + cpu.system) / 1000 / lifecycles,
    transaction: latency.summary()
  }
  await tell(result)
})

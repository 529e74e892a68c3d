import * as fs from "node:fs"
import * as path from "node:path"
import type { BenchHost, DatabaseChoice } from "../BenchHost.js"
import { type CoreShares, coreComparison, coreWindow, measuredWindow } from "../CoreAccount.js"
import type { BenchContext } from "../BenchContext.js"
import type { LifecycleConfig, LifecycleResult } from "../children/lifecycleClients.js"
import type { SqlBaselineConfig, SqlBaselineResult } from "../children/sqlBaseline.js"
import { dropSchema, freshSchemaName, rowsWritten, withPgClient } from "../Postgres.js"
import { childResult, childScript, spawnTs } from "../Processes.js"
import { check, formatNumber, type ScenarioResult, type TargetCheck } from "../Report.js"
import {
  formatHostWaits,
  type HostWaits,
  readHostWaits,
  WAIT_PROFILE_VARIABLE,
  windowFile
} from "../WaitAccount.js"

export interface LifecycleSizes {
  readonly clients: number
  readonly warmupMs: number
  readonly durationMs: number
  readonly targets: boolean
  /** Which databases to run on; PostgreSQL is skipped (with a note) when no server answers. */
  readonly databases: ReadonlyArray<"postgres" | "pglite">
  /** Run the lifecycle on this database on the shared host instead of a fresh one (one start fewer). */
  readonly shareHostOn?: "pglite" | "postgres"
}

/** The host's pool: @effect/sql-pg leaves pg's default of 10 connections. */
const HOST_POOL_SIZE = 10
/** How long after the load the statistics of every backend are in `pg_stat_user_tables` (see below). */
const STATISTICS_DELAY_MS = 11_000
/** Client-visible durable writes per lifecycle: create, three quotes, accept. */
const WRITES_PER_LIFECYCLE = 5

/** `--waits`: the lifecycle's hosts write a wait profile into `dir`; each host's account is added to `accounts`. */
export interface LifecycleWaits {
  readonly dir: string
  readonly accounts: Array<HostWaits>
}

/** Rows inserted, updated and deleted so far in each table of one schema. */
const rowsByTable = (url: string, schema: string): Promise<Record<string, number>> =>
  withPgClient(url, async (client) => {
    await client.query("SELECT pg_stat_clear_snapshot()")
    const { rows } = await client.query<{ relname: string; n: string }>(
      "SELECT relname, (n_tup_ins + n_tup_upd + n_tup_del)::text AS n FROM pg_stat_user_tables WHERE schemaname = $1",
      [schema]
    )
    return Object.fromEntries(rows.map((r) => [r.relname, Number(r.n)]))
  })

/**
 * The lifecycle load with the host's wait profile bracketing exactly the measured window: a
 * SIGUSR2 when the clients start measuring (the host writes its first window, the warm-up, and
 * starts a new one) and one when they stop (the host writes the measured window's account).
 */
const measureWithWaits = async (host: BenchHost, config: LifecycleConfig, budgetMs: number) => {
  const child = spawnTs(childScript("lifecycleClients.ts"), [JSON.stringify(config)])
  try {
    await child.next("measuring", budgetMs)
    host.child.process.kill("SIGUSR2")
    await child.next("measured", budgetMs)
    host.child.process.kill("SIGUSR2")
    return await child.next<LifecycleResult>("result", budgetMs)
  } finally {
    await child.stop()
  }
}

const waitForFile = async (file: string, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs
  while (!fs.existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`the host did not write ${file} within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** One step's latency for the log: `create p50 … ms p99 … ms`. */
export const stepLine = (name: string, s: LifecycleResult["steps"]["create"]) =>
  `${name} p50 ${formatNumber(s.p50)} ms p99 ${formatNumber(s.p99)} ms`

/**
 * Scenario 2: concurrent clients each running create RFQ → three maker quotes (sent together) →
 * accept, on a fresh host per database, against the durable-write ceiling on the same database:
 * the same number of clients running the lifecycle's shape of raw single-row transactions (five
 * per lifecycle, see `sqlBaseline.ts`). The ratio is lifecycles/s of the service over lifecycles/s
 * of the baseline, i.e. how much of the database's single-row transaction rate the service keeps
 * while doing everything else a lifecycle needs (auth, validation, pricing, the RFQ machine,
 * settlement on the simulated venue, and every row it writes).
 */
export const lifecycle = async (
  ctx: BenchContext,
  sizes: LifecycleSizes,
  waits?: LifecycleWaits
): Promise<ScenarioResult> => {
  const figures: Record<string, number | string> = { clients: sizes.clients }
  const targets: Array<TargetCheck> = []
  const notes: Array<string> = []
  // Where the cores went: read over the same part of the service's and the baseline's load.
  const window = measuredWindow(sizes.warmupMs, sizes.durationMs)
  for (const kind of sizes.databases) {
    if (kind === "postgres" && ctx.postgresUrl === undefined) {
      notes.push("PostgreSQL: skipped, no server answers (set BENCH_DATABASE_URL)")
      ctx.log("  PostgreSQL: skipped, no server answers (set BENCH_DATABASE_URL)")
      continue
    }
    const database: DatabaseChoice =
      kind === "postgres" ? { kind: "postgres", url: ctx.postgresUrl! } : { kind: "pglite" }
    // A wait profile needs a host of its own: its account is the lifecycle's alone.
    const shared = waits === undefined && kind === sizes.shareHostOn && kind === ctx.sharedHostKind
    const waitFile =
      waits === undefined ? undefined : path.resolve(waits.dir, `lifecycle-${kind}-${Date.now()}.json`)
    const host: BenchHost = shared
      ? await ctx.sharedHost()
      : await ctx.startHost(
          database,
          `lifecycle-${kind}`,
          waitFile === undefined ? {} : { env: { [WAIT_PROFILE_VARIABLE]: waitFile } }
        )
    let service: LifecycleResult
    let rows: number | undefined
    let tableRows: Record<string, number> | undefined
    let serviceCores: Promise<CoreShares> | undefined
    try {
      const before = kind === "postgres" ? await rowsWritten(ctx.postgresUrl!, host.schema!) : 0
      const tablesBefore =
        waitFile !== undefined && kind === "postgres" ? await rowsByTable(ctx.postgresUrl!, host.schema!) : {}
      const config: LifecycleConfig = {
        url: host.url,
        clients: sizes.clients,
        warmupMs: sizes.warmupMs,
        durationMs: sizes.durationMs
      }
      const budgetMs = sizes.warmupMs + sizes.durationMs + 300_000
      if (window !== undefined) serviceCores = coreWindow(host.child.process.pid, window.fromMs, window.toMs)
      service = await ctx.measured(host, () =>
        waitFile === undefined
          ? childResult<LifecycleResult>("lifecycleClients.ts", config, budgetMs)
          : measureWithWaits(host, config, budgetMs)
      )
      if (kind === "postgres") {
        // PostgreSQL 15 and later: a backend's statistics reach the view when it goes idle, at most
        // once a second, and a backend left idle within that second flushes 10 s later
        // (PGSTAT_IDLE_INTERVAL): read before, the last second's rows are missing.
        await new Promise((r) => setTimeout(r, STATISTICS_DELAY_MS))
        rows = (await rowsWritten(ctx.postgresUrl!, host.schema!)) - before
        if (waitFile !== undefined) {
          const after = await rowsByTable(ctx.postgresUrl!, host.schema!)
          tableRows = Object.fromEntries(
            Object.entries(after).map(([table, n]) => [table, n - (tablesBefore[table] ?? 0)])
          )
        }
      }
      if (waitFile !== undefined) await waitForFile(windowFile(waitFile, 2))
    } finally {
      if (!shared) await ctx.stopHost(host)
    }
    if (service.lifecycles === 0)
      throw new Error(`${kind}: no lifecycle completed (${service.firstError ?? "no error"})`)

    const schema = freshSchemaName("bench_baseline")
    const baselineConfig: SqlBaselineConfig = {
      database: kind === "postgres" ? { kind, url: ctx.postgresUrl!, schema } : { kind },
      clients: sizes.clients,
      poolSize: HOST_POOL_SIZE,
      warmupMs: sizes.warmupMs,
      durationMs: sizes.durationMs,
      payloadBytes: 700
    }
    let baseline: SqlBaselineResult
    const baselineCores = window === undefined ? undefined : coreWindow(undefined, window.fromMs, window.toMs)
    try {
      baseline = await childResult<SqlBaselineResult>(
        "sqlBaseline.ts",
        baselineConfig,
        sizes.warmupMs + sizes.durationMs + 300_000
      )
    } finally {
      if (kind === "postgres") await dropSchema(ctx.postgresUrl!, schema).catch(() => undefined)
    }
    const ratio = service.lifecyclesPerSecond / baseline.lifecyclesPerSecond
    const name = kind === "postgres" ? "PostgreSQL" : "PGlite"
    ctx.log(
      `  ${name}: service ${formatNumber(service.lifecyclesPerSecond)} lifecycles/s (${service.lifecycles} in ${formatNumber(service.elapsedMs / 1000)} s, ${service.errors} errors); ` +
        `raw transactions ${formatNumber(baseline.transactionsPerSecond)} tx/s = ${formatNumber(baseline.lifecyclesPerSecond)} lifecycles/s; ratio ${ratio.toFixed(3)}`
    )
    ctx.log(
      `    ${stepLine("create", service.steps.create)}; ${stepLine("quote", service.steps.quote)}; ` +
        `${stepLine("accept", service.steps.accept)}; ${stepLine("whole lifecycle", service.steps.lifecycle)}; ` +
        `raw tx p50 ${formatNumber(baseline.transaction.p50)} ms p99 ${formatNumber(baseline.transaction.p99)} ms`
    )
    if (rows !== undefined)
      ctx.log(`    rows written by the service per lifecycle: ${formatNumber(rows / service.completed)}`)
    ctx.log(
      `    the load clients' own process, CPU per lifecycle: ${formatNumber(service.clientCpuMsPerLifecycle)} ms driving the service, ${formatNumber(baseline.clientCpuMsPerLifecycle)} ms driving the raw transactions`
    )
    const cores =
      serviceCores === undefined || baselineCores === undefined
        ? { lines: [], figures: {} }
        : coreComparison(
            kind,
            await serviceCores,
            service.lifecyclesPerSecond,
            await baselineCores,
            baseline.lifecyclesPerSecond,
            "lifecycle"
          )
    for (const line of cores.lines) ctx.log(`    ${line}`)
    if (service.errors > 0) ctx.log(`    first error: ${service.firstError}`)
    if (waits !== undefined && waitFile !== undefined) {
      const name = kind === "postgres" ? "PostgreSQL" : "PGlite"
      const account = readHostWaits(
        `lifecycle (${name})`,
        windowFile(waitFile, 2),
        service.steps,
        service.lifecycles
      )
      // The rows of the clients' whole run, warm-up included, over every lifecycle they completed.
      const counted: HostWaits =
        tableRows === undefined
          ? account
          : {
              ...account,
              rowsPerLifecycle: Object.fromEntries(
                Object.entries(tableRows).map(([table, n]) => [table, n / service.completed])
              )
            }
      waits.accounts.push(counted)
      for (const line of formatHostWaits(counted)) ctx.log(`    ${line}`)
    }
    Object.assign(figures, {
      [`${kind}LifecyclesPerSecond`]: service.lifecyclesPerSecond,
      [`${kind}ClientCpuMsPerLifecycle`]: service.clientCpuMsPerLifecycle,
      [`${kind}BaselineClientCpuMsPerLifecycle`]: baseline.clientCpuMsPerLifecycle,
      [`${kind}Errors`]: service.errors,
      [`${kind}CreateP50Ms`]: service.steps.create.p50,
      [`${kind}CreateP99Ms`]: service.steps.create.p99,
      [`${kind}QuoteP50Ms`]: service.steps.quote.p50,
      [`${kind}QuoteP99Ms`]: service.steps.quote.p99,
      [`${kind}AcceptP50Ms`]: service.steps.accept.p50,
      [`${kind}AcceptP99Ms`]: service.steps.accept.p99,
      [`${kind}LifecycleP50Ms`]: service.steps.lifecycle.p50,
      [`${kind}LifecycleP99Ms`]: service.steps.lifecycle.p99,
      [`${kind}BaselineTransactionsPerSecond`]: baseline.transactionsPerSecond,
      [`${kind}BaselineLifecyclesPerSecond`]: baseline.lifecyclesPerSecond,
      [`${kind}BaselineTransactionP50Ms`]: baseline.transaction.p50,
      [`${kind}BaselineTransactionP99Ms`]: baseline.transaction.p99,
      [`${kind}AcceptP50VsTransactionP50`]: service.steps.accept.p50 / baseline.transaction.p50,
      [`${kind}Ratio`]: ratio,
      ...(rows === undefined ? {} : { [`${kind}RowsWrittenPerLifecycle`]: rows / service.completed }),
      ...cores.figures
    })
    notes.push(
      `${name}: ${formatNumber(service.lifecyclesPerSecond)} lifecycles/s vs ${formatNumber(baseline.lifecyclesPerSecond)} ` +
        `(${formatNumber(baseline.transactionsPerSecond)} raw tx/s ÷ ${WRITES_PER_LIFECYCLE}) = ${ratio.toFixed(3)}`
    )
    if (sizes.targets && kind === "postgres") {
      targets.push(check("lifecycle on PostgreSQL, service / raw pg", ratio, ">=", 0.5))
      // Issue 15: the accept's p50 against a raw transaction's p50, same run, same clients.
      targets.push(
        check(
          "accept p50 on PostgreSQL ÷ raw transaction p50",
          service.steps.accept.p50 / baseline.transaction.p50,
          "<=",
          4,
          "×"
        )
      )
    }
  }
  return { id: "lifecycle", title: "Lifecycle: create → 3 quotes → accept", figures, targets, notes }
}

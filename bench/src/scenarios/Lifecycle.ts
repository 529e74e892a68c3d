import type { BenchHost, DatabaseChoice } from "../BenchHost.js"
import type { BenchContext } from "../BenchContext.js"
import type { LifecycleConfig, LifecycleResult } from "../children/lifecycleClients.js"
import type { SqlBaselineConfig, SqlBaselineResult } from "../children/sqlBaseline.js"
import { dropSchema, freshSchemaName, rowsWritten } from "../Postgres.js"
import { childResult } from "../Processes.js"
import { check, formatNumber, type ScenarioResult, type TargetCheck } from "../Report.js"

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
/** Client-visible durable writes per lifecycle: create, three quotes, accept. */
const WRITES_PER_LIFECYCLE = 5

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
export const lifecycle = async (ctx: BenchContext, sizes: LifecycleSizes): Promise<ScenarioResult> => {
  const figures: Record<string, number | string> = { clients: sizes.clients }
  const targets: Array<TargetCheck> = []
  const notes: Array<string> = []
  for (const kind of sizes.databases) {
    if (kind === "postgres" && ctx.postgresUrl === undefined) {
      notes.push("PostgreSQL: skipped, no server answers (set BENCH_DATABASE_URL)")
      ctx.log("  PostgreSQL: skipped, no server answers (set BENCH_DATABASE_URL)")
      continue
    }
    const database: DatabaseChoice =
      kind === "postgres" ? { kind: "postgres", url: ctx.postgresUrl! } : { kind: "pglite" }
    const shared = kind === sizes.shareHostOn && kind === ctx.sharedHostKind
    const host: BenchHost = shared
      ? await ctx.sharedHost()
      : await ctx.startHost(database, `lifecycle-${kind}`)
    let service: LifecycleResult
    let rows: number | undefined
    try {
      const before = kind === "postgres" ? await rowsWritten(ctx.postgresUrl!, host.schema!) : 0
      const config: LifecycleConfig = {
        url: host.url,
        clients: sizes.clients,
        warmupMs: sizes.warmupMs,
        durationMs: sizes.durationMs
      }
      service = await ctx.measured(host, () =>
        childResult<LifecycleResult>(
          "lifecycleClients.ts",
          config,
          sizes.warmupMs + sizes.durationMs + 300_000
        )
      )
      if (kind === "postgres") {
        // The statistics reach the view within a second of the last commit.
        await new Promise((r) => setTimeout(r, 1_500))
        rows = (await rowsWritten(ctx.postgresUrl!, host.schema!)) - before
      }
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
      ctx.log(`    rows written by the service per lifecycle: ${formatNumber(rows / service.lifecycles)}`)
    if (service.errors > 0) ctx.log(`    first error: ${service.firstError}`)
    Object.assign(figures, {
      [`${kind}LifecyclesPerSecond`]: service.lifecyclesPerSecond,
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
      [`${kind}BaselineTransactionP99Ms`]: baseline.transaction.p99,
      [`${kind}Ratio`]: ratio,
      ...(rows === undefined ? {} : { [`${kind}RowsWrittenPerLifecycle`]: rows / service.lifecycles })
    })
    notes.push(
      `${name}: ${formatNumber(service.lifecyclesPerSecond)} lifecycles/s vs ${formatNumber(baseline.lifecyclesPerSecond)} ` +
        `(${formatNumber(baseline.transactionsPerSecond)} raw tx/s ÷ ${WRITES_PER_LIFECYCLE}) = ${ratio.toFixed(3)}`
    )
    if (sizes.targets && kind === "postgres")
      targets.push(check("lifecycle on PostgreSQL, service / raw pg", ratio, ">=", 0.5))
  }
  return { id: "lifecycle", title: "Lifecycle: create → 3 quotes → accept", figures, targets, notes }
}

import type { BenchContext } from "../BenchContext.js"
import type { SqlBaselineConfig, SqlBaselineResult } from "../children/sqlBaseline.js"
import type { WsQuotingConfig, WsQuotingResult } from "../children/wsQuoting.js"
import { type CoreShares, coreLine, perOperation, readCores, sharesBetween } from "../CoreAccount.js"
import { dropSchema, freshSchemaName } from "../Postgres.js"
import { childResult, childScript, spawnTs } from "../Processes.js"
import { check, formatNumber, type ScenarioResult } from "../Report.js"
import { webSocketServed } from "../WsClient.js"

export interface WsQuotingSizes {
  readonly connections: number
  readonly warmupMs: number
  readonly durationMs: number
  readonly targets: boolean
}

/** Issue 15: quote updates at least this share of heartbeats on the same connections. */
const TARGET = 0.3

/**
 * The durable-write ceiling of quote updates: every update is acknowledged only once it is
 * durable, so with one transaction per update no service on this database can update faster than
 * the cheapest possible transactions run on it. The lifecycle's baseline child (`sqlBaseline.ts`:
 * single-row `BEGIN; INSERT; COMMIT`), as many clients as quoting connections, on the shared host's
 * kind of database (PGlite file-backed in its own process, or PostgreSQL through `pg` with the
 * host's pool size), while the host is idle.
 */
const durableCeiling = async (ctx: BenchContext, sizes: WsQuotingSizes): Promise<SqlBaselineResult> => {
  const kind = ctx.sharedHostKind
  const schema = freshSchemaName("bench_quoting_baseline")
  const config: SqlBaselineConfig = {
    database: kind === "postgres" ? { kind, url: ctx.postgresUrl!, schema } : { kind },
    clients: sizes.connections,
    poolSize: 10,
    warmupMs: sizes.warmupMs,
    durationMs: sizes.durationMs,
    payloadBytes: 700
  }
  try {
    return await childResult<SqlBaselineResult>(
      "sqlBaseline.ts",
      config,
      sizes.warmupMs + sizes.durationMs + 300_000
    )
  } finally {
    if (kind === "postgres") await dropSchema(ctx.postgresUrl!, schema).catch(() => undefined)
  }
}

/**
 * Scenario 4: quote updates per second through `v1/quote/update` (each one a validated, durable
 * change of a live quote) against heartbeat round trips per second on the same connections (the
 * transport and session alone). Issue 15's target: at least 0.3. Then the durable-write ceiling
 * (`durableCeiling`) as a share of the same heartbeats: what any service doing one transaction per
 * update could reach at most.
 */
export const wsQuoting = async (ctx: BenchContext, sizes: WsQuotingSizes): Promise<ScenarioResult> => {
  const host = await ctx.sharedHost()
  const served = await webSocketServed(host.wsUrl)
  if (!served.served) {
    const skipped = `the host does not serve the WebSocket endpoint yet (${host.wsUrl}: ${served.reason})`
    ctx.log(`  SKIPPED: ${skipped}`)
    return {
      id: "ws-quoting",
      title: "Quoting over WebSocket",
      skipped,
      figures: {},
      targets: [],
      notes: [skipped]
    }
  }
  const config: WsQuotingConfig = {
    httpUrl: host.url,
    wsUrl: host.wsUrl,
    connections: sizes.connections,
    warmupMs: sizes.warmupMs,
    durationMs: sizes.durationMs
  }
  const child = spawnTs(childScript("wsQuoting.ts"), [JSON.stringify(config)])
  let result: WsQuotingResult
  let cores: CoreShares
  try {
    const budgetMs = 2 * (sizes.warmupMs + sizes.durationMs) + 300_000
    const pid = host.child.process.pid
    await child.next("measuring", budgetMs)
    const first = readCores(pid)
    // A profile (`--profile`) covers the updates' measured part only: the heartbeats are the baseline.
    await ctx.measured(host, () => child.next("measured", budgetMs))
    cores = sharesBetween(first, readCores(pid), true)
    result = await child.next<WsQuotingResult>("result", budgetMs)
  } finally {
    await child.stop()
  }
  const { updates, heartbeats, reads } = result
  if (updates.calls === 0) throw new Error(`no quote update succeeded (${updates.firstError ?? "no error"})`)
  const ratio = updates.perSecond / heartbeats.perSecond
  ctx.log(
    `  v1/quote/update ${formatNumber(updates.perSecond)}/s p50 ${formatNumber(updates.latency.p50)} ms p99 ${formatNumber(updates.latency.p99)} ms (${updates.errors} errors); ` +
      `heartbeat ${formatNumber(heartbeats.perSecond)}/s p50 ${formatNumber(heartbeats.latency.p50)} ms p99 ${formatNumber(heartbeats.latency.p99)} ms; ratio ${ratio.toFixed(3)}`
  )
  ctx.log(`    ${coreLine(cores!, updates.perSecond, "update")}`)
  if (updates.errors > 0) ctx.log(`    first error: ${updates.firstError}`)
  const readRatio = reads.perSecond / heartbeats.perSecond
  ctx.log(
    `    v1/rfq/get (answered from memory) ${formatNumber(reads.perSecond)}/s p50 ${formatNumber(reads.latency.p50)} ms ` +
      `p99 ${formatNumber(reads.latency.p99)} ms (${reads.errors} errors) = ${readRatio.toFixed(3)} of the heartbeats (no target)`
  )
  if (reads.errors > 0) ctx.log(`    first error of the reads: ${reads.firstError}`)
  const raw = await durableCeiling(ctx, sizes)
  const ceiling = raw.transactionsPerSecond / heartbeats.perSecond
  const database = ctx.sharedHostKind === "postgres" ? "PostgreSQL" : "PGlite"
  ctx.log(
    `    durable-write ceiling: raw single-row transactions on ${database}, ${sizes.connections} clients, ` +
      `${formatNumber(raw.transactionsPerSecond)} tx/s (p50 ${formatNumber(raw.transaction.p50)} ms) = ${ceiling.toFixed(3)} of the heartbeats; ` +
      `the service's updates ${(updates.perSecond / raw.transactionsPerSecond).toFixed(3)} of those`
  )
  const perUpdate = perOperation(cores!, updates.perSecond)
  return {
    id: "ws-quoting",
    title: "Quoting over WebSocket",
    figures: {
      connections: sizes.connections,
      updatesPerSecond: updates.perSecond,
      updateP50Ms: updates.latency.p50,
      updateP99Ms: updates.latency.p99,
      updateErrors: updates.errors,
      heartbeatsPerSecond: heartbeats.perSecond,
      heartbeatP50Ms: heartbeats.latency.p50,
      heartbeatP99Ms: heartbeats.latency.p99,
      updatesVsHeartbeats: ratio,
      readsPerSecond: reads.perSecond,
      readP50Ms: reads.latency.p50,
      readP99Ms: reads.latency.p99,
      readErrors: reads.errors,
      readsVsHeartbeats: readRatio,
      rawTransactionsPerSecond: raw.transactionsPerSecond,
      rawTransactionP50Ms: raw.transaction.p50,
      durableCeilingVsHeartbeats: ceiling,
      ...(perUpdate.host === undefined ? {} : { hostCpuMsPerUpdate: perUpdate.host }),
      ...(perUpdate.hostMainRan === undefined ? {} : { hostMainRanMsPerUpdate: perUpdate.hostMainRan }),
      ...(perUpdate.hostSystem === undefined ? {} : { hostSystemMsPerUpdate: perUpdate.hostSystem }),
      ...(perUpdate.hostMainWaited === undefined
        ? {}
        : { hostMainWaitedMsPerUpdate: perUpdate.hostMainWaited })
    },
    targets: sizes.targets ? [check("WS quote updates ÷ heartbeats", ratio, ">=", TARGET)] : [],
    notes: [
      `${formatNumber(updates.perSecond)} quote updates/s vs ${formatNumber(heartbeats.perSecond)} heartbeats/s on ${sizes.connections} connections = ${ratio.toFixed(3)}; ` +
        `durable-write ceiling (raw single-row transactions on ${database}, ${formatNumber(raw.transactionsPerSecond)}/s) = ${ceiling.toFixed(3)} of the heartbeats; ` +
        `v1/rfq/get from memory ${formatNumber(reads.perSecond)}/s = ${readRatio.toFixed(3)} of the heartbeats`
    ]
  }
}

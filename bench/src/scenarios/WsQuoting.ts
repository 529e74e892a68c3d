import type { BenchContext } from "../BenchContext.js"
import type { WsQuotingConfig, WsQuotingResult } from "../children/wsQuoting.js"
import { type CoreShares, coreLine, perOperation, readCores, sharesBetween } from "../CoreAccount.js"
import { childScript, spawnTs } from "../Processes.js"
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
 * Scenario 4: quote updates per second through `v1/quote/update` (each one a validated, durable
 * change of a live quote) against heartbeat round trips per second on the same connections (the
 * transport and session alone). Issue 15's target: at least 0.3.
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
  const { updates, heartbeats } = result
  if (updates.calls === 0) throw new Error(`no quote update succeeded (${updates.firstError ?? "no error"})`)
  const ratio = updates.perSecond / heartbeats.perSecond
  ctx.log(
    `  v1/quote/update ${formatNumber(updates.perSecond)}/s p50 ${formatNumber(updates.latency.p50)} ms p99 ${formatNumber(updates.latency.p99)} ms (${updates.errors} errors); ` +
      `heartbeat ${formatNumber(heartbeats.perSecond)}/s p50 ${formatNumber(heartbeats.latency.p50)} ms p99 ${formatNumber(heartbeats.latency.p99)} ms; ratio ${ratio.toFixed(3)}`
  )
  ctx.log(`    ${coreLine(cores!, updates.perSecond, "update")}`)
  if (updates.errors > 0) ctx.log(`    first error: ${updates.firstError}`)
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
      ...(perUpdate.host === undefined ? {} : { hostCpuMsPerUpdate: perUpdate.host }),
      ...(perUpdate.hostMainRan === undefined ? {} : { hostMainRanMsPerUpdate: perUpdate.hostMainRan }),
      ...(perUpdate.hostMainWaited === undefined
        ? {}
        : { hostMainWaitedMsPerUpdate: perUpdate.hostMainWaited })
    },
    targets: sizes.targets ? [check("WS quote updates ÷ heartbeats", ratio, ">=", TARGET)] : [],
    notes: [
      `${formatNumber(updates.perSecond)} quote updates/s vs ${formatNumber(heartbeats.perSecond)} heartbeats/s on ${sizes.connections} connections = ${ratio.toFixed(3)}`
    ]
  }
}

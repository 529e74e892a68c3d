import { type BenchCluster, startBenchCluster } from "../BenchCluster.js"
import type { BenchContext } from "../BenchContext.js"
import type { BenchHost } from "../BenchHost.js"
import type { FanOutConfig, FanOutResult } from "../children/fanOutClients.js"
import type { ForwardCostConfig, ForwardCostResult } from "../children/forwardCost.js"
import { clusterServicesMissing } from "../ClusterServices.js"
import { CPU_IN_FLIGHT, cpuBlocks, type ForwardKind } from "../ForwardCpuBlocks.js"
import { childResult, childScript, spawnTs } from "../Processes.js"
import { cpuMsOfPid } from "../ProcessCpu.js"
import { check, formatNumber, type ScenarioResult } from "../Report.js"
import type { LatencySummary } from "../Stats.js"
import type { FanOutSizes } from "./FanOut.js"
import type { LifecycleSizes } from "./Lifecycle.js"
import { lifecycles, measuredOn, sameHostsCeiling, type Variant } from "./MultiHostLifecycles.js"

/** How big the multi-host scenario runs, beyond the lifecycle and fan-out loads it borrows. */
export interface MultiHostSizes {
  /** Lifecycle runs per variant, interleaved (forward, then backward); the best run counts. */
  readonly lifecycleRounds: number
  /** Forwarding cost: measured rounds (each: every request to the owner and to the other host) and warm-up rounds. */
  readonly forwardRounds: number
  readonly forwardWarmupRounds: number
  /** Forwarding cost in CPU: requests per block (each op and kind twice). */
  readonly forwardCpuBlock: number
}

const ID = "multihost"
const TITLE = "Through 2 hosts behind HAProxy"
/** Issue 15's target for the lifecycle through 2 hosts against 1. */
const LIFECYCLE_AIM = 0.9

const skip = (ctx: BenchContext, skipped: string): ScenarioResult => {
  ctx.log(`  SKIPPED: ${skipped}`)
  return { id: ID, title: TITLE, skipped, figures: {}, targets: [], notes: [skipped] }
}

const signed = (ms: number) => `${ms >= 0 ? "+" : "−"}${formatNumber(Math.abs(ms))}`

const latency = (s: LatencySummary) => `p50 ${formatNumber(s.p50)} ms p99 ${formatNumber(s.p99)} ms`

/** Fan-out through each variant with scenario 3's connections and creates. */
const fanOuts = async (
  ctx: BenchContext,
  variants: ReadonlyArray<Variant>,
  sizes: FanOutSizes,
  makers: number
): Promise<Map<Variant["id"], FanOutResult>> => {
  const results = new Map<Variant["id"], FanOutResult>()
  for (const variant of variants) {
    const config: FanOutConfig = {
      mode: "host",
      httpUrl: variant.httpUrl,
      wsUrl: variant.wsUrl,
      makers,
      sequentialRfqs: sizes.sequentialRfqs,
      burstRfqs: sizes.burstRfqs,
      burstConcurrency: sizes.burstConcurrency,
      timeoutMs: 30_000
    }
    const result = await measuredOn(ctx, variant.hosts, () =>
      childResult<FanOutResult>("fanOutClients.ts", config, 600_000)
    )
    ctx.log(
      `  fan-out to ${makers} makers, ${variant.name}: create → notified ${latency(result.latency)} ` +
        `(create answered p50 ${formatNumber(result.trigger.p50)} ms), ${formatNumber(result.notificationsPerSecond)} notifications/s`
    )
    results.set(variant.id, result)
  }
  return results
}

/**
 * Scenario 6: the lifecycle (scenario 2's clients and load) and the fan-out (scenario 3's
 * connections and creates) through one host on PostgreSQL and through two hosts in multi-host
 * mode behind HAProxy, in the same run, plus the same clients sent straight to one of the two
 * hosts (multi-host mode without a second host's help or any forwarding). Then what a request
 * forwarded to another owner costs (`forwardCost.ts`). Ratios are 2 hosts ÷ 1 host; no target is
 * checked (issue 15 aims at ≥ 0.9 for the lifecycle). Skipped without PostgreSQL, HAProxy, NATS or Redis.
 */
export const multiHost = async (
  ctx: BenchContext,
  sizes: MultiHostSizes,
  lifecycleSizes: LifecycleSizes,
  fanOutSizes: FanOutSizes
): Promise<ScenarioResult> => {
  if (ctx.postgresUrl === undefined) return skip(ctx, "no PostgreSQL server answers (set BENCH_DATABASE_URL)")
  const missing = await clusterServicesMissing()
  if (missing !== undefined) return skip(ctx, `multi-host mode cannot run here: ${missing}`)
  const url = ctx.postgresUrl
  const [oneStart, clusterStart] = await Promise.allSettled([
    ctx.startHost({ kind: "postgres", url }, "multihost-one"),
    startBenchCluster(ctx, url, 2, "multihost")
  ])
  try {
    if (oneStart.status === "rejected") throw oneStart.reason
    if (clusterStart.status === "rejected") throw clusterStart.reason
    return await measure(ctx, oneStart.value, clusterStart.value, sizes, lifecycleSizes, fanOutSizes)
  } finally {
    await Promise.allSettled([
      ...(oneStart.status === "fulfilled" ? [ctx.stopHost(oneStart.value)] : []),
      ...(clusterStart.status === "fulfilled" ? [clusterStart.value.stop()] : [])
    ])
  }
}

/** Every measurement of the scenario, on hosts already up. */
const measure = async (
  ctx: BenchContext,
  one: BenchHost,
  cluster: BenchCluster,
  sizes: MultiHostSizes,
  lifecycleSizes: LifecycleSizes,
  fanOutSizes: FanOutSizes
): Promise<ScenarioResult> => {
  const [first, second] = cluster.hosts as [BenchHost, BenchHost]
  const variants: ReadonlyArray<Variant> = [
    { id: "one", name: "1 host", httpUrl: one.url, wsUrl: one.wsUrl, hosts: [one] },
    {
      id: "own",
      name: "1 of 2 hosts, direct",
      httpUrl: first.url,
      wsUrl: first.wsUrl,
      hosts: [first, second]
    },
    {
      id: "two",
      name: "2 hosts behind HAProxy",
      httpUrl: cluster.proxy.url,
      wsUrl: cluster.proxy.wsUrl,
      hosts: [first, second],
      proxyPid: cluster.proxy.pid
    }
  ]
  const figures: Record<string, number | string> = { clients: lifecycleSizes.clients }
  const notes: Array<string> = []

  const life = await lifecycles(ctx, variants, lifecycleSizes, sizes.lifecycleRounds)
  const perSecond = (id: Variant["id"]) => life.get(id)!.lifecyclesPerSecond
  const lifecycleRatio = perSecond("two") / perSecond("one")
  for (const [id, result] of life) {
    Object.assign(figures, {
      [`${id}LifecyclesPerSecond`]: result.lifecyclesPerSecond,
      [`${id}LifecycleErrors`]: result.errors,
      [`${id}LifecycleP50Ms`]: result.steps.lifecycle.p50,
      [`${id}LifecycleP99Ms`]: result.steps.lifecycle.p99
    })
    for (const [key, ms] of Object.entries(result.cpuMs))
      if (ms !== undefined) figures[`${id}Cpu${key[0]!.toUpperCase()}${key.slice(1)}MsPerLifecycle`] = ms
    if (result.machine !== undefined) figures[`${id}CpuMachineMsPerLifecycle`] = result.machine.busyMsPer
  }
  figures.lifecycleRatio = lifecycleRatio
  figures.lifecycleRatioOwn = perSecond("own") / perSecond("one")
  ctx.log(
    `  lifecycle ratio 2 hosts ÷ 1 host = ${lifecycleRatio.toFixed(3)} (target ≥ ${LIFECYCLE_AIM}); ` +
      `1 of 2 hosts direct ÷ 1 host = ${(figures.lifecycleRatioOwn as number).toFixed(3)}`
  )
  notes.push(
    `lifecycle (${lifecycleSizes.clients} clients): 1 host ${formatNumber(perSecond("one"))}/s, 2 hosts behind HAProxy ${formatNumber(perSecond("two"))}/s, ` +
      `ratio ${lifecycleRatio.toFixed(3)} (1 of the 2 hosts direct: ${formatNumber(perSecond("own"))}/s)`
  )
  const ceiling = sameHostsCeiling(life.get("one")!, life.get("two")!)
  if (ceiling !== undefined) {
    figures.lifecycleRatioCeilingSameHosts = ceiling.ratio
    figures.twoOutsideHostsMsPerLifecycle = ceiling.outsideMsPer
    const line =
      `with two hosts that together cost what the one host costs (${formatNumber(ceiling.oneHostsMsPer)} ms per lifecycle), the rest of the 2-host run ` +
      `(HAProxy, NATS, Redis, PostgreSQL, clients: ${formatNumber(ceiling.outsideMsPer)} ms per lifecycle) on ${ceiling.cores.toFixed(2)} cores ` +
      `would allow at most ${formatNumber(ceiling.perSecond)} lifecycles/s: ${ceiling.ratio.toFixed(3)} of the one host`
    ctx.log(`    ${line}`)
    notes.push(line)
  }

  for (const makers of fanOutSizes.makers) {
    const fan = await fanOuts(ctx, variants, fanOutSizes, makers)
    const p99 = (id: Variant["id"]) => fan.get(id)!.latency.p99
    const rate = (id: Variant["id"]) => fan.get(id)!.notificationsPerSecond
    for (const [id, result] of fan) {
      Object.assign(figures, {
        [`m${makers}${id}P50Ms`]: result.latency.p50,
        [`m${makers}${id}P99Ms`]: result.latency.p99,
        [`m${makers}${id}CreateP50Ms`]: result.trigger.p50,
        [`m${makers}${id}NotificationsPerSecond`]: result.notificationsPerSecond
      })
    }
    figures[`m${makers}P99Ratio`] = p99("two") / p99("one")
    figures[`m${makers}ThroughputRatio`] = rate("two") / rate("one")
    ctx.log(
      `  fan-out to ${makers} makers, 2 hosts ÷ 1 host: p99 ${(p99("two") / p99("one")).toFixed(2)}×, notifications/s ${(rate("two") / rate("one")).toFixed(3)}`
    )
    notes.push(
      `fan-out to ${makers} makers, p99 create → notified: 1 host ${formatNumber(p99("one"))} ms, 2 hosts ${formatNumber(p99("two"))} ms ` +
        `(1 of the 2 direct ${formatNumber(p99("own"))} ms); notifications/s 2 hosts ÷ 1 host ${(rate("two") / rate("one")).toFixed(3)}`
    )
  }

  const forwardConfig: ForwardCostConfig = {
    hostUrls: [first.url, second.url],
    rounds: sizes.forwardRounds,
    warmupRounds: sizes.forwardWarmupRounds,
    cpuBlock: sizes.forwardCpuBlock
  }
  // Per op and kind: each host's CPU ms over the blocks ([first, second]) and the requests sent.
  const forwardCpuMs = {
    read: { owner: [0, 0], forwarded: [0, 0] },
    write: { owner: [0, 0], forwarded: [0, 0] }
  }
  const forwardCount = { read: { owner: 0, forwarded: 0 }, write: { owner: 0, forwarded: 0 } }
  const forward = await measuredOn(ctx, [first, second], async () => {
    const child = spawnTs(childScript("forwardCost.ts"), [JSON.stringify(forwardConfig)])
    try {
      const hostsCpu = () => [first, second].map((h) => cpuMsOfPid(h.child.process.pid) ?? Number.NaN)
      // The child waits for a `go` at each block's start and end: the readings bracket the block.
      for (const { op, kind } of sizes.forwardCpuBlock > 0 ? cpuBlocks() : []) {
        await child.next("block-start", 600_000)
        const before = hostsCpu()
        child.send({ type: "go" })
        await child.next("block-end", 600_000)
        const after = hostsCpu()
        child.send({ type: "go" })
        for (const [i, ms] of after.entries()) forwardCpuMs[op][kind][i]! += ms - before[i]!
        forwardCount[op][kind] += sizes.forwardCpuBlock
      }
      return await child.next<ForwardCostResult>("result", 600_000)
    } finally {
      await child.stop()
    }
  })
  for (const [op, label] of [
    ["read", "GET /v1/rfq/{id}"],
    ["write", "PUT /v1/rfq/quote"]
  ] as const) {
    const { owner, forwarded } = forward[op]
    Object.assign(figures, {
      [`${op}OwnerP50Ms`]: owner.p50,
      [`${op}OwnerP99Ms`]: owner.p99,
      [`${op}ForwardedP50Ms`]: forwarded.p50,
      [`${op}ForwardedP99Ms`]: forwarded.p99,
      [`${op}ForwardCostP50Ms`]: forwarded.p50 - owner.p50
    })
    ctx.log(
      `  ${label}, one at a time (${owner.count} each): at the owner ${latency(owner)}, forwarded ${latency(forwarded)}; ` +
        `forwarded − owner: ${signed(forwarded.p50 - owner.p50)} ms at p50, ${signed(forwarded.p99 - owner.p99)} ms at p99`
    )
    notes.push(
      `${label} at the owner p50 ${formatNumber(owner.p50)} / p99 ${formatNumber(owner.p99)} ms, forwarded p50 ${formatNumber(forwarded.p50)} / p99 ${formatNumber(forwarded.p99)} ms ` +
        `(${signed(forwarded.p50 - owner.p50)} ms at p50)`
    )
    if (forwardCount[op].owner > 0) {
      // µs of CPU per request on the RFQ's owner (the first host) and on the other host.
      const per = (kind: ForwardKind) =>
        forwardCpuMs[op][kind].map((ms) => (ms * 1000) / forwardCount[op][kind])
      const [atOwner, atOwnerOther] = per("owner")
      const [forwardedOwner, forwardedEntry] = per("forwarded")
      Object.assign(figures, {
        [`${op}OwnerCpuUs`]: atOwner! + atOwnerOther!,
        [`${op}ForwardedCpuUs`]: forwardedOwner! + forwardedEntry!,
        [`${op}ForwardedEntryCpuUs`]: forwardedEntry!,
        [`${op}ForwardedOwnerCpuUs`]: forwardedOwner!
      })
      const line =
        `${label}, CPU per request (${CPU_IN_FLIGHT} in flight): at the owner ${formatNumber(atOwner!)} µs (+ ${formatNumber(atOwnerOther!)} µs on the other host); ` +
        `forwarded ${formatNumber(forwardedEntry!)} µs on the host taking it + ${formatNumber(forwardedOwner!)} µs on the owner`
      ctx.log(`  ${line}`)
      notes.push(line)
    }
  }
  const targets = lifecycleSizes.targets
    ? [check("lifecycle through 2 hosts ÷ through 1 host", lifecycleRatio, ">=", LIFECYCLE_AIM)]
    : []
  return { id: ID, title: TITLE, figures, targets, notes }
}

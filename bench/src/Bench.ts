import { BenchContext } from "./BenchContext.js"
import { postgresVersion } from "./Postgres.js"
import type { Log, ScenarioResult } from "./Report.js"
import { targetLine } from "./Report.js"
import { describeMachine, gitCommit, type RunRecord } from "./Results.js"
import { type ClientCostSizes, clientCost } from "./scenarios/ClientCost.js"
import { fanOut, type FanOutSizes } from "./scenarios/FanOut.js"
import { lifecycle, type LifecycleSizes } from "./scenarios/Lifecycle.js"
import { memory, type MemorySizes } from "./scenarios/Memory.js"
import { multiHost, type MultiHostSizes } from "./scenarios/MultiHost.js"
import { restRead, type RestReadSizes } from "./scenarios/RestRead.js"
import { wsQuoting, type WsQuotingSizes } from "./scenarios/WsQuoting.js"

export type Mode = "full" | "quick" | "smoke"

export interface Sizes {
  readonly restRead: RestReadSizes
  readonly lifecycle: LifecycleSizes
  readonly fanOut: FanOutSizes
  readonly wsQuoting: WsQuotingSizes
  readonly memory: MemorySizes
  /** Multi-host extras; the lifecycle and fan-out loads themselves are `lifecycle` and `fanOut`. */
  readonly multiHost: MultiHostSizes
  readonly clientCost: ClientCostSizes
}

/**
 * How big each scenario runs. `full` is the run (a few minutes); `quick` the same shape
 * with about half a minute of load on one PostgreSQL host (when a server answers), targets still
 * printed but indicative; `smoke` is the harness on tiny sizes for `npm test`, with no targets.
 */
export const sizesFor = (mode: Mode): Sizes => {
  switch (mode) {
    case "full":
      return {
        restRead: { connections: 32, warmupMs: 2_000, durationMs: 10_000, rounds: 2, targets: true },
        lifecycle: {
          clients: 16,
          warmupMs: 3_000,
          durationMs: 15_000,
          targets: true,
          databases: ["postgres", "pglite"]
        },
        fanOut: {
          makers: [100, 1000],
          sequentialRfqs: 50,
          burstRfqs: 50,
          burstConcurrency: 4,
          rounds: 2,
          targets: true
        },
        wsQuoting: { connections: 30, warmupMs: 2_000, durationMs: 10_000, targets: true },
        memory: { checkpoints: [10_000, 100_000], direct: 500, concurrency: 16, targets: true },
        multiHost: {
          lifecycleRounds: 2,
          forwardRounds: 500,
          forwardWarmupRounds: 50,
          forwardCpuBlock: 1_000
        },
        clientCost: { calls: 2_000, rounds: 3 }
      }
    case "quick":
      return {
        restRead: { connections: 32, warmupMs: 2_000, durationMs: 3_000, rounds: 1, targets: true },
        lifecycle: {
          clients: 8,
          warmupMs: 1_000,
          durationMs: 4_000,
          targets: true,
          databases: ["postgres"],
          shareHostOn: "postgres"
        },
        fanOut: {
          makers: [100, 1000],
          sequentialRfqs: 10,
          burstRfqs: 10,
          burstConcurrency: 4,
          targets: true
        },
        wsQuoting: { connections: 12, warmupMs: 500, durationMs: 2_000, targets: true },
        memory: { checkpoints: [10_000], direct: 50, concurrency: 16, targets: true },
        multiHost: { lifecycleRounds: 1, forwardRounds: 200, forwardWarmupRounds: 20, forwardCpuBlock: 300 },
        clientCost: { calls: 1_000, rounds: 2 }
      }
    case "smoke":
      return {
        restRead: { connections: 2, warmupMs: 100, durationMs: 300, rounds: 1, targets: false },
        lifecycle: {
          clients: 2,
          warmupMs: 200,
          durationMs: 800,
          targets: false,
          databases: ["postgres", "pglite"],
          shareHostOn: "pglite"
        },
        fanOut: {
          makers: [5],
          sequentialRfqs: 2,
          burstRfqs: 2,
          burstConcurrency: 2,
          rounds: 2,
          targets: false
        },
        wsQuoting: { connections: 3, warmupMs: 100, durationMs: 300, targets: false },
        memory: { checkpoints: [50], direct: 5, concurrency: 4, targets: false },
        multiHost: { lifecycleRounds: 1, forwardRounds: 5, forwardWarmupRounds: 1, forwardCpuBlock: 10 },
        clientCost: { calls: 20, rounds: 1 }
      }
  }
}

export const SCENARIOS = [
  "rest-read",
  "lifecycle",
  "fan-out",
  "ws-quoting",
  "memory",
  "multihost",
  "client"
] as const
export type ScenarioId = (typeof SCENARIOS)[number]

export interface RunOptions {
  readonly mode: Mode
  readonly log: Log
  readonly only?: ReadonlyArray<ScenarioId>
  readonly postgresUrl: string
  /** Profile the hosts with `--cpu-prof` into this directory. */
  readonly profileDir?: string
  /** Run the lifecycle's hosts with a wait profile written into this directory. */
  readonly waitsDir?: string
  readonly sizes?: Sizes
}

/** Runs the scenarios in order, each printing its figures and PASS/FAIL lines as it ends. */
export const runBench = async (options: RunOptions): Promise<RunRecord> => {
  const startedAt = new Date().toISOString()
  const version = await postgresVersion(options.postgresUrl)
  const machine = describeMachine(version)
  const log = options.log
  log(
    `RFQ service bench (${options.mode}) on ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Node ${machine.node}, ` +
      `PostgreSQL ${machine.postgres}; load average ${machine.loadAverage.toFixed(1)}`
  )
  const sizes = options.sizes ?? sizesFor(options.mode)
  const ctx = new BenchContext(
    log,
    version === undefined ? undefined : options.postgresUrl,
    options.profileDir,
    options.mode === "quick" ? "postgres" : "pglite"
  )
  const waits = options.waitsDir === undefined ? undefined : { dir: options.waitsDir, accounts: [] }
  const wanted = (id: ScenarioId) => options.only === undefined || options.only.includes(id)
  const plan: Array<[ScenarioId, string, () => Promise<ScenarioResult>]> = [
    ["rest-read", "1. REST read", () => restRead(ctx, sizes.restRead)],
    ["lifecycle", "2. Lifecycle", () => lifecycle(ctx, sizes.lifecycle, waits)],
    ["fan-out", "3. Fan-out", () => fanOut(ctx, sizes.fanOut)],
    ["ws-quoting", "4. Quoting over WebSocket", () => wsQuoting(ctx, sizes.wsQuoting)],
    ["memory", "5. Memory", () => memory(ctx, sizes.memory)],
    [
      "multihost",
      "6. Through 2 hosts behind HAProxy",
      () => multiHost(ctx, sizes.multiHost, sizes.lifecycle, sizes.fanOut)
    ],
    ["client", "7. @rfq/client's own cost per call", () => clientCost(ctx, sizes.clientCost)]
  ]
  const scenarios: Array<ScenarioResult> = []
  try {
    for (const [id, title, run] of plan) {
      if (!wanted(id)) continue
      log(`\n${title}`)
      const result = await run()
      for (const t of result.targets) log(`  ${targetLine(t)}`)
      if (result.targets.length === 0 && result.skipped === undefined) log("  (no target)")
      scenarios.push(result)
    }
  } finally {
    await ctx.close()
  }
  return {
    startedAt,
    finishedAt: new Date().toISOString(),
    mode: options.mode,
    commit: gitCommit(),
    machine,
    scenarios,
    profiles: ctx.profiles,
    ...(waits === undefined ? {} : { waits: waits.accounts })
  }
}

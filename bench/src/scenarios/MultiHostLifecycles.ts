import type { BenchContext } from "../BenchContext.js"
import type { BenchHost } from "../BenchHost.js"
import type { LifecycleConfig, LifecycleResult } from "../children/lifecycleClients.js"
import { machineMs } from "../CoreAccount.js"
import { childResult } from "../Processes.js"
import { type CpuGroup, cpuPerOperation, readCpu } from "../ProcessCpu.js"
import { formatNumber } from "../Report.js"
import { type LifecycleSizes, stepLine } from "./Lifecycle.js"

/**
 * The multi-host scenario's lifecycle runs (`MultiHost.ts`): each variant's lifecycles with the CPU
 * they cost each process group and the whole machine, and the ceiling of two hosts that the
 * machine's figures allow.
 */

/** Where one variant's clients send their requests and open their sessions. */
export interface Variant {
  readonly id: "one" | "own" | "two"
  readonly name: string
  readonly httpUrl: string
  readonly wsUrl: string
  /** The hosts doing the work (for profile windows). */
  readonly hosts: ReadonlyArray<BenchHost>
  /** HAProxy's process, when the variant goes through it. */
  readonly proxyPid?: number | undefined
}

/**
 * Whose CPU a lifecycle run accounts for: the variant's hosts (and each of two apart: with clients
 * sent to the first, the second's share is what following the event stream costs), HAProxy, and
 * the shared services.
 */
export type CpuKey = "hosts" | "first" | "second" | "haproxy" | "postgres" | "nats" | "redis"

const cpuGroupsOf = (variant: Variant): Record<CpuKey, CpuGroup> => ({
  hosts: { pids: variant.hosts.map((host) => host.child.process.pid) },
  first: { pids: variant.hosts.length < 2 ? [] : [variant.hosts[0]!.child.process.pid] },
  second: { pids: variant.hosts.length < 2 ? [] : [variant.hosts[1]!.child.process.pid] },
  haproxy: { pids: variant.proxyPid === undefined ? [] : [variant.proxyPid] },
  postgres: { command: "postgres" },
  nats: { command: "nats-server" },
  redis: { command: "redis-server" }
})

/**
 * A lifecycle run with the CPU it cost, ms per lifecycle of each group, and the whole machine's:
 * every core's busy ms per lifecycle and the cores it had (busy and idle over the run's wall time).
 */
export type LifecycleRun = LifecycleResult & {
  readonly cpuMs: Record<CpuKey, number | undefined>
  readonly machine: { readonly busyMsPer: number; readonly cores: number } | undefined
}

/** `hosts 9.1, haproxy 0.8, ...` ms of CPU per lifecycle (groups that could not be read left out). */
const cpuLine = (perLifecycle: Record<CpuKey, number | undefined>) =>
  (Object.entries(perLifecycle) as Array<[CpuKey, number | undefined]>)
    .filter(([, ms]) => ms !== undefined && ms > 0)
    .map(([key, ms]) => `${key} ${formatNumber(ms!)}`)
    .join(", ")

/** Runs `body` as load on every host of the variant (profile windows). */
export const measuredOn = <A>(
  ctx: BenchContext,
  hosts: ReadonlyArray<BenchHost>,
  body: () => Promise<A>
): Promise<A> => hosts.reduce<() => Promise<A>>((inner, host) => () => ctx.measured(host, inner), body)()

/**
 * Lifecycle through each variant with scenario 2's clients and load, `rounds` times interleaved;
 * the best run of each variant counts (a noisy neighbour spoils a round, not a variant).
 */
export const lifecycles = async (
  ctx: BenchContext,
  variants: ReadonlyArray<Variant>,
  sizes: LifecycleSizes,
  rounds: number
): Promise<Map<Variant["id"], LifecycleRun>> => {
  const best = new Map<Variant["id"], LifecycleRun>()
  for (let round = 0; round < rounds; round++) {
    for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
      const config: LifecycleConfig = {
        url: variant.httpUrl,
        clients: sizes.clients,
        warmupMs: sizes.warmupMs,
        durationMs: sizes.durationMs
      }
      const groups = cpuGroupsOf(variant)
      const cpuBefore = readCpu(groups)
      const machineBefore = machineMs()
      const startedAt = performance.now()
      const run = await measuredOn(ctx, variant.hosts, () =>
        childResult<LifecycleResult>(
          "lifecycleClients.ts",
          config,
          sizes.warmupMs + sizes.durationMs + 300_000
        )
      )
      // Over the whole run (warm-up included) per lifecycle completed in it.
      const machineAfter = machineMs()
      const wallMs = performance.now() - startedAt
      const result: LifecycleRun = {
        ...run,
        cpuMs: cpuPerOperation(cpuBefore, readCpu(groups), run.completed),
        machine:
          machineBefore === undefined || machineAfter === undefined || run.completed <= 0 || wallMs <= 0
            ? undefined
            : {
                busyMsPer: (machineAfter.busy - machineBefore.busy) / run.completed,
                cores:
                  (machineAfter.busy - machineBefore.busy + machineAfter.idle - machineBefore.idle) / wallMs
              }
      }
      if (result.lifecycles === 0)
        throw new Error(`${variant.name}: no lifecycle completed (${result.firstError ?? "no error"})`)
      ctx.log(
        `  lifecycle, ${variant.name}: ${formatNumber(result.lifecyclesPerSecond)} lifecycles/s (${result.errors} errors); ` +
          `${stepLine("create", result.steps.create)}; ${stepLine("quote", result.steps.quote)}; ${stepLine("accept", result.steps.accept)}`
      )
      const machine =
        result.machine === undefined ? "" : `; the whole machine ${formatNumber(result.machine.busyMsPer)}`
      ctx.log(`    CPU ms per lifecycle: ${cpuLine(result.cpuMs)}${machine}`)
      if (result.errors > 0) ctx.log(`    first error: ${result.firstError}`)
      const previous = best.get(variant.id)
      if (previous === undefined || result.lifecyclesPerSecond > previous.lifecyclesPerSecond)
        best.set(variant.id, result)
    }
  }
  return best
}

/**
 * What the machine allows the 2-host run at most if the two hosts together cost what the one host
 * costs per lifecycle: everything else it spent (HAProxy, NATS, Redis, PostgreSQL, the clients and
 * the bench: its busy time per lifecycle less its hosts') plus the one host's cost, on every core
 * the machine had, against the one host's measured rate. An upper bound: no run keeps every core
 * busy. Undefined where `/proc` could not be read.
 */
export const sameHostsCeiling = (one: LifecycleRun, two: LifecycleRun) => {
  const oneHostsMsPer = one.cpuMs.hosts
  const twoHostsMsPer = two.cpuMs.hosts
  if (two.machine === undefined || oneHostsMsPer === undefined || twoHostsMsPer === undefined)
    return undefined
  const outsideMsPer = Math.max(0, two.machine.busyMsPer - twoHostsMsPer)
  const perSecond = (two.machine.cores * 1000) / (outsideMsPer + oneHostsMsPer)
  return {
    oneHostsMsPer,
    outsideMsPer,
    cores: two.machine.cores,
    perSecond,
    ratio: perSecond / one.lifecyclesPerSecond
  }
}

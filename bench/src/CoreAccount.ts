import * as fs from "node:fs"
import { type CpuReading, cpuSpent, readCpu, systemMsOfPid } from "./ProcessCpu.js"
import { formatNumber } from "./Report.js"

/**
 * Where the machine's cores went while a load ran: the host (and, of its main thread, the time it
 * ran and the time it was ready to run but waited for a core), PostgreSQL, everything else (the load
 * clients, the bench itself) and idle, read from `/proc` at the start and the end of a window inside
 * the measured part of the load. Divided by the operations per second measured, each is a cost per
 * operation that holds when the cores are shared.
 *
 * Why: a V8 CPU profile samples the main thread by wall time, so a thread waiting for a core is
 * sampled in whatever it last called; under the lifecycle load that is mostly the PostgreSQL socket
 * write that woke a backend (`writev`), which `perf` shows costs a fraction of what the profile says.
 * The run-queue wait (`/proc/<pid>/task/<pid>/schedstat`, Linux) is that time, measured.
 */

/** Milliseconds of the whole machine so far: busy (every core, all modes but idle) and idle. */
export const machineMs = (): { busy: number; idle: number } | undefined => {
  try {
    const line = fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!
    const [user, nice, system, idle, iowait, irq, softirq, steal] = line
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number)
    const tick = 10 // USER_HZ is 100 on Linux
    return {
      busy: (user! + nice! + system! + irq! + softirq! + steal!) * tick,
      idle: (idle! + iowait!) * tick
    }
  } catch {
    return undefined
  }
}

/** The main thread of `pid`: ms it ran on a core and ms it waited, ready, for one (schedstat). */
const mainThreadMs = (pid: number | undefined): { ran: number; waited: number } | undefined => {
  if (pid === undefined) return undefined
  try {
    const [ran, waited] = fs
      .readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8")
      .trim()
      .split(/\s+/)
      .map(Number)
    return ran === undefined || waited === undefined ? undefined : { ran: ran / 1e6, waited: waited / 1e6 }
  } catch {
    return undefined
  }
}

export interface Reading {
  readonly at: number
  readonly machine: ReturnType<typeof machineMs>
  readonly main: ReturnType<typeof mainThreadMs>
  readonly host: CpuReading | undefined
  /** The host's kernel time so far (ms), all its threads. */
  readonly hostSystem: number | undefined
  readonly postgres: CpuReading | undefined
}

/** A reading of the machine, the host (`hostPid`, if any) and PostgreSQL, to compare with a later one. */
export const readCores = (hostPid: number | undefined): Reading => {
  const cpu = readCpu({ host: { pids: [hostPid] }, postgres: { command: "postgres" } })
  return {
    at: performance.now(),
    machine: machineMs(),
    main: mainThreadMs(hostPid),
    host: cpu.host,
    hostSystem: systemMsOfPid(hostPid),
    postgres: cpu.postgres
  }
}

/** Cores (1.0 = one core busy the whole window) by where they went; undefined where unreadable. */
export interface CoreShares {
  readonly windowMs: number
  readonly host: number | undefined
  /** Of `host`, the time its threads spent in the kernel (system calls: socket writes and reads, wake-ups). */
  readonly hostSystem: number | undefined
  readonly hostMainRan: number | undefined
  readonly hostMainWaited: number | undefined
  readonly postgres: number | undefined
  /** Busy cores that were neither the host nor PostgreSQL: the load clients, the bench, the rest. */
  readonly others: number | undefined
  readonly idle: number | undefined
}

const share = (a: number | undefined, b: number | undefined, ms: number) =>
  a === undefined || b === undefined ? undefined : Math.max(0, a - b) / ms

/** The shares between two readings of the same host (`readCores`). */
export const sharesBetween = (first: Reading, last: Reading, hasHost: boolean): CoreShares => {
  const ms = last.at - first.at
  const busy = share(last.machine?.busy, first.machine?.busy, ms)
  const host = hasHost ? share(cpuSpent(first.host, last.host), 0, ms) : 0
  const postgres = share(cpuSpent(first.postgres, last.postgres), 0, ms)
  return {
    windowMs: ms,
    host: hasHost ? host : undefined,
    hostSystem: hasHost ? share(last.hostSystem, first.hostSystem, ms) : undefined,
    hostMainRan: share(last.main?.ran, first.main?.ran, ms),
    hostMainWaited: share(last.main?.waited, first.main?.waited, ms),
    postgres,
    others:
      busy === undefined || host === undefined || postgres === undefined
        ? undefined
        : Math.max(0, busy - host - postgres),
    idle: share(last.machine?.idle, first.machine?.idle, ms)
  }
}

/**
 * Reads at `fromMs` and `toMs` after now (both inside the load's measured part) and answers the
 * shares between them. `hostPid` undefined: a baseline without a host (its clients count in `others`).
 */
export const coreWindow = (hostPid: number | undefined, fromMs: number, toMs: number): Promise<CoreShares> =>
  new Promise((resolve) => {
    let first: Reading
    setTimeout(() => {
      first = readCores(hostPid)
    }, fromMs)
    setTimeout(() => resolve(sharesBetween(first, readCores(hostPid), hostPid !== undefined)), toMs)
  })

/**
 * The window inside a load child's measured part: from 2 s after its warm-up would end had it
 * started at once (a child starts within 2 s) to 1 s before its measured part would end; none when
 * that leaves less than a second (the smoke test's sizes).
 */
export const measuredWindow = (
  warmupMs: number,
  durationMs: number
): { readonly fromMs: number; readonly toMs: number } | undefined => {
  const fromMs = warmupMs + 2_000
  const toMs = warmupMs + durationMs - 1_000
  return toMs - fromMs >= 1_000 ? { fromMs, toMs } : undefined
}

/** Per operation, in ms of a core, of each share (`perSecond` operations a second). */
export const perOperation = (shares: CoreShares, perSecond: number): Record<string, number | undefined> => {
  const per = (cores: number | undefined) =>
    cores === undefined || perSecond <= 0 ? undefined : (cores * 1000) / perSecond
  return {
    host: per(shares.host),
    hostSystem: per(shares.hostSystem),
    hostMainRan: per(shares.hostMainRan),
    hostMainWaited: per(shares.hostMainWaited),
    postgres: per(shares.postgres),
    others: per(shares.others),
    idle: per(shares.idle)
  }
}

const ms = (value: number | undefined) => (value === undefined ? "n/a" : `${formatNumber(value)} ms`)
const cores = (value: number | undefined) => (value === undefined ? "n/a" : value.toFixed(2))

/** One line: cores by where they went, and the same per operation. */
export const coreLine = (shares: CoreShares, perSecond: number, unit: string): string => {
  const p = perOperation(shares, perSecond)
  const host =
    shares.host === undefined
      ? ""
      : `host ${cores(shares.host)} (${ms(p.host)}, ${ms(p.hostSystem)} of it in the kernel; its main thread ran ${ms(p.hostMainRan)} and waited for a core ${ms(p.hostMainWaited)}), `
  return (
    `cores over ${formatNumber(shares.windowMs / 1000)} s of load, and per ${unit}: ${host}` +
    `PostgreSQL ${cores(shares.postgres)} (${ms(p.postgres)}), clients and the rest ${cores(shares.others)} (${ms(p.others)}), idle ${cores(shares.idle)}`
  )
}

/**
 * The service's cores against its baseline's, per operation, and what they bound: with a host that
 * cost nothing, the rest of the service's cost per operation (PostgreSQL, the clients) on the cores
 * the machine has would allow at most `ceiling` operations a second, and so at most `ceiling ÷
 * baseline` of the ratio. Figures are keyed by `prefix`.
 */
export const coreComparison = (
  prefix: string,
  service: CoreShares,
  servicePerSecond: number,
  baseline: CoreShares,
  baselinePerSecond: number,
  unit: string
): { readonly lines: ReadonlyArray<string>; readonly figures: Record<string, number> } => {
  const s = perOperation(service, servicePerSecond)
  const b = perOperation(baseline, baselinePerSecond)
  const figures: Record<string, number> = {}
  const put = (name: string, value: number | undefined) => {
    if (value !== undefined && Number.isFinite(value)) figures[`${prefix}${name}`] = value
  }
  put("HostCpuMsPer", s.host)
  put("HostSystemMsPer", s.hostSystem)
  put("HostMainRanMsPer", s.hostMainRan)
  put("HostMainWaitedMsPer", s.hostMainWaited)
  put("PostgresCpuMsPer", s.postgres)
  put("OthersCpuMsPer", s.others)
  put("BaselinePostgresCpuMsPer", b.postgres)
  put("BaselineOthersCpuMsPer", b.others)
  const lines = [
    `service: ${coreLine(service, servicePerSecond, unit)}`,
    `baseline: ${coreLine(baseline, baselinePerSecond, unit)}`
  ]
  const machine = (service.host ?? 0) + (service.postgres ?? 0) + (service.others ?? 0) + (service.idle ?? 0)
  if (s.postgres !== undefined && s.others !== undefined && baselinePerSecond > 0 && machine > 0) {
    const ceiling = (machine * 1000) / (s.postgres + s.others)
    put("CeilingWithoutHost", ceiling)
    put("RatioCeilingWithoutHost", ceiling / baselinePerSecond)
    lines.push(
      `with a host that cost nothing, PostgreSQL's and the clients' ${formatNumber(s.postgres + s.others)} ms per ${unit} on ${machine.toFixed(2)} cores ` +
        `would allow at most ${formatNumber(ceiling)} per second: ${(ceiling / baselinePerSecond).toFixed(3)} of the baseline`
    )
  }
  return { lines, figures }
}

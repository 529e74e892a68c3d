import * as fs from "node:fs"
import { formatNumber } from "./Report.js"
import type { LatencySummary } from "./Stats.js"
import type { WaitProfileFile } from "@rfq/host"

/**
 * `--waits`: where a lifecycle step's wall time went in the host, read from the host's wait
 * profile (`RFQ_WAIT_PROFILE`, `packages/host/src/WaitProfile.ts`), and set against the step's
 * latency as its client saw it.
 */

/** The host's variable: the file its wait profile is written to. */
export const WAIT_PROFILE_VARIABLE = "RFQ_WAIT_PROFILE"

/** The file of the host's n-th SIGUSR2 window, as the host names it: `/dir/h.json` → `/dir/h.2.json`. */
export const windowFile = (file: string, n: number): string => file.replace(/(\.json)?$/, `.${n}.json`)

/** The host's wait profile file, as the host writes it. */
type HostWaitFile = WaitProfileFile

/** One phase of a step: its own time in a typical request, and its share of the client's p50. */
export interface StepPhase {
  readonly name: string
  readonly ms: number
  readonly share: number
  /** Spans of this name per request (statements per request for `sql.execute`). */
  readonly perRequest: number
}

export interface StepWaits {
  readonly step: string
  /** The host's span for it: `<METHOD> <route>`. */
  readonly root: string
  readonly requests: number
  readonly clientP50Ms: number
  readonly hostP50Ms: number
  readonly hostP99Ms: number
  /** Statements per request (`sql.execute` spans). */
  readonly statements: number
  /** Statements per request by the span that ran them. */
  readonly statementsBy: ReadonlyArray<{ readonly caller: string; readonly perRequest: number }>
  /** Largest first; the last one is the time outside the request's fiber (client, network, uWS). */
  readonly phases: ReadonlyArray<StepPhase>
}

export interface HostWaits {
  readonly host: string
  readonly file: string
  readonly windowMs: number
  readonly process: HostWaitFile["process"] & { readonly cpuMsPerLifecycle: number }
  /** One statement from sending it to its answer being read, all requests: p50 and p99. */
  readonly statementRoundTrip?: { readonly p50Ms: number; readonly p99Ms: number }
  readonly steps: ReadonlyArray<StepWaits>
  /** Rows written per lifecycle by table (PostgreSQL only). */
  readonly rowsPerLifecycle?: Readonly<Record<string, number>>
}

/** The lifecycle's steps and the host span of each. */
export const LIFECYCLE_ROOTS = {
  create: "POST /v1/rfq/{id}",
  quote: "POST /v1/rfq/quote",
  accept: "POST /v1/rfq/trade"
} as const

/** The pool's mark of a statement's round trip (PostgreSQL only; `GuardedPool.ts`). */
const STATEMENT_ROUND_TRIP = "pg.statement round trip"

/** The client's p50 less the host's: the client, the network both ways, uWS, the wait to be read. */
export const OUTSIDE = "outside the host's handling (client, network, event loop)"

/**
 * The account of each step: the phases of the host's requests around their median (p40–p60),
 * each as a share of the client's p50, and what the client waited beyond the host's p50.
 */
export const stepWaits = (
  file: HostWaitFile,
  steps: Readonly<Record<keyof typeof LIFECYCLE_ROOTS, LatencySummary>>
): Array<StepWaits> =>
  Object.entries(LIFECYCLE_ROOTS).flatMap(([step, root]) => {
    const request = file.requests.find((r) => r.root === root)
    if (request === undefined) return []
    const clientP50Ms = steps[step as keyof typeof LIFECYCLE_ROOTS].p50
    const share = (ms: number) => (clientP50Ms > 0 ? ms / clientP50Ms : 0)
    const phases: Array<StepPhase> = request.phases.map((p) => ({
      name: p.name,
      ms: p.bandMs,
      share: share(p.bandMs),
      perRequest: p.perRequest
    }))
    const outside = Math.max(0, clientP50Ms - request.p50Ms)
    phases.push({ name: OUTSIDE, ms: outside, share: share(outside), perRequest: 1 })
    phases.sort((a, b) => b.ms - a.ms)
    return [
      {
        step,
        root,
        requests: request.count,
        clientP50Ms,
        hostP50Ms: request.p50Ms,
        hostP99Ms: request.p99Ms,
        statements: request.phases.find((p) => p.name === "sql.execute")?.perRequest ?? 0,
        statementsBy: request.statements,
        phases
      }
    ]
  })

export const readHostWaits = (
  host: string,
  path: string,
  steps: Readonly<Record<keyof typeof LIFECYCLE_ROOTS, LatencySummary>>,
  lifecycles: number
): HostWaits => {
  const file = JSON.parse(fs.readFileSync(path, "utf8")) as HostWaitFile
  const roundTrip = file.spans.find((s) => s.name === STATEMENT_ROUND_TRIP)
  return {
    host,
    file: path,
    windowMs: file.toMs - file.fromMs,
    process: { ...file.process, cpuMsPerLifecycle: lifecycles > 0 ? file.process.cpuMs / lifecycles : 0 },
    ...(roundTrip === undefined
      ? {}
      : { statementRoundTrip: { p50Ms: roundTrip.p50Ms, p99Ms: roundTrip.p99Ms } }),
    steps: stepWaits(file, steps)
  }
}

const pct = (share: number) => `${(share * 100).toFixed(0)} %`

/** The account as printed: per step, its top phases with their share of the step's p50. */
export const formatHostWaits = (waits: HostWaits, top = 8): Array<string> => {
  const p = waits.process
  const lines = [
    `Where the lifecycle's wall time went in the ${waits.host} host (${formatNumber(waits.windowMs / 1000)} s window): ` +
      `event loop busy ${pct(p.eventLoopUtilization)}, loop delay p50 ${formatNumber(p.loopDelay.p50Ms)} ms ` +
      `p99 ${formatNumber(p.loopDelay.p99Ms)} ms, process CPU ${formatNumber(p.cpuMsPerLifecycle)} ms per lifecycle` +
      (waits.statementRoundTrip === undefined
        ? ""
        : `; a statement's round trip p50 ${formatNumber(waits.statementRoundTrip.p50Ms)} ms p99 ${formatNumber(waits.statementRoundTrip.p99Ms)} ms`)
  ]
  for (const s of waits.steps) {
    lines.push(
      `  ${s.step}: client p50 ${formatNumber(s.clientP50Ms)} ms; in the host p50 ${formatNumber(s.hostP50Ms)} ms ` +
        `p99 ${formatNumber(s.hostP99Ms)} ms (${s.requests} requests, ${formatNumber(s.statements)} statements each)`
    )
    const shown = s.phases.slice(0, top)
    const rest = s.phases.slice(top).reduce((sum, phase) => sum + phase.ms, 0)
    const width = Math.max(...shown.map((phase) => phase.name.length))
    for (const phase of shown) {
      const count = phase.name === OUTSIDE ? "" : ` (${formatNumber(phase.perRequest)}×)`
      lines.push(
        `    ${phase.name.padEnd(width)}  ${formatNumber(phase.ms).padStart(7)} ms  ${pct(phase.share).padStart(5)}${count}`
      )
    }
    if (rest > 0) lines.push(`    ${"other phases".padEnd(width)}  ${formatNumber(rest).padStart(7)} ms`)
    if (s.statementsBy.length > 0)
      lines.push(
        `    statements per request by caller: ${s.statementsBy.map((c) => `${c.caller} ${formatNumber(c.perRequest)}`).join(", ")}`
      )
  }
  if (waits.rowsPerLifecycle !== undefined) {
    // Under 0.1 a lifecycle: the demo seed's statistics, which may reach the view after the first reading.
    const rows = Object.entries(waits.rowsPerLifecycle)
      .filter(([, n]) => n >= 0.1)
      .sort((a, b) => b[1] - a[1])
      .map(([table, n]) => `${table} ${formatNumber(n)}`)
    lines.push(`  rows written per lifecycle by table: ${rows.join(", ")}`)
  }
  return lines
}

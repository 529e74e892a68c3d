/**
 * The figures of the wait account (`WaitTracer.ts`): what it keeps per span name and per request,
 * and what it reports for a window.
 */

/** At most this many durations are kept per name (and requests per root), sampled uniformly. */
const KEEP = 20_000

export class Reservoir<A> {
  readonly items: Array<A> = []
  seen = 0
  add(item: A): void {
    this.seen++
    if (this.items.length < KEEP) this.items.push(item)
    else {
      const slot = Math.floor(Math.random() * this.seen)
      if (slot < KEEP) this.items[slot] = item
    }
  }
}

export interface NameFigures {
  count: number
  totalMs: number
  selfMs: number
  readonly durations: Reservoir<number>
}

export interface RequestSample {
  readonly durationMs: number
  /** Own time and count of each span name inside the request (the root's own name included). */
  readonly phases: Map<string, { ms: number; count: number }>
  /** Statements (`sql.execute`) by the name of the span that ran them. */
  readonly statements: Map<string, number>
}

/** One span name's figures over the window. */
export interface SpanFigures {
  readonly name: string
  readonly count: number
  readonly totalMs: number
  readonly selfMs: number
  readonly p50Ms: number
  readonly p99Ms: number
}

/** One phase of a kind of request: the own time of the spans of one name inside it. */
export interface PhaseFigures {
  readonly name: string
  /** Spans of this name per request (statements per request, for `sql.execute`). */
  readonly perRequest: number
  /** Mean own time per request, over all requests of the kind. */
  readonly meanMs: number
  /** Mean own time per request, over the requests around the median (see `band`). */
  readonly bandMs: number
}

/** Where the wall time of one kind of request went, by phase, largest share around the median first. */
export interface RequestAccount {
  readonly root: string
  readonly count: number
  readonly meanMs: number
  readonly p50Ms: number
  readonly p99Ms: number
  /** The requests whose duration lies between the 40th and 60th percentile: a typical request. */
  readonly band: { readonly count: number; readonly fromMs: number; readonly toMs: number }
  readonly phases: ReadonlyArray<PhaseFigures>
  /** Statements per request by the span that ran them (`RfqStore.applyStep`, …), most first. */
  readonly statements: ReadonlyArray<{ readonly caller: string; readonly perRequest: number }>
}

export interface WaitAccountReport {
  readonly spans: ReadonlyArray<SpanFigures>
  readonly requests: ReadonlyArray<RequestAccount>
}

export const quantile = (sorted: ReadonlyArray<number>, q: number): number =>
  sorted.length === 0
    ? 0
    : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!

/** Length of the union of `intervals` (flat start/end pairs) within [from, to]. */
export const coveredMs = (intervals: ReadonlyArray<number>, from: number, to: number): number => {
  const pairs: Array<[number, number]> = []
  for (let i = 0; i < intervals.length; i += 2)
    pairs.push([Math.max(from, intervals[i]!), Math.min(to, intervals[i + 1]!)])
  pairs.sort((a, b) => a[0] - b[0])
  let covered = 0
  let reach = from
  for (const [start, end] of pairs) {
    const s = Math.max(start, reach)
    if (end > s) {
      covered += end - s
      reach = end
    }
  }
  return covered
}

export const addPhase = (phases: Map<string, { ms: number; count: number }>, name: string, ms: number) => {
  const phase = phases.get(name)
  if (phase === undefined) phases.set(name, { ms, count: 1 })
  else {
    phase.ms += ms
    phase.count++
  }
}

const requestAccount = (root: string, samples: Reservoir<RequestSample>): RequestAccount => {
  const items = samples.items
  const sorted = items.map((s) => s.durationMs).sort((a, b) => a - b)
  const fromMs = quantile(sorted, 0.4)
  const toMs = quantile(sorted, 0.6)
  const band = items.filter((s) => s.durationMs >= fromMs && s.durationMs <= toMs)
  const totals = new Map<string, { all: number; count: number; band: number }>()
  for (const sample of items)
    for (const [name, phase] of sample.phases) {
      const total = totals.get(name) ?? { all: 0, count: 0, band: 0 }
      total.all += phase.ms
      total.count += phase.count
      totals.set(name, total)
    }
  for (const sample of band) for (const [name, phase] of sample.phases) totals.get(name)!.band += phase.ms
  const callers = new Map<string, number>()
  for (const sample of items)
    for (const [caller, n] of sample.statements) callers.set(caller, (callers.get(caller) ?? 0) + n)
  const phases = [...totals].map(([name, t]) => ({
    name,
    perRequest: t.count / items.length,
    meanMs: t.all / items.length,
    bandMs: band.length === 0 ? 0 : t.band / band.length
  }))
  phases.sort((a, b) => b.bandMs - a.bandMs || b.meanMs - a.meanMs)
  return {
    root,
    count: samples.seen,
    meanMs: sorted.reduce((sum, d) => sum + d, 0) / Math.max(1, sorted.length),
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    band: { count: band.length, fromMs, toMs },
    phases,
    statements: [...callers]
      .map(([caller, n]) => ({ caller, perRequest: n / items.length }))
      .sort((a, b) => b.perRequest - a.perRequest)
  }
}

/** The figures of a window: every span name, most own time first; every kind of request. */
export const reportOf = (
  names: ReadonlyMap<string, NameFigures>,
  roots: ReadonlyMap<string, Reservoir<RequestSample>>
): WaitAccountReport => {
  const spans: Array<SpanFigures> = []
  for (const [name, f] of names) {
    const sorted = [...f.durations.items].sort((a, b) => a - b)
    spans.push({
      name,
      count: f.count,
      totalMs: f.totalMs,
      selfMs: f.selfMs,
      p50Ms: quantile(sorted, 0.5),
      p99Ms: quantile(sorted, 0.99)
    })
  }
  spans.sort((a, b) => b.selfMs - a.selfMs)
  const requests = [...roots].map(([root, samples]) => requestAccount(root, samples))
  requests.sort((a, b) => b.count * b.meanMs - a.count * a.meanMs)
  return { spans, requests }
}

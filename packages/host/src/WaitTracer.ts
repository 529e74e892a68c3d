import type { WaitPhases, WaitProbe } from "@rfq/engine"
import { type Context, type Exit, Fiber, type Option, Tracer } from "effect"
import {
  addPhase,
  coveredMs,
  type NameFigures,
  type RequestSample,
  Reservoir,
  reportOf,
  type WaitAccountReport
} from "./WaitFigures.js"

export type { PhaseFigures, RequestAccount, SpanFigures, WaitAccountReport } from "./WaitFigures.js"
export { coveredMs } from "./WaitFigures.js"

/**
 * The wall-time account of a wait profile (`WaitProfile.ts`): an Effect tracer that keeps no span,
 * only figures. Per span name: how many ended, their total and own ("self") time, p50 and p99.
 * Per request (a span with no parent of ours: the host opens one per REST request): its duration
 * and its own time split by the names of the spans it contains, so a typical request's wall time
 * reads as a sum of phases.
 *
 * A span's own time is its duration minus the time some child of it was running (the union of
 * the children's intervals, so concurrent children are not counted twice). Two corrections to
 * Effect's parentage: @effect/sql opens its `sql.execute` span without making it the parent of
 * what runs inside it, so a span (or a mark) started in the same fiber while a statement of the
 * same parent is open is counted inside that statement; and a child that ends after its parent
 * (a forked fiber) counts for its own name only.
 *
 * Times come from `now` (milliseconds, `performance.now` by default), not from Effect's clock, so
 * that the pool's marks, taken outside any fiber, are on the same scale.
 */

const EMPTY_ATTRIBUTES: ReadonlyMap<string, unknown> = new Map()
const STATEMENT = "sql.execute"
let ids = 0

/** A span as the account sees it: its interval, its parent of ours, its request. */
export class AccountSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly spanId: string
  readonly traceId: string
  readonly sampled = true
  readonly attributes = EMPTY_ATTRIBUTES
  readonly links: ReadonlyArray<Tracer.SpanLink> = []
  status: Tracer.SpanStatus
  ended = false
  /** Children's intervals, flat: start, end, start, end… */
  children: Array<number> | undefined
  /** Own time by span name inside the request (roots only). */
  readonly phases: Map<string, { ms: number; count: number }> | undefined
  /** Statements by caller inside the request (roots only). */
  readonly statements: Map<string, number> | undefined
  readonly root: AccountSpan

  constructor(
    private readonly account: WaitAccount,
    readonly name: string,
    readonly parent: Option.Option<Tracer.AnySpan>,
    readonly context: Context.Context<never>,
    readonly kind: Tracer.SpanKind,
    startTime: bigint,
    /** The span of ours it is counted under (not always Effect's parent, see above). */
    readonly owner: AccountSpan | undefined,
    public start: number
  ) {
    this.spanId = (++ids).toString(36)
    this.traceId = owner?.traceId ?? this.spanId
    this.status = { _tag: "Started", startTime }
    this.root = owner?.root ?? this
    this.phases = owner === undefined ? new Map() : undefined
    this.statements = owner === undefined ? new Map() : undefined
  }

  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    if (this.ended) return
    this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
    this.account.finish(this, this.account.now())
  }
  attribute(_key: string, _value: unknown): void {}
  event(_name: string, _startTime: bigint, _attributes?: Record<string, unknown>): void {}
  addLinks(_links: ReadonlyArray<Tracer.SpanLink>): void {}
}

export class WaitAccount {
  private names = new Map<string, NameFigures>()
  private requests = new Map<string, Reservoir<RequestSample>>()
  /** The statement each fiber has open (see the class comment). */
  private readonly statements = new WeakMap<object, AccountSpan>()

  constructor(readonly now: () => number = () => performance.now()) {}

  /** The Effect tracer feeding this account. */
  readonly tracer: Tracer.Tracer = Tracer.make({
    span: (name, parent, context, _links, startTime, kind) => {
      let owner = parent._tag === "Some" && parent.value instanceof AccountSpan ? parent.value : undefined
      const fiber = Fiber.getCurrentFiber()
      const key = fiber._tag === "Some" ? fiber.value : undefined
      const open = key === undefined ? undefined : this.statements.get(key)
      if (open !== undefined && !open.ended && open.owner === owner) owner = open
      const span = new AccountSpan(this, name, parent, context, kind, startTime, owner, this.now())
      if (name === STATEMENT && key !== undefined) this.statements.set(key, span)
      return span
    },
    context: (f) => f()
  })

  /** The engine's probe: phases of a wait outside Effect, under the running fiber's span. */
  readonly probe: WaitProbe = {
    phases: (): WaitPhases => {
      const fiber = Fiber.getCurrentFiber()
      let owner: AccountSpan | undefined
      if (fiber._tag === "Some") {
        const open = this.statements.get(fiber.value)
        const current = fiber.value.currentSpan
        owner =
          open !== undefined && !open.ended
            ? open
            : current instanceof AccountSpan && !current.ended
              ? current
              : undefined
      }
      let last = this.now()
      return {
        mark: (name) => {
          const at = this.now()
          this.record(owner, name, at - last, last, at)
          last = at
        }
      }
    }
  }

  /**
   * Counts `ms` before `span`'s start as its first phase `name`: a request's time between its fiber's
   * fork and its span (the body's arrival, the fiber's first run). Only right after it started.
   */
  startedEarlier(span: Tracer.AnySpan, ms: number, name: string): void {
    if (!(span instanceof AccountSpan) || span.ended || ms <= 0) return
    span.start -= ms
    this.record(span, name, ms, span.start, span.start + ms)
  }

  /** Ends `span` at `at`. */
  finish(span: AccountSpan, at: number): void {
    span.ended = true
    const duration = at - span.start
    const children = span.children
    span.children = undefined
    const self =
      children === undefined ? duration : Math.max(0, duration - coveredMs(children, span.start, at))
    this.record(span.owner, span.name, self, span.start, at)
    const root = span.root
    if (root === span) {
      addPhase(span.phases!, span.name, self)
      let samples = this.requests.get(span.name)
      if (samples === undefined) this.requests.set(span.name, (samples = new Reservoir()))
      samples.add({ durationMs: duration, phases: span.phases!, statements: span.statements! })
    } else if (span.name === STATEMENT && !root.ended) {
      const caller = span.owner!.name
      root.statements!.set(caller, (root.statements!.get(caller) ?? 0) + 1)
    }
  }

  /** Counts `selfMs` of one span (or mark) of `name` lasting from `from` to `to`, under `owner`. */
  private record(
    owner: AccountSpan | undefined,
    name: string,
    selfMs: number,
    from: number,
    to: number
  ): void {
    let figures = this.names.get(name)
    if (figures === undefined)
      this.names.set(name, (figures = { count: 0, totalMs: 0, selfMs: 0, durations: new Reservoir() }))
    figures.count++
    figures.totalMs += to - from
    figures.selfMs += selfMs
    figures.durations.add(to - from)
    if (owner !== undefined && !owner.ended) (owner.children ??= []).push(from, to)
    // Into the request's phases while it runs (a late child counts for its name only).
    const root = owner?.root
    if (root !== undefined && !root.ended) addPhase(root.phases!, name, selfMs)
  }

  /** Forgets everything counted so far (spans still open count in the next window). */
  reset(): void {
    this.names = new Map()
    this.requests = new Map()
  }

  report(): WaitAccountReport {
    return reportOf(this.names, this.requests)
  }
}

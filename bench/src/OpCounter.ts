/**
 * Counts the Effect runtime's operations an effect runs, by kind and by site: a supervisor under
 * `RuntimeFlags.OpSupervision` sees every operation each fiber's run loop evaluates. A site is the
 * operation's kind with, for a continuation (`map`, `flatMap`, …) or a thunk (`sync`, `suspend`),
 * the first characters of its function's source: enough to find it in `dist/`. A tool for work on
 * the hot paths (`EngineWriteCost --ops`); op supervision costs far more than the operations, so
 * never time a counted run.
 */
import { Effect, type Fiber, RuntimeFlags, RuntimeFlagsPatch, Supervisor } from "effect"

interface Instruction {
  readonly _op?: string
  readonly effect_instruction_i0?: unknown
  readonly effect_instruction_i1?: unknown
  readonly effect_instruction_i2?: unknown
}

const snippet = (value: unknown): string => {
  if (typeof value !== "function")
    return value === undefined ? "" : (value?.constructor?.name ?? typeof value)
  const source = Function.prototype.toString.call(value).replace(/\s+/g, " ")
  return `${value.name === "" ? "" : `${value.name}: `}${source.slice(0, 90)}`
}

const siteOf = (op: Instruction): string => {
  const kind = op._op ?? "?"
  switch (kind) {
    case "OnSuccess":
    case "OnFailure":
      return `${kind} ${snippet(op.effect_instruction_i1)}`
    case "OnSuccessAndFailure":
      return `${kind} ${snippet(op.effect_instruction_i2)}`
    case "Sync":
    case "Async":
    case "WithRuntime":
      return `${kind} ${snippet(op.effect_instruction_i0)}`
    case "Success":
      return `${kind} ${snippet(op.effect_instruction_i0)}`
    case "Commit":
      return `${kind} ${snippet((op as { commit?: unknown }).commit)}`
    default:
      return `${kind} ${(op as object).constructor?.name ?? ""}`
  }
}

export class OpCounts {
  readonly byKind = new Map<string, number>()
  readonly bySite = new Map<string, number>()
  total = 0

  add(op: Instruction): void {
    this.total++
    const kind = op._op ?? "?"
    this.byKind.set(kind, (this.byKind.get(kind) ?? 0) + 1)
    const site = siteOf(op)
    this.bySite.set(site, (this.bySite.get(site) ?? 0) + 1)
  }

  /** Lines: the total and the kinds per `ops` operations, then the `top` sites. */
  report(ops: number, top: number): ReadonlyArray<string> {
    const per = (n: number) => (n / ops).toFixed(1)
    const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1])
    return [
      `${per(this.total)} runtime operations per call; by kind: ${sorted(this.byKind)
        .map(([k, n]) => `${k} ${per(n)}`)
        .join(", ")}`,
      ...sorted(this.bySite)
        .slice(0, top)
        .map(([site, n]) => `  ${per(n).padStart(6)}  ${site}`)
    ]
  }
}

/** Where a counted run's operations go now: switch `current` between the phases of one run. */
export class OpTally {
  current = new OpCounts()
}

class Counting extends Supervisor.AbstractSupervisor<void> {
  constructor(readonly tally: OpTally) {
    super()
  }
  get value() {
    return Effect.void
  }
  override onEffect<A, E>(
    _fiber: Fiber.RuntimeFiber<A, E>,
    effect: Effect.Effect<unknown, unknown, unknown>
  ) {
    this.tally.current.add(effect as unknown as Instruction)
  }
}

/**
 * `effect`, with every operation it and the fibers it forks run (an RFQ's actor forked inside it
 * included) counted into `tally.current`.
 */
export const counted = <A, E, R>(tally: OpTally, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  effect.pipe(
    Effect.withRuntimeFlagsPatch(RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision)),
    Effect.supervised(new Counting(tally))
  )

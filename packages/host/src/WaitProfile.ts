import * as fs from "node:fs"
import * as path from "node:path"
import { monitorEventLoopDelay, performance } from "node:perf_hooks"
import { installWaitProbe } from "@rfq/engine"
import { Effect, Fiber } from "effect"
import type { RouteRequest } from "./Router.js"
import { WaitAccount, type WaitAccountReport } from "./WaitTracer.js"

/**
 * A wait profile: where the wall time of the host's requests goes, by phase (`WaitTracer.ts`),
 * switched on by `RFQ_WAIT_PROFILE=<file>` and costing nothing without it (no tracer, no span, no
 * probe). With it, the host opens one span per REST request (`<METHOD> <route pattern>`; a read the
 * router answers without a fiber gets none), and the engine its wait spans and marks
 * (`WaitProbe.ts`).
 *
 * The account is written, as JSON (`WaitProfileFile`), to `<file>` when the host stops; and on
 * each SIGUSR2 to `<file without .json>.<n>.json` (n = 1, 2, …), after which a new account starts,
 * so a load generator can bracket exactly its measured window with two signals.
 */
export const WAIT_PROFILE_VARIABLE = "RFQ_WAIT_PROFILE"

/** A request's time from its fiber's fork (uWS handing it over) to its handling (millisecond clock). */
export const FORKED_PHASE = "request: forked → handled"

/** The host process over the window: how busy its event loop was and how late it ran. */
export interface ProcessFigures {
  /** CPU time of the whole process (all threads), user + system. */
  readonly cpuMs: number
  /** Share of the window the event loop spent running code (`performance.eventLoopUtilization`). */
  readonly eventLoopUtilization: number
  /** How late the event loop ran a 10 ms timer: the wait of anything ready to run for the CPU. */
  readonly loopDelay: {
    readonly meanMs: number
    readonly p50Ms: number
    readonly p99Ms: number
    readonly maxMs: number
  }
}

export interface WaitProfileFile extends WaitAccountReport {
  readonly version: 1
  readonly pid: number
  /** The window, epoch milliseconds. */
  readonly fromMs: number
  readonly toMs: number
  readonly process: ProcessFigures
}

/** The file the n-th SIGUSR2 writes: `/dir/host.json` → `/dir/host.1.json`. */
export const windowFile = (file: string, n: number): string => {
  const ext = path.extname(file)
  return `${ext === "" ? file : file.slice(0, -ext.length)}.${n}${ext === "" ? ".json" : ext}`
}

const writeAtomically = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const temporary = `${file}.${process.pid}.tmp`
  fs.writeFileSync(temporary, text)
  fs.renameSync(temporary, file)
}

export interface WaitProfile {
  /** `program` with the account's tracer and the engine's probe, written to the file at its end. */
  readonly run: <A, E, R>(program: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Wraps the host's `around` factory so that every REST request it handles is one span. */
  readonly around: <I, X extends object, E, R>(
    make: (input: I) => Effect.Effect<X, E, R>
  ) => (input: I) => Effect.Effect<X, E, R>
}

/** The wait profile `RFQ_WAIT_PROFILE` asks for, or undefined (unset or empty: none). */
export const waitProfileFrom = (
  env: Readonly<Record<string, string | undefined>>
): WaitProfile | undefined => {
  const file = env[WAIT_PROFILE_VARIABLE]
  return file === undefined || file === "" ? undefined : makeWaitProfile(path.resolve(file))
}

export const makeWaitProfile = (file: string): WaitProfile => {
  const account = new WaitAccount()
  const delay = monitorEventLoopDelay({ resolution: 10 })
  let fromMs = Date.now()
  let cpu = process.cpuUsage()
  let utilization = performance.eventLoopUtilization()
  let windows = 0

  const snapshot = (): WaitProfileFile => {
    const used = process.cpuUsage(cpu)
    const ms = (ns: number) => (Number.isFinite(ns) ? ns / 1e6 : 0)
    return {
      version: 1,
      pid: process.pid,
      fromMs,
      toMs: Date.now(),
      process: {
        cpuMs: (used.user + used.system) / 1000,
        eventLoopUtilization: performance.eventLoopUtilization(utilization).utilization,
        loopDelay: {
          meanMs: ms(delay.mean),
          p50Ms: ms(delay.percentile(50)),
          p99Ms: ms(delay.percentile(99)),
          maxMs: ms(delay.max)
        }
      },
      ...account.report()
    }
  }
  const startWindow = () => {
    account.reset()
    delay.reset()
    fromMs = Date.now()
    cpu = process.cpuUsage()
    utilization = performance.eventLoopUtilization()
  }
  const write = (target: string) => writeAtomically(target, `${JSON.stringify(snapshot(), null, 2)}\n`)
  const onSignal = () => {
    try {
      write(windowFile(file, ++windows))
    } catch (error) {
      process.stderr.write(`wait profile: cannot write ${file}: ${String(error)}\n`)
    }
    startWindow()
  }

  const run = <A, E, R>(program: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        installWaitProbe(account.probe)
        delay.enable()
        startWindow()
        process.on("SIGUSR2", onSignal)
      }),
      () => Effect.withTracer(program, account.tracer),
      () =>
        Effect.sync(() => {
          process.off("SIGUSR2", onSignal)
          try {
            write(file)
          } catch (error) {
            process.stderr.write(`wait profile: cannot write ${file}: ${String(error)}\n`)
          }
          delay.disable()
          installWaitProbe(undefined)
        })
    )

  const around =
    <I, X extends object, E, R>(make: (input: I) => Effect.Effect<X, E, R>) =>
    (input: I): Effect.Effect<X, E, R> =>
      Effect.map(make(input), (inner) => {
        const call = inner as unknown as (request: RouteRequest, next: unknown) => Effect.Effect<unknown>
        // Its other members (the synchronous `now` of reads answered without a fiber) stay as they are.
        return Object.assign(
          (request: RouteRequest, next: unknown) =>
            Effect.useSpan(
              `${request.method} ${request.route ?? "(no route)"}`,
              { captureStackTrace: false },
              (span) => {
                // The request's fiber was forked when uWS handed it over (at its body's first byte).
                const fiber = Fiber.getCurrentFiber()
                if (fiber._tag === "Some")
                  account.startedEarlier(span, Date.now() - fiber.value.id().startTimeMillis, FORKED_PHASE)
                return Effect.withParentSpan(call(request, next), span)
              }
            ),
          inner
        ) as unknown as X
      })

  return { run, around }
}

import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Context, Effect, Exit, Option, type Tracer } from "effect"
import { describe, expect, it } from "vitest"
import type { RouteRequest, RouteResponse } from "../src/Router.js"
import {
  FORKED_PHASE,
  makeWaitProfile,
  type WaitProfileFile,
  waitProfileFrom,
  windowFile
} from "../src/WaitProfile.js"
import { coveredMs, type SpanFigures, WaitAccount } from "../src/WaitTracer.js"

/** An account on a clock the test moves by hand: `at(ms)` inside a program sets the time. */
const clocked = () => {
  let t = 0
  const account = new WaitAccount(() => t)
  const at = (ms: number) =>
    Effect.sync(() => {
      t = ms
    })
  const set = (ms: number) => {
    t = ms
  }
  const run = <A>(program: Effect.Effect<A>) => Effect.runSync(Effect.withTracer(program, account.tracer))
  return { account, at, set, run }
}

const figures = (account: WaitAccount, name: string): SpanFigures => {
  const found = account.report().spans.find((s) => s.name === name)
  if (found === undefined) throw new Error(`no span ${name}`)
  return found
}

const phasesOf = (account: WaitAccount, root: string) => {
  const request = account.report().requests.find((r) => r.root === root)
  if (request === undefined) throw new Error(`no request ${root}`)
  return Object.fromEntries(request.phases.map((p) => [p.name, p.meanMs]))
}

describe("the wait account", () => {
  it("splits a request's wall time into the own time of the spans nested in it", () => {
    const { account, at, run } = clocked()
    // POST /x 0–10 ⊃ Engine.a 2–9 ⊃ Store.b 3–7
    run(
      Effect.gen(function* () {
        yield* at(2)
        yield* Effect.gen(function* () {
          yield* at(3)
          yield* at(7).pipe(Effect.withSpan("Store.b"))
          yield* at(9)
        }).pipe(Effect.withSpan("Engine.a"))
        yield* at(10)
      }).pipe(Effect.withSpan("POST /x"))
    )
    expect(figures(account, "Store.b")).toMatchObject({ count: 1, totalMs: 4, selfMs: 4 })
    expect(figures(account, "Engine.a")).toMatchObject({ count: 1, totalMs: 7, selfMs: 3 })
    expect(figures(account, "POST /x")).toMatchObject({ count: 1, totalMs: 10, selfMs: 3 })
    expect(phasesOf(account, "POST /x")).toEqual({ "POST /x": 3, "Engine.a": 3, "Store.b": 4 })
    // Only the outermost span is a request.
    expect(account.report().requests.map((r) => r.root)).toEqual(["POST /x"])
  })

  it("moves a request's start back to when it was handed over, as its first phase", () => {
    const { account, at, set, run } = clocked()
    set(10)
    run(
      Effect.useSpan("POST /q", (span) => {
        account.startedEarlier(span, 4, "queued")
        return Effect.withParentSpan(at(13).pipe(Effect.withSpan("Engine.q")), span)
      }).pipe(Effect.zipLeft(at(15)))
    )
    // POST /q now runs from 6 (4 before its span opened at 10) to 13, when its span ended.
    expect(figures(account, "POST /q")).toMatchObject({ totalMs: 7, selfMs: 0 })
    expect(phasesOf(account, "POST /q")).toEqual({ queued: 4, "Engine.q": 3, "POST /q": 0 })
  })

  it("counts the time of overlapping children once in their parent's own time", () => {
    const { account, set } = clocked()
    const start = (name: string, parent?: Tracer.AnySpan) =>
      account.tracer.span(
        name,
        parent === undefined ? Option.none() : Option.some(parent),
        Context.empty(),
        [],
        0n,
        "internal"
      )
    set(0)
    const root = start("GET /y")
    set(1)
    const first = start("a", root)
    set(3)
    const second = start("b", root)
    set(5)
    first.end(0n, Exit.void)
    set(8)
    second.end(0n, Exit.void)
    set(10)
    root.end(0n, Exit.void)
    // Children cover 1–8: the root's own time is 3, not 10 − 4 − 5 = 1.
    expect(figures(account, "GET /y")).toMatchObject({ totalMs: 10, selfMs: 3 })
    // A child that ends after its request counts for its own name, not in the request's phases.
    set(11)
    const late = start("late", root)
    set(15)
    late.end(0n, Exit.void)
    expect(figures(account, "late")).toMatchObject({ count: 1, totalMs: 4 })
    expect(phasesOf(account, "GET /y")).toEqual({ "GET /y": 3, a: 4, b: 5 })
  })

  it("counts what runs while a statement is open, and the pool's marks, inside that statement", () => {
    const { account, at, run } = clocked()
    // @effect/sql's `sql.execute` is not the parent of what runs inside it (useSpan).
    run(
      Effect.gen(function* () {
        yield* at(1)
        yield* Effect.useSpan("sql.execute", () =>
          Effect.gen(function* () {
            yield* at(2)
            yield* at(3).pipe(Effect.withSpan("db.permit"))
            const phases = account.probe.phases()
            yield* at(5)
            phases.mark("pg.connection wait")
            yield* at(9)
            phases.mark("pg.statement round trip")
            yield* at(10)
          })
        )
        yield* at(12)
      }).pipe(Effect.withSpan("POST /z"))
    )
    expect(figures(account, "sql.execute")).toMatchObject({ totalMs: 9, selfMs: 2 })
    expect(figures(account, "pg.connection wait")).toMatchObject({ count: 1, totalMs: 2 })
    expect(account.report().requests[0]!.statements).toEqual([{ caller: "POST /z", perRequest: 1 }])
    expect(phasesOf(account, "POST /z")).toEqual({
      "POST /z": 3,
      "sql.execute": 2,
      "db.permit": 1,
      "pg.connection wait": 2,
      "pg.statement round trip": 4
    })
  })

  it("gives the median, the 99th percentile and the phases of the requests around the median", () => {
    const { account, at, set, run } = clocked()
    for (const duration of [10, 20, 30, 40, 50]) {
      set(0)
      run(
        Effect.gen(function* () {
          yield* Effect.gen(function* () {
            yield* at(duration / 2)
          }).pipe(Effect.withSpan("inner"))
          yield* at(duration)
        }).pipe(Effect.withSpan("POST /w"))
      )
    }
    const [request] = account.report().requests
    expect(request).toMatchObject({ root: "POST /w", count: 5, meanMs: 30, p50Ms: 30, p99Ms: 50 })
    expect(request!.band).toEqual({ count: 2, fromMs: 20, toMs: 30 })
    const inner = request!.phases.find((p) => p.name === "inner")!
    expect(inner).toEqual({ name: "inner", perRequest: 1, meanMs: 15, bandMs: 12.5 })
    expect(figures(account, "inner")).toMatchObject({ count: 5, p50Ms: 15, p99Ms: 25 })
    account.reset()
    expect(account.report()).toEqual({ spans: [], requests: [] })
  })

  it("measures the union of intervals within a window", () => {
    expect(coveredMs([1, 5, 3, 8], 0, 10)).toBe(7)
    expect(coveredMs([-5, 2, 9, 20], 0, 10)).toBe(3)
    expect(coveredMs([2, 3, 4, 6], 0, 10)).toBe(3)
    expect(coveredMs([], 0, 10)).toBe(0)
  })
})

describe("the wait profile", () => {
  it("is off unless RFQ_WAIT_PROFILE names a file", () => {
    expect(waitProfileFrom({})).toBeUndefined()
    expect(waitProfileFrom({ RFQ_WAIT_PROFILE: "" })).toBeUndefined()
    expect(windowFile("/d/host.json", 2)).toBe("/d/host.2.json")
    expect(windowFile("/d/host", 1)).toBe("/d/host.1.json")
  })

  it("names each REST request's span by its route, keeps the rest of `around`, and writes the account at the end", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "wait-profile-"))
    try {
      const file = path.join(dir, "host.json")
      const profile = makeWaitProfile(file)
      const now = () => undefined
      const around = Object.assign((_request: RouteRequest, next: Effect.Effect<RouteResponse>) => next, {
        now
      })
      const wrapped = await Effect.runPromise(profile.around(() => Effect.succeed(around))(undefined))
      expect(wrapped.now).toBe(now)
      const request = { method: "POST", route: "/v1/rfq/trade" } as RouteRequest
      const answer = { status: 200, body: {} }
      await Effect.runPromise(
        profile.run(wrapped(request, Effect.succeed(answer).pipe(Effect.withSpan("Engine.trade"))))
      )
      const written = JSON.parse(fs.readFileSync(file, "utf8")) as WaitProfileFile
      expect(written.requests.map((r) => [r.root, r.count])).toEqual([["POST /v1/rfq/trade", 1]])
      // The time from the fiber's fork to the span is a phase when the millisecond clock saw it.
      const names = written.requests[0]!.phases.map((p) => p.name)
      expect(names).toEqual(expect.arrayContaining(["Engine.trade", "POST /v1/rfq/trade"]))
      expect(names.filter((n) => n !== FORKED_PHASE)).toHaveLength(2)
      expect(written.process.cpuMs).toBeGreaterThanOrEqual(0)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})

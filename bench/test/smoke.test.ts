import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sizesFor } from "../src/Bench.js"
import { BenchContext } from "../src/BenchContext.js"
import { benchDatabaseUrl, postgresVersion } from "../src/Postgres.js"
import type { ScenarioResult } from "../src/Report.js"
import { markdownTable, type RunRecord, updateReadme, writeRun } from "../src/Results.js"
import { clientCost } from "../src/scenarios/ClientCost.js"
import { fanOut } from "../src/scenarios/FanOut.js"
import { lifecycle } from "../src/scenarios/Lifecycle.js"
import { memory } from "../src/scenarios/Memory.js"
import { multiHost } from "../src/scenarios/MultiHost.js"
import { restRead } from "../src/scenarios/RestRead.js"
import { wsQuoting } from "../src/scenarios/WsQuoting.js"
import { type HostWaits, OUTSIDE } from "../src/WaitAccount.js"
import { describeMachine } from "../src/Results.js"

/**
 * The bench harness on tiny sizes, so it never rots: every scenario runs end to end against a
 * real host, baselines and load children included, and hands back its figures. No target is
 * checked here (the sizes are far too small for any figure to mean something); `npm run bench` does that.
 */
const sizes = sizesFor("smoke")
// Host start-ups (PGlite's initdb, module loading) dominate; a busy shared machine makes them slow.
const SCENARIO_TIMEOUT = 600_000

const positive = (figures: ScenarioResult["figures"], name: string) => {
  const value = figures[name]
  expect(typeof value, name).toBe("number")
  expect(Number.isFinite(value) && (value as number) > 0, `${name} = ${value}`).toBe(true)
}

describe("bench smoke run", () => {
  const lines: Array<string> = []
  const results: Array<ScenarioResult> = []
  let ctx: BenchContext
  let postgres: string | undefined

  beforeAll(async () => {
    postgres = (await postgresVersion(benchDatabaseUrl())) === undefined ? undefined : benchDatabaseUrl()
    ctx = new BenchContext((line) => lines.push(line), postgres)
  })
  afterAll(async () => {
    await ctx?.close()
  }, SCENARIO_TIMEOUT)

  it(
    "REST read: the host and both baselines answer the same bytes under load",
    async () => {
      const result = await restRead(ctx, sizes.restRead)
      results.push(result)
      for (const name of ["hostRps", "uwsRps", "nodeRps", "bodyBytes"]) positive(result.figures, name)
      expect(result.figures.hostVsUws).toBeCloseTo(
        (result.figures.hostRps as number) / (result.figures.uwsRps as number)
      )
      expect(result.targets).toEqual([])
    },
    SCENARIO_TIMEOUT
  )

  it(
    "lifecycle: create → three quotes → accept completes on each database, and so does the raw baseline",
    async () => {
      const result = await lifecycle(ctx, sizes.lifecycle)
      results.push(result)
      const kinds = postgres === undefined ? ["pglite"] : ["postgres", "pglite"]
      for (const kind of kinds) {
        positive(result.figures, `${kind}LifecyclesPerSecond`)
        positive(result.figures, `${kind}BaselineLifecyclesPerSecond`)
        positive(result.figures, `${kind}AcceptP99Ms`)
        positive(result.figures, `${kind}ClientCpuMsPerLifecycle`)
        positive(result.figures, `${kind}BaselineClientCpuMsPerLifecycle`)
        expect(result.figures[`${kind}Errors`]).toBe(0)
      }
      if (postgres !== undefined) positive(result.figures, "postgresRowsWrittenPerLifecycle")
      expect(result.targets).toEqual([])
    },
    SCENARIO_TIMEOUT
  )

  it(
    "lifecycle with --waits: the host accounts for each step's wall time, by phase",
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rfq-bench-waits-"))
      try {
        const waits = { dir, accounts: [] as Array<HostWaits> }
        // Long enough for every step to fall in the measured window: on a loaded two-core machine
        // one lifecycle of the smoke size's two clients took over half a second, and a window of
        // 800 ms once held their quotes and accepts but no create.
        const result = await lifecycle(
          ctx,
          {
            ...sizes.lifecycle,
            durationMs: Math.max(sizes.lifecycle.durationMs, 4_000),
            databases: ["pglite"]
          },
          waits
        )
        expect(result.figures.pgliteErrors).toBe(0)
        const [account] = waits.accounts
        expect(account?.host).toBe("lifecycle (PGlite)")
        expect(account!.steps.map((s) => s.step)).toEqual(["create", "quote", "accept"])
        for (const step of account!.steps) {
          expect(step.requests, step.step).toBeGreaterThan(0)
          expect(step.statements, step.step).toBeGreaterThanOrEqual(1)
          const names = step.phases.map((p) => p.name)
          // Every statement waits for the single PGlite session's permit; every step has its own span.
          for (const name of ["sql.execute", "db.permit", step.root, OUTSIDE])
            expect(names, step.step).toContain(name)
        }
        const accept = account!.steps.find((s) => s.step === "accept")!
        expect(accept.phases.map((p) => p.name)).toContain("RfqActors.mailbox")
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    },
    SCENARIO_TIMEOUT
  )

  it(
    "fan-out: every subscribed maker connection is notified, on the host and on raw uWS, from one client process or several",
    async () => {
      // The wide case on a tiny size: its 7 connections shared out among two receiver processes.
      const wide = { subscribers: 7, sequentialRfqs: 2, burstRfqs: 2 }
      const makers = sizes.fanOut.makers[0]!
      expect(makers).toBeLessThanOrEqual(5)
      const result = await fanOut(ctx, { ...sizes.fanOut, wide, connectionsPerClientProcess: 5 })
      results.push(result)
      expect(result.skipped).toBeUndefined()
      for (const size of [makers, wide.subscribers]) {
        for (const name of [
          "P99Ms",
          "NotificationsPerSecond",
          "BaselineP99Ms",
          "BaselineNotificationsPerSecond",
          "P99RatioToBaseline"
        ]) {
          positive(result.figures, `m${size}${name}`)
        }
      }
      expect(result.figures[`m${makers}ClientProcesses`]).toBe(1)
      expect(result.figures[`m${wide.subscribers}ClientProcesses`]).toBe(2)
      positive(result.figures, "frameBytes")
    },
    SCENARIO_TIMEOUT
  )

  it(
    "quoting over WebSocket: quote updates and heartbeats both go through, and the durable-write ceiling is measured",
    async () => {
      const result = await wsQuoting(ctx, sizes.wsQuoting)
      results.push(result)
      expect(result.skipped).toBeUndefined()
      positive(result.figures, "updatesPerSecond")
      positive(result.figures, "heartbeatsPerSecond")
      positive(result.figures, "rawTransactionsPerSecond")
      expect(result.figures.durableCeilingVsHeartbeats).toBeCloseTo(
        (result.figures.rawTransactionsPerSecond as number) / (result.figures.heartbeatsPerSecond as number),
        9
      )
      expect(result.figures.updateErrors).toBe(0)
    },
    SCENARIO_TIMEOUT
  )

  it(
    "memory: the engine creates, restores and holds the open RFQs it is asked to",
    async () => {
      const result = await memory(ctx, sizes.memory)
      results.push(result)
      const n = sizes.memory.checkpoints[0]!
      for (const name of [`heapMiBAt${n}`, `rssMiBAt${n}`, "baseHeapMiB", "directCreatesPerSecond"]) {
        positive(result.figures, name)
      }
      expect(Number.isFinite(result.figures[`heapKbPerRfqAt${n}`])).toBe(true)
    },
    SCENARIO_TIMEOUT
  )

  it(
    "through 2 hosts behind HAProxy: lifecycles, fan-out and forwarded requests complete on every variant",
    async (context) => {
      const result = await multiHost(ctx, sizes.multiHost, sizes.lifecycle, sizes.fanOut)
      results.push(result)
      // Without PostgreSQL, HAProxy, NATS or Redis the scenario says why and measures nothing.
      if (result.skipped !== undefined) return context.skip(result.skipped)
      for (const variant of ["one", "own", "two"]) {
        positive(result.figures, `${variant}LifecyclesPerSecond`)
        expect(result.figures[`${variant}LifecycleErrors`]).toBe(0)
        positive(result.figures, `m${sizes.fanOut.makers[0]}${variant}P99Ms`)
      }
      positive(result.figures, "lifecycleRatio")
      for (const op of ["read", "write"])
        for (const where of ["Owner", "Forwarded"]) positive(result.figures, `${op}${where}P50Ms`)
      expect(result.targets).toEqual([])
    },
    SCENARIO_TIMEOUT
  )

  it(
    "@rfq/client's own cost: the raw client, bare fetch and @rfq/client each read the same RFQ",
    async () => {
      const result = await clientCost(ctx, sizes.clientCost)
      results.push(result)
      for (const name of [
        "nodeHttpCpuUsPerCall",
        "fetchCpuUsPerCall",
        "clientCpuUsPerCall",
        "nodeHttpP50Ms",
        "fetchP50Ms",
        "clientP50Ms"
      ])
        positive(result.figures, name)
      expect(result.figures.clientVsNodeHttpCpu).toBeCloseTo(
        (result.figures.clientCpuUsPerCall as number) / (result.figures.nodeHttpCpuUsPerCall as number)
      )
      expect(result.targets).toEqual([])
    },
    SCENARIO_TIMEOUT
  )

  it("writes the run to a results file and the README table between its markers", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rfq-bench-smoke-"))
    try {
      const record: RunRecord = {
        startedAt: "2030-01-02T03:04:05.678Z",
        finishedAt: "2030-01-02T03:05:00.000Z",
        mode: "smoke",
        commit: "test",
        machine: describeMachine(postgres),
        scenarios: results,
        profiles: []
      }
      const file = writeRun(record, dir)
      expect(path.basename(file)).toBe("2030-01-02T03-04-05Z.json")
      expect(JSON.parse(fs.readFileSync(file, "utf8")).scenarios).toHaveLength(results.length)

      const readme = path.join(dir, "README.md")
      fs.writeFileSync(
        readme,
        "# Bench\n\n<!-- bench:latest:start -->\nold table\n<!-- bench:latest:end -->\n\nafter\n"
      )
      updateReadme(record, readme)
      const text = fs.readFileSync(readme, "utf8")
      expect(text).not.toContain("old table")
      expect(text).toContain(markdownTable(record))
      expect(text.endsWith("<!-- bench:latest:end -->\n\nafter\n")).toBe(true)
      for (const r of results) expect(text).toContain(r.title)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
    expect(lines.length).toBeGreaterThan(0)
  })
})

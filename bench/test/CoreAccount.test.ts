import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { type CoreShares, coreComparison, coreWindow, measuredWindow } from "../src/CoreAccount.js"

const shares = (over: Partial<CoreShares>): CoreShares => ({
  windowMs: 10_000,
  host: undefined,
  hostSystem: undefined,
  hostMainRan: undefined,
  hostMainWaited: undefined,
  postgres: undefined,
  others: undefined,
  idle: undefined,
  ...over
})

describe("where the cores went", () => {
  it("the window lies inside the measured part, or there is none", () => {
    expect(measuredWindow(3_000, 15_000)).toEqual({ fromMs: 5_000, toMs: 17_000 })
    expect(measuredWindow(1_000, 4_000)).toEqual({ fromMs: 3_000, toMs: 4_000 })
    expect(measuredWindow(200, 800)).toBeUndefined()
  })

  it("costs per operation, and the ceiling a host that cost nothing would leave", () => {
    // 200 operations a second: 0.8 cores of host = 4 ms each; PostgreSQL 0.6 = 3 ms; clients 0.2 = 1 ms.
    const service = shares({
      host: 0.8,
      hostSystem: 0.1,
      hostMainRan: 0.6,
      hostMainWaited: 0.2,
      postgres: 0.6,
      others: 0.2,
      idle: 0.4
    })
    const baseline = shares({ postgres: 1.0, others: 0.6, idle: 0.4 })
    const { figures, lines } = coreComparison("pg", service, 200, baseline, 1_000, "lifecycle")
    expect(figures.pgHostCpuMsPer).toBeCloseTo(4)
    expect(figures.pgHostMainWaitedMsPer).toBeCloseTo(1)
    // 0.1 cores in the kernel: 0.5 ms of the host's 4 ms a lifecycle.
    expect(figures.pgHostSystemMsPer).toBeCloseTo(0.5)
    expect(lines[0]).toContain("host 0.80 (4.00 ms, 0.500 ms of it in the kernel;")
    expect(figures.pgPostgresCpuMsPer).toBeCloseTo(3)
    expect(figures.pgBaselinePostgresCpuMsPer).toBeCloseTo(1)
    // 2 cores in all ÷ (3 + 1) ms a lifecycle = 500 a second, half the baseline's 1,000.
    expect(figures.pgCeilingWithoutHost).toBeCloseTo(500)
    expect(figures.pgRatioCeilingWithoutHost).toBeCloseTo(0.5)
    expect(lines).toHaveLength(3)
  })

  it("what cannot be read is left out, not counted as zero", () => {
    const { figures, lines } = coreComparison("x", shares({ host: 0.5 }), 100, shares({}), 100, "op")
    expect(figures).toEqual({ xHostCpuMsPer: 5 })
    expect(lines).toHaveLength(2)
  })

  it.runIf(fs.existsSync(`/proc/${process.pid}/task/${process.pid}/schedstat`))(
    "reads this process's own main thread from /proc: busy while it spins",
    async () => {
      const window = coreWindow(process.pid, 0, 300)
      const end = Date.now() + 250
      setTimeout(function spin() {
        const until = Date.now() + 20
        while (Date.now() < until) {
          // busy on purpose
        }
        if (Date.now() < end) setTimeout(spin, 0)
      }, 10)
      const read = await window
      expect(read.windowMs).toBeGreaterThan(250)
      // Spinning, the thread is on a core or waiting for one: together most of the window, however
      // busy the machine is (a share of the run alone would depend on the other processes).
      expect(read.hostMainRan).toBeGreaterThan(0)
      expect(read.hostMainRan! + read.hostMainWaited!).toBeGreaterThan(0.5)
      expect(read.host).toBeGreaterThan(0)
      // The kernel's part of the process's time is read too, and is a part of it.
      expect(read.hostSystem).toBeGreaterThanOrEqual(0)
      expect(read.hostSystem!).toBeLessThanOrEqual(read.host!)
    }
  )
})

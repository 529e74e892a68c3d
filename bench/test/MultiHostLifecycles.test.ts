import { describe, expect, it } from "vitest"
import type { LifecycleRun } from "../src/scenarios/MultiHostLifecycles.js"
import { sameHostsCeiling } from "../src/scenarios/MultiHostLifecycles.js"

const run = (lifecyclesPerSecond: number, hostsMs: number, machine: LifecycleRun["machine"]): LifecycleRun =>
  ({
    lifecyclesPerSecond,
    cpuMs: {
      hosts: hostsMs,
      first: undefined,
      second: undefined,
      haproxy: undefined,
      postgres: undefined,
      nats: undefined,
      redis: undefined
    },
    machine
  }) as unknown as LifecycleRun

describe("the ceiling of two hosts that cost what one does", () => {
  it("the rest of the 2-host run plus the one host's cost, on every core, against the one host's rate", () => {
    // Two hosts: 18 ms of the machine a lifecycle, 8 of them the hosts' → 10 ms elsewhere.
    // With the one host's 4 ms instead: 2 cores ÷ 14 ms = 142.9/s, against one host's 200/s.
    const ceiling = sameHostsCeiling(
      run(200, 4, { busyMsPer: 9, cores: 2 }),
      run(100, 8, { busyMsPer: 18, cores: 2 })
    )
    expect(ceiling?.outsideMsPer).toBeCloseTo(10)
    expect(ceiling?.perSecond).toBeCloseTo(2000 / 14)
    expect(ceiling?.ratio).toBeCloseTo(2000 / 14 / 200)
  })

  it("is left out when the machine or the hosts could not be read", () => {
    expect(sameHostsCeiling(run(200, 4, undefined), run(100, 8, undefined))).toBeUndefined()
    const unread = {
      ...run(100, 8, { busyMsPer: 18, cores: 2 }),
      cpuMs: { hosts: undefined }
    } as unknown as LifecycleRun
    expect(sameHostsCeiling(run(200, 4, { busyMsPer: 9, cores: 2 }), unread)).toBeUndefined()
  })
})

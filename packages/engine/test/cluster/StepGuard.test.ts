import { describe, expect, it } from "@effect/vitest"
import { StepGuard } from "../../src/cluster/StreamFollower.js"
import { stepEvents } from "./eventFixtures.js"

describe("StepGuard", () => {
  it("admits each RFQ's steps once, in rising seq, whatever else arrives", () => {
    const guard = new StepGuard(60_000)
    expect(guard.admit(stepEvents(1, 1), 0)).toStrictEqual(stepEvents(1, 1))
    expect(guard.admit(stepEvents(1, 2), 0)).toStrictEqual(stepEvents(1, 2)) // both events of the step
    expect(guard.admit(stepEvents(1, 2), 0)).toStrictEqual([]) // the same step again
    expect(guard.admit(stepEvents(1, 1), 0)).toStrictEqual([]) // an older step
    expect(guard.admit(stepEvents(2, 1), 0)).toStrictEqual(stepEvents(2, 1)) // RFQs are independent
    expect(guard.admit([...stepEvents(1, 2), ...stepEvents(1, 3)], 0)).toStrictEqual(stepEvents(1, 3))
  })

  it("forgets an RFQ once its last step is older than the horizon", () => {
    const guard = new StepGuard(1_000)
    guard.admit(stepEvents(1, 1), 0)
    guard.admit(stepEvents(2, 1), 900)
    expect(guard.admit(stepEvents(1, 1), 1_000)).toStrictEqual([])
    expect(guard.size).toBe(2)
    expect(guard.admit(stepEvents(3, 1), 1_500)).toStrictEqual(stepEvents(3, 1))
    expect(guard.size).toBe(2) // RFQ 1 forgotten, 2 and 3 remembered
    expect(guard.admit(stepEvents(2, 1), 1_500)).toStrictEqual([])
  })
})

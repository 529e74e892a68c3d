import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, PubSub, Queue } from "effect"
import { makeStepDelivery, StepGuard } from "../../src/cluster/StreamFollower.js"
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

  it("lets the owner's step through only when it directly follows the last one delivered", () => {
    const guard = new StepGuard(60_000)
    expect(guard.admitNext(stepEvents(1, 1), 0)).toStrictEqual(stepEvents(1, 1)) // a first step
    expect(guard.admitNext(stepEvents(1, 2), 0)).toStrictEqual(stepEvents(1, 2)) // the next one
    expect(guard.admitNext(stepEvents(1, 2), 0)).toStrictEqual([]) // delivered already
    expect(guard.admitNext(stepEvents(1, 4), 0)).toStrictEqual([]) // step 3 not delivered yet
    expect(guard.delivered(1, 3)).toBe(false) // and 4 is not marked: the stream still brings it
    expect(guard.delivered(1, 2)).toBe(true)
    expect(guard.admitNext(stepEvents(2, 5), 0)).toStrictEqual([]) // an RFQ never seen, not at its start
    expect(guard.admit(stepEvents(1, 3), 0)).toStrictEqual(stepEvents(1, 3))
    expect(guard.admit(stepEvents(1, 4), 0)).toStrictEqual(stepEvents(1, 4))
    expect(guard.admitNext(stepEvents(1, 5), 0)).toStrictEqual(stepEvents(1, 5))
    // Two steps at once (a catch-up and its successor): both follow on.
    expect(guard.admitNext([...stepEvents(1, 6), ...stepEvents(1, 7)], 0)).toStrictEqual([
      ...stepEvents(1, 6),
      ...stepEvents(1, 7)
    ])
  })
})

describe("makeStepDelivery", () => {
  it.scoped("gives subscribers each step once and in order, from the owner or the stream", () =>
    Effect.gen(function* () {
      const hub = yield* PubSub.unbounded<ReturnType<typeof stepEvents>[number]>()
      const queue = yield* PubSub.subscribe(hub)
      const delivery = makeStepDelivery(new StepGuard(60_000), hub)
      const seen = () => Effect.map(Queue.takeAll(queue), (c) => Chunk.toReadonlyArray(c).map((e) => e.seq))

      delivery.fromOwner(stepEvents(7, 1), 0)
      expect(yield* seen()).toStrictEqual([1]) // at once
      expect(delivery.delivered(7, 1)).toBe(true) // its stream copy is skipped unread
      delivery.fromStream(stepEvents(7, 1), 0)
      expect(yield* seen()).toStrictEqual([])

      // Another host owned steps 2 and 3; this host owns the RFQ now and commits 4 before the
      // stream brought them: 4 waits for the stream, behind them.
      delivery.fromOwner(stepEvents(7, 4), 0)
      expect(yield* seen()).toStrictEqual([])
      for (const seq of [2, 3, 4]) delivery.fromStream(stepEvents(7, seq), 0)
      expect(yield* seen()).toStrictEqual([2, 2, 3, 3, 4, 4])
      delivery.fromOwner(stepEvents(7, 5), 0)
      delivery.fromStream(stepEvents(7, 5), 0)
      expect(yield* seen()).toStrictEqual([5, 5])
    })
  )
})

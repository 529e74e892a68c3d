import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Exit, PubSub, Queue, Scope } from "effect"
import { makeStepDelivery, StepGuard } from "../../src/cluster/StreamFollower.js"
import { audienceOf, type EventAudience } from "../../src/services/EventAudience.js"
import { EventInterests } from "../../src/services/EventInterests.js"
import type { EngineEvent } from "../../src/services/Events.js"
import { stepEvents, stepEventsOf as stepOf } from "./eventFixtures.js"

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

  it("marks a step passed unread by admit's rule: the RFQ's next step then follows it", () => {
    const guard = new StepGuard(60_000)
    guard.pass(1, 1, 0)
    expect(guard.delivered(1, 1)).toBe(true)
    expect(guard.admitNext(stepEvents(1, 2), 0)).toStrictEqual(stepEvents(1, 2))
    guard.pass(1, 1, 0) // an older step changes nothing
    expect(guard.admitNext(stepEvents(1, 3), 0)).toStrictEqual(stepEvents(1, 3))
    guard.pass(1, 5, 0) // a later one moves the RFQ on, as admit would
    expect(guard.admit(stepEvents(1, 4), 0)).toStrictEqual([])
    expect(guard.admitNext(stepEvents(1, 6), 0)).toStrictEqual(stepEvents(1, 6))
  })
})

describe("makeStepDelivery", () => {
  it.scoped("gives subscribers each step once and in order, from the owner or the stream", () =>
    Effect.gen(function* () {
      const hub = yield* PubSub.unbounded<ReturnType<typeof stepEvents>[number]>()
      const queue = yield* PubSub.subscribe(hub)
      const interests = new EventInterests()
      yield* interests.register(undefined)
      const delivery = makeStepDelivery(new StepGuard(60_000), hub, interests)
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

  it.scoped(
    "offers only what a subscriber wants, marks the rest delivered, and follows on when one does",
    () =>
      Effect.gen(function* () {
        const hub = yield* PubSub.unbounded<EngineEvent>()
        const queue = yield* PubSub.subscribe(hub)
        const interests = new EventInterests()
        const desks = new Set<number>()
        // A subscriber that listens for the RFQs of taker desks in `desks` (a scope of its own, closed below).
        const wants = (audience: EventAudience) => audience.takerDeskIds.some((d) => desks.has(d))
        const subscriberScope = yield* Scope.make()
        yield* interests.register(wants).pipe(Scope.extend(subscriberScope))
        const delivery = makeStepDelivery(new StepGuard(60_000), hub, interests)
        const seen = () =>
          Effect.map(Queue.takeAll(queue), (c) =>
            Chunk.toReadonlyArray(c).map((e) => `${e.view.rfq.id}:${e.seq}`)
          )

        // Nobody listens for desk 9: its steps are marked, not offered, from the owner or the stream.
        delivery.fromOwner(stepOf(20, 1, 9, ["maker-x"]), 0)
        expect(yield* seen()).toStrictEqual([])
        expect(delivery.delivered(20, 1)).toBe(true)
        const step2 = stepOf(20, 2, 9, ["maker-x"])
        expect(delivery.passUnwanted({ rfqId: 20, seq: 2 }, audienceOf(step2), 0)).toBe(true)
        expect(delivery.delivered(20, 2)).toBe(true)

        // A listener for desk 9 arrives: the RFQ's next step reaches it at once, from its owner here.
        desks.add(9)
        const step3 = stepOf(20, 3, 9, ["maker-x"])
        expect(delivery.passUnwanted({ rfqId: 20, seq: 3 }, audienceOf(step3), 0)).toBe(false)
        delivery.fromOwner(step3, 0)
        expect(yield* seen()).toStrictEqual(["20:3", "20:3"])

        // Decoded stream steps (a message without an audience header) are judged the same way.
        delivery.fromStream(stepOf(21, 1, 8, ["maker-y"]), 0)
        delivery.fromStream(stepOf(22, 1, 9, ["maker-y"]), 0)
        expect(yield* seen()).toStrictEqual(["22:1"])
        expect(delivery.delivered(21, 1)).toBe(true)

        // With no subscriber left, nothing is offered; a plain subscription wants everything.
        yield* Scope.close(subscriberScope, Exit.void)
        delivery.fromOwner(stepOf(22, 2, 9, ["maker-y"]), 0)
        expect(yield* seen()).toStrictEqual([])
        yield* interests.register(undefined)
        delivery.fromOwner(stepOf(22, 3, 8, ["maker-y"]), 0)
        expect(yield* seen()).toStrictEqual(["22:3", "22:3"])
      })
  )
})

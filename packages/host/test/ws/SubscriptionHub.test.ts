import { assert, describe, it } from "@effect/vitest"
import { type Caller, Events, EventsLive } from "@rfq/engine"
import { Deferred, Effect, FiberRef } from "effect"
import { type ChannelSubscription, parseChannel } from "../../src/ws/Channels.js"
import { EventDelivery, View } from "../../src/ws/EventDelivery.js"
import type { NotificationFrame } from "../../src/ws/NotificationFrame.js"
import { type Subscriber, SubscriptionHub } from "../../src/ws/SubscriptionHub.js"
import { rfqEvent } from "./sessionHarness.js"

const makerOf = (deskId: number, userId: number): Caller =>
  ({ deskId, userId, roles: ["trader"], makerId: `maker-${deskId}` }) as unknown as Caller

const channel = (name: string): ChannelSubscription => parseChannel(name)!

/** A subscriber whose caller and channels a test changes, and what it was handed. */
const subscriberOf = (caller: Caller | undefined, ...names: Array<string>) => {
  const state = {
    caller,
    channels: names.map(channel),
    received: [] as Array<{ frame: NotificationFrame; data: any }>
  }
  const subscriber: Subscriber = {
    caller: () => state.caller,
    subscriptions: () => state.channels,
    deliver: (frame) => {
      state.received.push({ frame, data: JSON.parse(frame.dataJson) })
    }
  }
  return { state, subscriber }
}

/** Renders every event for every channel as who saw it where. */
const seenBy = (renders: Array<string>) => (event: any, channelName: string, caller: Caller) => {
  renders.push(`${channelName}|${caller.deskId}`)
  return { rfqId: event.view.rfq.id, seenBy: caller.deskId }
}

describe("SubscriptionHub", () => {
  it("renders and serialises an event once per view and hands every session of it the same frame", () => {
    const renders: Array<string> = []
    const hub = new SubscriptionHub(seenBy(renders))
    const subscribers = Array.from({ length: 300 }, (_, i) =>
      subscriberOf(makerOf(1 + (i % 3), 100 + i), "rfq.maker")
    )
    for (const s of subscribers) hub.add(s.subscriber)
    assert.strictEqual(hub.viewCount, 3)
    assert.deepStrictEqual(hub.publish(rfqEvent(7, "BTC")), [])
    assert.deepStrictEqual(renders.sort(), ["rfq.maker|1", "rfq.maker|2", "rfq.maker|3"])
    subscribers.forEach(({ state }, i) => {
      assert.strictEqual(state.received.length, 1)
      assert.deepStrictEqual(state.received[0]!.data, { rfqId: 7, seenBy: 1 + (i % 3) })
      assert.strictEqual(state.received[0]!.frame.channel, "rfq.maker")
    })
    assert.strictEqual(new Set(subscribers.map((s) => s.state.received[0]!.frame)).size, 3)
  })

  it("a currency suffix narrows the view: a session on both names hears a matching event once per name", () => {
    const hub = new SubscriptionHub(seenBy([]))
    const both = subscriberOf(makerOf(1, 1), "rfq.maker", "rfq.maker.BTC")
    const eth = subscriberOf(makerOf(1, 2), "rfq.maker.ETH")
    hub.add(both.subscriber)
    hub.add(eth.subscriber)
    hub.publish(rfqEvent(1, "BTC"))
    hub.publish(rfqEvent(2, "ETH"))
    assert.deepStrictEqual(
      both.state.received.map((r) => [r.frame.channel, r.data.rfqId]),
      [
        ["rfq.maker", 1],
        ["rfq.maker.BTC", 1],
        ["rfq.maker", 2]
      ]
    )
    assert.deepStrictEqual(
      eth.state.received.map((r) => [r.frame.channel, r.data.rfqId]),
      [["rfq.maker.ETH", 2]]
    )
  })

  it("adding a subscriber again re-indexes it by its channels and caller of now; removing it ends delivery", () => {
    const hub = new SubscriptionHub(seenBy([]))
    const s = subscriberOf(makerOf(1, 1), "rfq.maker")
    hub.add(s.subscriber)
    hub.publish(rfqEvent(1, "BTC"))
    // Its channels change: the old view is left (and dropped when empty), the new one joined, once.
    s.state.channels = [channel("rfq.taker"), channel("rfq.taker")]
    hub.add(s.subscriber)
    assert.strictEqual(hub.size, 1)
    assert.strictEqual(hub.viewCount, 1)
    hub.publish(rfqEvent(2, "BTC"))
    // Its caller changes: what it hears is rendered for the new desk.
    s.state.caller = makerOf(2, 1)
    hub.add(s.subscriber)
    hub.publish(rfqEvent(3, "BTC"))
    assert.deepStrictEqual(
      s.state.received.map((r) => [r.frame.channel, r.data.rfqId, r.data.seenBy]),
      [
        ["rfq.maker", 1, 1],
        ["rfq.taker", 2, 1],
        ["rfq.taker", 3, 2]
      ]
    )
    hub.remove(s.subscriber)
    assert.strictEqual(hub.size, 0)
    assert.strictEqual(hub.viewCount, 0)
    hub.publish(rfqEvent(4, "BTC"))
    assert.strictEqual(s.state.received.length, 3)
  })

  it("an unauthenticated subscriber is held but hears nothing; authenticated and added again, it does", () => {
    const hub = new SubscriptionHub(seenBy([]))
    const s = subscriberOf(undefined, "rfq.maker")
    hub.add(s.subscriber)
    hub.publish(rfqEvent(1, "BTC"))
    assert.deepStrictEqual(s.state.received, [])
    s.state.caller = makerOf(1, 1)
    hub.add(s.subscriber)
    hub.publish(rfqEvent(2, "BTC"))
    assert.deepStrictEqual(
      s.state.received.map((r) => r.data.rfqId),
      [2]
    )
  })

  it("a session removed while an event is being delivered (closed by another's delivery) is not handed it", () => {
    const hub = new SubscriptionHub(seenBy([]))
    const second = subscriberOf(makerOf(1, 2), "rfq.maker")
    const first: Subscriber = {
      caller: () => makerOf(1, 1),
      subscriptions: () => [channel("rfq.maker")],
      deliver: () => hub.remove(second.subscriber)
    }
    hub.add(first)
    hub.add(second.subscriber)
    assert.deepStrictEqual(hub.publish(rfqEvent(1, "BTC")), [])
    assert.deepStrictEqual(second.state.received, [])
  })

  it("a failing rendering or delivery is answered as a failure; the other views and sessions still get the event", () => {
    const hub = new SubscriptionHub((event, _channel, caller) => {
      if (caller.deskId === 1) throw new Error("render bug")
      return { rfqId: event.view.rfq.id }
    })
    const broken = subscriberOf(makerOf(1, 1), "rfq.maker")
    const failing: Subscriber = {
      caller: () => makerOf(2, 2),
      subscriptions: () => [channel("rfq.maker")],
      deliver: () => {
        throw new Error("deliver bug")
      }
    }
    const fine = subscriberOf(makerOf(2, 3), "rfq.maker")
    hub.add(broken.subscriber)
    hub.add(failing)
    hub.add(fine.subscriber)
    const failures = hub.publish(rfqEvent(1, "BTC"))
    assert.deepStrictEqual(
      failures.map((f) => (f as Error).message),
      ["render bug", "deliver bug"]
    )
    assert.deepStrictEqual(broken.state.received, [])
    assert.deepStrictEqual(
      fine.state.received.map((r) => r.data.rfqId),
      [1]
    )
  })

  it.scoped("the engine's publish only queues: it returns before the fan-out, which follows in order", () =>
    Effect.gen(function* () {
      const events = yield* Events
      const hub = new SubscriptionHub(seenBy([]))
      yield* hub.run(events.subscribe)
      const s = subscriberOf(makerOf(1, 1), "rfq.maker")
      const second = yield* Deferred.make<void>()
      hub.add({
        ...s.subscriber,
        deliver: (frame, now) => {
          s.subscriber.deliver(frame, now)
          if (s.state.received.length === 2) Deferred.unsafeDone(second, Effect.void)
        }
      })
      // What a command does: publish its step's events, then answer (no yield in between).
      const heardBeforeAnswer = yield* events.publish([rfqEvent(1, "BTC"), rfqEvent(2, "BTC")]).pipe(
        Effect.map(() => s.state.received.length),
        Effect.locally(FiberRef.currentMaxOpsBeforeYield, Number.MAX_SAFE_INTEGER)
      )
      assert.strictEqual(heardBeforeAnswer, 0)
      yield* Deferred.await(second)
      assert.deepStrictEqual(
        s.state.received.map((r) => r.data.rfqId),
        [1, 2]
      )
    }).pipe(Effect.provide(EventsLive))
  )

  it.scoped(
    "a large fan-out lets the event loop run between slices; each session still gets each event once, in order",
    () =>
      Effect.gen(function* () {
        const events = yield* Events
        const hub = new SubscriptionHub(seenBy([]), 2)
        yield* hub.run(events.subscribe)
        const subscribers = Array.from({ length: 5 }, (_, i) => subscriberOf(makerOf(1, i), "rfq.maker"))
        // The first session's delivery schedules I/O-phase work; the others look whether it ran.
        let ioRan = false
        const sawIo: Array<boolean> = []
        const all = yield* Deferred.make<void>()
        subscribers.forEach(({ state, subscriber }, i) => {
          hub.add({
            ...subscriber,
            deliver: (frame, now) => {
              subscriber.deliver(frame, now)
              if (i === 0 && state.received.length === 1) setImmediate(() => (ioRan = true))
              if (state.received.length === 1) sawIo.push(ioRan)
              if (i === 4 && state.received.length === 2) Deferred.unsafeDone(all, Effect.void)
            }
          })
        })
        yield* events.publish([rfqEvent(1, "BTC"), rfqEvent(2, "BTC")])
        yield* Deferred.await(all)
        // Slices of two sessions: the I/O work ran after the first slice of the first event.
        assert.deepStrictEqual(sawIo, [false, false, true, true, true])
        for (const { state } of subscribers) {
          assert.deepStrictEqual(
            state.received.map((r) => r.data.rfqId),
            [1, 2]
          )
        }
      }).pipe(Effect.provide(EventsLive))
  )

  it("between slices: a session that left the view is skipped, one that joined waits for the next event", () => {
    const caller = makerOf(1, 1)
    const view = new View("k", channel("rfq.maker"), caller)
    const [a, b, c] = [1, 2, 3].map(() => subscriberOf(caller, "rfq.maker"))
    view.members.add(a!.subscriber)
    view.members.add(b!.subscriber)
    const delivery = new EventDelivery(rfqEvent(1, "BTC"), [view], seenBy([]))
    assert.strictEqual(delivery.step(1), false)
    view.members.delete(b!.subscriber)
    view.members.add(c!.subscriber)
    assert.strictEqual(delivery.step(10), true)
    assert.deepStrictEqual(
      [a, b, c].map((s) => s!.state.received.length),
      [1, 0, 0]
    )
  })

  it("wants a step's audience only while a view that could hear it holds a session, following callers as they change", () => {
    const hub = new SubscriptionHub(seenBy([]))
    const of = (takerDeskIds: Array<number>, makerIds: Array<string>, trade = false) => ({
      takerDeskIds,
      makerIds,
      trade
    })
    assert.isFalse(hub.wants(of([1], ["maker-2"])))
    const maker = subscriberOf(makerOf(2, 20), "rfq.maker", "rfq.maker.BTC") // maker id maker-2, desk 2
    hub.add(maker.subscriber)
    assert.isTrue(hub.wants(of([1], ["maker-2"]))) // invited
    assert.isTrue(hub.wants(of([2], []))) // its own desk's RFQs
    assert.isFalse(hub.wants(of([1], ["maker-3"])))
    assert.isFalse(hub.wants(of([1], [], true))) // a trade, and nobody on the tape
    // Its caller changes (another desk's token): the index follows.
    maker.state.caller = makerOf(3, 30)
    hub.add(maker.subscriber)
    assert.isFalse(hub.wants(of([1], ["maker-2"])))
    assert.isTrue(hub.wants(of([1], ["maker-3"])))
    // Market-maker protection's channel hears no step.
    maker.state.channels = [channel("mmp.maker")]
    hub.add(maker.subscriber)
    assert.isFalse(hub.wants(of([3], ["maker-3"])))
    // The tape hears every trade.
    const tape = subscriberOf(makerOf(9, 90), "trades")
    hub.add(tape.subscriber)
    assert.isTrue(hub.wants(of([1], [], true)))
    assert.isFalse(hub.wants(of([1], [], false)))
    hub.remove(tape.subscriber)
    assert.isFalse(hub.wants(of([1], [], true)))
    // Two sessions of one view: wanted until both left; an unauthenticated one counts for nothing.
    const [x, y] = [subscriberOf(makerOf(4, 1), "rfq.taker"), subscriberOf(makerOf(4, 2), "rfq.taker")]
    hub.add(x.subscriber)
    hub.add(y.subscriber)
    hub.add(subscriberOf(undefined, "rfq.taker", "trades").subscriber)
    hub.remove(x.subscriber)
    assert.isTrue(hub.wants(of([4], [])))
    hub.remove(y.subscriber)
    hub.remove(y.subscriber) // twice: no harm
    assert.isFalse(hub.wants(of([4], [])))
    assert.isFalse(hub.wants(of([4], ["maker-4"], true)))
  })
})

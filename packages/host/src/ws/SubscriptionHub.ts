import { AudienceIndex, type Caller, type EventInterest } from "@rfq/engine"
import { Cause, Effect, Queue, type Scope } from "effect"
import type { ChannelSubscription, EventRenderer, LiveEvent } from "./Channels.js"
import { EventDelivery, type Subscriber, View } from "./EventDelivery.js"

export type { Subscriber } from "./EventDelivery.js"

/** Sessions handed an event before the hub lets the event loop run (a few ms of sends). */
export const DEFAULT_SLICE = 500

const viewKey = (subscription: ChannelSubscription, caller: Caller) =>
  `${subscription.name}\u0000${caller.deskId}\u0000${caller.makerId ?? ""}`

/** Lets the event loop run once (I/O included): a microtask would not. */
const yieldToEventLoop = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/**
 * One engine subscription for the whole endpoint, fanned out to the sessions that listen. The
 * sessions are indexed by view (subscription name, desk, maker id), so an event is rendered and
 * serialised once per view into a frame (`NotificationFrame`) that every session of the view sends
 * with its own `seq` written in: a thousand sessions of three maker desks cost three renderings and
 * three serialisations, and nothing is looked up per session. A session's index is rebuilt when its
 * subscriptions or its caller change (`add`).
 *
 * A single fiber takes the events in commit order and delivers each completely before the next, so
 * the events of one RFQ reach every socket in the order they happened, and a socket that stops
 * reading costs the others nothing: its transport only buffers (up to its cap). It lets the event
 * loop run every `slice` sessions, so that requests (a create's answer among them) are not held up
 * for the whole fan-out to ten thousand sockets. The engine's publish only queues the event for
 * this fiber: a command's answer never waits for its own fan-out. Within one event, a session
 * subscribed to several channels that carry it hears them in the order the hub first saw the views.
 *
 * The views are also indexed by who they could hear (`AudienceIndex`), and the hub subscribes to
 * the engine with that interest (`wants`): a step none of them could hear is not offered to it at
 * all, and on a host among several not even read from the stream.
 */
export class SubscriptionHub {
  private readonly views = new Map<string, View>()
  private readonly memberships = new Map<Subscriber, ReadonlyArray<View>>()
  private readonly audience = new AudienceIndex()

  /** Whether any view held could hear something of steps with this audience. */
  readonly wants: EventInterest = (audience) => this.audience.wants(audience)

  constructor(
    private readonly render?: EventRenderer,
    private readonly slice = DEFAULT_SLICE
  ) {}

  /** Adds the subscriber, or re-indexes it after its subscriptions or its caller changed. */
  add(subscriber: Subscriber): void {
    this.remove(subscriber)
    const caller = subscriber.caller()
    const joined: Array<View> = []
    if (caller !== undefined) {
      for (const subscription of subscriber.subscriptions()) {
        const key = viewKey(subscription, caller)
        let view = this.views.get(key)
        if (view === undefined) {
          view = new View(key, subscription, caller)
          this.views.set(key, view)
          this.audience.add(subscription.channel, caller)
        }
        if (view.members.has(subscriber)) continue
        view.members.add(subscriber)
        joined.push(view)
      }
    }
    this.memberships.set(subscriber, joined)
  }

  remove(subscriber: Subscriber): void {
    const views = this.memberships.get(subscriber)
    if (views === undefined) return
    this.memberships.delete(subscriber)
    for (const view of views) {
      view.members.delete(subscriber)
      if (view.members.size === 0 && this.views.delete(view.key))
        this.audience.remove(view.subscription.channel, view.caller)
    }
  }

  /** Subscribers held. */
  get size(): number {
    return this.memberships.size
  }

  /** Distinct views held (what one event may cost in renderings at most). */
  get viewCount(): number {
    return this.views.size
  }

  /**
   * Delivers `event` to every subscriber it is for, at once; answers the failures (a bug per view
   * or per subscriber; the others still get the event).
   */
  publish(event: LiveEvent): ReadonlyArray<unknown> {
    const delivery = new EventDelivery(event, this.views.values(), this.render)
    while (!delivery.step(Number.MAX_SAFE_INTEGER));
    return delivery.failures
  }

  /** Delivers `event` a slice at a time, letting the event loop run in between. */
  private deliver(event: LiveEvent): Effect.Effect<void> {
    return Effect.gen(this, function* () {
      const delivery = new EventDelivery(event, this.views.values(), this.render)
      while (!delivery.step(this.slice)) yield* yieldToEventLoop
      const { failures } = delivery
      if (failures.length > 0) {
        yield* Effect.logError("live event delivery failed", Cause.die(failures[0])).pipe(
          Effect.annotateLogs({
            failures: failures.length,
            ...(event.type === "mmp" ? { deskId: event.deskId } : { rfqId: event.view.rfq.id })
          })
        )
      }
    })
  }

  /** Feeds the hub from `events` (the engine's subscription) for the lifetime of the scope. */
  run<E, R>(events: Effect.Effect<Queue.Dequeue<LiveEvent>, E, R | Scope.Scope>) {
    return Effect.gen(this, function* () {
      const queue = yield* events
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.flatMap(Queue.takeBetween(queue, 1, 1024), (batch) =>
            Effect.forEach(batch, (event) => this.deliver(event), { discard: true })
          )
        ).pipe(Effect.interruptible)
      )
    })
  }
}

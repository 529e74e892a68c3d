import type { Caller, EngineEvent } from "@rfq/engine"
import { Cause, Effect, Queue, type Scope } from "effect"
import { type ChannelSubscription, type EventRenderer, renderForSubscription } from "./Channels.js"

/** A session as the hub sees it: who it is now, what it listens to, and how to tell it. */
export interface Subscriber {
  /** Undefined while unauthenticated: nothing is delivered then. */
  readonly caller: () => Caller | undefined
  readonly subscriptions: () => Iterable<ChannelSubscription>
  /**
   * Sends at once and never waits (a slow socket buffers or is cut off by its transport). `data`
   * is shared by every subscriber that sees the event alike; its JSON text is made once.
   */
  readonly deliver: (channel: string, data: Rendered) => void
}

/** One rendering of an event, shared by the subscribers who see it the same way. */
export class Rendered {
  private text: string | undefined
  constructor(readonly data: unknown) {}
  /** The JSON text of `data`, made on first use. */
  get json(): string {
    this.text ??= JSON.stringify(this.data)
    return this.text
  }
}

/**
 * One engine subscription for the whole endpoint, fanned out to the sessions that listen. A
 * single fiber takes the events in commit order and hands each to every subscriber
 * synchronously, so the events of one RFQ reach every socket in the order they happened, and a
 * socket that stops reading costs the others nothing: its transport only buffers (up to its cap).
 */
export class SubscriptionHub {
  private readonly subscribers = new Set<Subscriber>()

  constructor(private readonly render?: EventRenderer) {}

  add(subscriber: Subscriber): void {
    this.subscribers.add(subscriber)
  }

  remove(subscriber: Subscriber): void {
    this.subscribers.delete(subscriber)
  }

  get size(): number {
    return this.subscribers.size
  }

  /**
   * Delivers `event` to every subscriber it is for; answers the failures (a bug per subscriber).
   * What a caller sees of an event depends only on the channel and the caller's desk and maker id,
   * so the event is rendered (and serialised) once per such view, not once per socket: a thousand
   * sessions of three maker desks cost three renderings.
   */
  publish(event: EngineEvent): ReadonlyArray<unknown> {
    const failures: Array<unknown> = []
    const views = new Map<string, Rendered | undefined>()
    for (const subscriber of this.subscribers) {
      try {
        const caller = subscriber.caller()
        if (caller === undefined) continue
        for (const subscription of subscriber.subscriptions()) {
          const key = `${subscription.channel}|${subscription.baseCurrency ?? ""}|${caller.deskId}|${caller.makerId ?? ""}`
          let view = views.get(key)
          if (view === undefined && !views.has(key)) {
            const data = renderForSubscription(event, subscription, caller, this.render)
            view = data === undefined ? undefined : new Rendered(data)
            views.set(key, view)
          }
          if (view !== undefined) subscriber.deliver(subscription.name, view)
        }
      } catch (error) {
        failures.push(error)
      }
    }
    return failures
  }

  /** Feeds the hub from `events` (the engine's subscription) for the lifetime of the scope. */
  run<E, R>(events: Effect.Effect<Queue.Dequeue<EngineEvent>, E, R | Scope.Scope>) {
    return Effect.gen(this, function* () {
      const queue = yield* events
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.flatMap(Queue.takeBetween(queue, 1, 1024), (batch) =>
            Effect.forEach(batch, (event) => {
              const failures = this.publish(event)
              return failures.length === 0
                ? Effect.void
                : Effect.logError("live event delivery failed", Cause.die(failures[0])).pipe(
                    Effect.annotateLogs({ failures: failures.length, rfqId: event.view.rfq.id })
                  )
            })
          )
        ).pipe(Effect.interruptible)
      )
    })
  }
}

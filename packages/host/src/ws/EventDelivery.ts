import type { Caller } from "@rfq/engine"
import {
  type ChannelSubscription,
  type EventRenderer,
  type LiveEvent,
  renderForSubscription
} from "./Channels.js"
import { NotificationFrame } from "./NotificationFrame.js"

/** A session as the hub sees it: who it is now, what it listens to, and how to tell it. */
export interface Subscriber {
  /** Undefined while unauthenticated: nothing is delivered then. */
  readonly caller: () => Caller | undefined
  readonly subscriptions: () => Iterable<ChannelSubscription>
  /**
   * Sends `frame` at once and never waits (a slow socket buffers or is cut off by its transport).
   * The frame is shared by every subscriber of its view; `now` is the time of the delivery. The
   * session checks here that it may still hear anything (open, its token still standing).
   */
  readonly deliver: (frame: NotificationFrame, now: number) => void
}

/**
 * What one caller sees on one subscription, and the sessions that see it so: what the engine
 * renders depends only on the channel and the caller's desk and maker id (`EventRenderer`), and
 * the currency suffix narrows it.
 */
export class View {
  readonly members = new Set<Subscriber>()
  constructor(
    readonly key: string,
    readonly subscription: ChannelSubscription,
    readonly caller: Caller
  ) {}
}

/**
 * One event's delivery to the views that held sessions when it began, in slices (`step`) so that a
 * fan-out to many thousands of sockets need not hold the event loop all along. Each view's event is
 * rendered and serialised once, when the delivery reaches it. A session that left a view before
 * the delivery reached it is skipped; one that joined meanwhile waits for the next event.
 */
export class EventDelivery {
  readonly failures: Array<unknown> = []
  private readonly views: ReadonlyArray<View>
  private viewIndex = 0
  /** The sessions of the current view when the delivery reached it, and how far it got. */
  private members: ReadonlyArray<Subscriber> | undefined
  private memberIndex = 0
  private frame: NotificationFrame | undefined

  constructor(
    private readonly event: LiveEvent,
    views: Iterable<View>,
    private readonly render: EventRenderer | undefined
  ) {
    this.views = [...views]
  }

  /** Delivers to `budget` more sessions at most; answers whether the delivery is complete. */
  step(budget: number): boolean {
    const now = Date.now()
    let left = budget
    while (this.viewIndex < this.views.length) {
      const view = this.views[this.viewIndex]!
      if (this.members === undefined && !this.enter(view)) {
        this.viewIndex++
        continue
      }
      const members = this.members!
      const frame = this.frame!
      while (this.memberIndex < members.length) {
        if (left-- <= 0) return false
        const subscriber = members[this.memberIndex++]!
        if (!view.members.has(subscriber)) continue
        try {
          subscriber.deliver(frame, now)
        } catch (error) {
          this.failures.push(error)
        }
      }
      this.members = undefined
      this.frame = undefined
      this.viewIndex++
    }
    return true
  }

  /** Renders the event for `view`; false when the view hears nothing of it (or rendering failed). */
  private enter(view: View): boolean {
    try {
      const data = renderForSubscription(this.event, view.subscription, view.caller, this.render)
      if (data === undefined) return false
      this.frame = new NotificationFrame(view.subscription.name, JSON.stringify(data))
    } catch (error) {
      this.failures.push(error)
      return false
    }
    this.members = [...view.members]
    this.memberIndex = 0
    return true
  }
}

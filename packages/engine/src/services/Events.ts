import { Context, Effect, Layer, PubSub, type Queue, type Scope } from "effect"
import type { Caller, QuoteRecord } from "../rfq/RfqRecord.js"
import { type Json, type RfqView, renderMakerQuote, renderRfq, renderTakerQuote } from "../rfq/RfqView.js"
import { renderPublicTrade } from "../rfq/TradeTapeView.js"
import { canSee, isInvitedMaker, isOwnQuote, isTaker } from "../rfq/Visibility.js"
import type { EventInterest } from "./EventAudience.js"
import { EventInterests } from "./EventInterests.js"

/**
 * Engine events, published after the change they describe is committed, in commit order per RFQ
 * (each carries the RFQ's event-log sequence number). An event holds the engine's records; `render`
 * turns it into exactly what a recipient would see over REST.
 */
export type EngineEvent =
  | {
      readonly type: "rfq"
      readonly event: "created" | "updated" | "deleted"
      readonly seq: number
      readonly view: RfqView
    }
  | {
      readonly type: "quote"
      readonly event: "created" | "updated" | "deleted"
      readonly seq: number
      readonly view: RfqView
      readonly quote: QuoteRecord
    }
  | {
      /** A trade that printed (issue 16): from the SETTLED step, with the accepted quote. */
      readonly type: "trade"
      readonly event: "created"
      readonly seq: number
      readonly view: RfqView
      readonly quote: QuoteRecord
    }

/**
 * The live channels of the contract (`rfq.maker`, `rfq.taker`, `rfq_quote.maker`,
 * `rfq_quote.taker`); `trades`, the public block-trade tape (issue 16: every authenticated session
 * may listen); `mmp.maker`, market-maker protection's trips and thaws of the desk (issue 16:
 * `mmp/MmpChannel.ts#renderMmpNotice`, never RFQ steps).
 */
export const CHANNELS = [
  "rfq.maker",
  "rfq.taker",
  "rfq_quote.maker",
  "rfq_quote.taker",
  "trades",
  "mmp.maker"
] as const

export type Channel = (typeof CHANNELS)[number]

/**
 * What `caller` receives of `event` on `channel`, or undefined when the event is not for it there
 * (who sees what is `rfq/Visibility.ts`): `rfq.maker` RFQs the caller may quote on, `rfq.taker` its
 * own RFQs, `rfq_quote.maker` the quotes it created, `rfq_quote.taker` the quotes received on its RFQs.
 * Whoever it answers something for is in the events' audience (`EventAudience.ts#audienceOf`).
 */
export const renderEvent = (event: EngineEvent, channel: Channel, caller: Caller): Json | undefined => {
  const { rfq } = event.view
  if (channel === "mmp.maker") return undefined
  // The tape is public: every authenticated session hears every trade, in the tape's own shape.
  if (channel === "trades") {
    return event.type === "trade" && event.view.trade !== undefined
      ? { event: event.event, ...renderPublicTrade(rfq, event.view.trade, event.quote) }
      : undefined
  }
  if (!canSee(rfq, caller)) return undefined
  switch (channel) {
    case "rfq.maker":
    case "rfq.taker": {
      if (event.type !== "rfq") return undefined
      const mine = channel === "rfq.taker" ? isTaker(rfq, caller) : isInvitedMaker(rfq, caller)
      if (!mine) return undefined
      if (event.event === "deleted") return { event: event.event, rfqId: rfq.id }
      const body = renderRfq(event.view, caller, { single: false })
      return body === undefined ? undefined : { event: event.event, ...body }
    }
    case "rfq_quote.maker": {
      if (event.type !== "quote" || !isOwnQuote(event.quote, caller)) return undefined
      return { event: event.event, ...renderMakerQuote(event.quote) }
    }
    case "rfq_quote.taker": {
      if (event.type !== "quote" || !isTaker(rfq, caller)) return undefined
      return {
        event: event.event,
        rfqId: rfq.id,
        ...renderTakerQuote(event.quote),
        status: event.quote.status
      }
    }
  }
}

export interface EventsService {
  /** Publishes events and succeeds once every host may have them (on several: the stream stored them). */
  readonly publish: (events: ReadonlyArray<EngineEvent>) => Effect.Effect<void>
  /**
   * Publishes one committed step's events and succeeds as soon as this host's own subscribers
   * have them, with what is left (`Unpublished`): on several hosts, the stream's acknowledgement;
   * on one host, nothing (undefined). The RFQ's actor waits for what is left before its next step
   * (`RfqActors.ts`), so the command's answer does not wait for other hosts' copy, steps still
   * reach the stream in order, and at most an RFQ's last step is ever still on its way there.
   */
  readonly publishStep: (events: ReadonlyArray<EngineEvent>) => Effect.Effect<Unpublished>
  /** A subscription to every event, that lives as long as the scope. */
  readonly subscribe: Effect.Effect<Queue.Dequeue<EngineEvent>, never, Scope.Scope>
  /**
   * A subscription that lives as long as the scope, for a subscriber that delivers only to the
   * listeners `interest` stands for: events whose audience (`EventAudience.ts`) it does not want
   * may be left out, and are when no other subscriber wants them (nor are they, on a host among
   * several, read from the stream). It may still get events it does not want.
   */
  readonly subscribeFor: (
    interest: EventInterest
  ) => Effect.Effect<Queue.Dequeue<EngineEvent>, never, Scope.Scope>
}

/**
 * Over how long a step published twice is kept once (on several hosts: the event stream's duplicate
 * window, `cluster/NatsEvents.ts`). A take-over publishes again the closing step of the RFQs that
 * closed within it (`engine/Recovery.ts`).
 */
export const STEP_DEDUPE_WINDOW_MS = 2 * 60_000

/** What is left of a step's publication: an Effect that ends when it has ended, however it ended. */
export type Unpublished = Effect.Effect<void> | undefined

export class Events extends Context.Tag("rfq/Events")<Events, EventsService>() {}

/** One host's events: in memory, offered to the subscriptions only when one of them may want them. */
export const EventsLive = Layer.effect(
  Events,
  Effect.gen(function* () {
    const hub = yield* PubSub.unbounded<EngineEvent>()
    const interests = new EventInterests()
    const publish = (events: ReadonlyArray<EngineEvent>) =>
      Effect.suspend(() =>
        interests.wantsEvents(events) ? PubSub.publishAll(hub, events).pipe(Effect.asVoid) : Effect.void
      )
    return {
      publish,
      publishStep: (events) => Effect.as(publish(events), undefined),
      subscribe: Effect.zipRight(interests.register(undefined), PubSub.subscribe(hub)),
      subscribeFor: (interest) => Effect.zipRight(interests.register(interest), PubSub.subscribe(hub))
    }
  })
)

import type { Consumer, JetStreamClient, JsMsg, StreamInfo } from "@nats-io/jetstream"
import { Effect, type PubSub, Runtime, Schedule } from "effect"
import type { EventAudience } from "../services/EventAudience.js"
import type { EventInterests } from "../services/EventInterests.js"
import type { EngineEvent } from "../services/Events.js"
import { AUDIENCE_HEADER, audienceOfMessage, decodeEvents } from "./EventCodec.js"
import { messageOf, type NatsNames, NatsUnavailable } from "./NatsConnection.js"

/**
 * Drops the steps a host has already delivered. JetStream stores a step once while its message id
 * is within the duplicate window; a step published again later (a republish after a crash) would be
 * stored twice, and a step republished after a newer one of the same RFQ would arrive out of order.
 * Each RFQ's highest delivered `seq` is kept for `horizonMs` after it was delivered: a step at or
 * below it is dropped.
 *
 * The owner of an RFQ also delivers its own steps to this host's subscribers at once, before they
 * come back from the stream (`admitNext`), but only a step that directly follows the last one
 * delivered here (or an RFQ's first step): one the stream has not brought yet would otherwise be
 * jumped over and then dropped. Such a step waits for the stream like any other.
 */
export class StepGuard {
  private readonly last = new Map<number, { seq: number; at: number }>()
  private sweptAt = 0

  constructor(private readonly horizonMs: number) {}

  /** The events of steps not delivered before (all steps of `events` are marked delivered). */
  admit(events: ReadonlyArray<EngineEvent>, now: number): ReadonlyArray<EngineEvent> {
    return this.take(events, now, false)
  }

  /**
   * The events of the steps that directly follow what was delivered (`seq` one more than the RFQ's
   * last, or 1 for an RFQ never seen), marked delivered; the others are left for `admit`.
   */
  admitNext(events: ReadonlyArray<EngineEvent>, now: number): ReadonlyArray<EngineEvent> {
    return this.take(events, now, true)
  }

  /**
   * Marks step `seq` of RFQ `rfqId` delivered without its events, by `admit`'s rule: a step no
   * subscriber here wants is left unread, and the RFQ's next step then still directly follows it.
   */
  pass(rfqId: number, seq: number, now: number): void {
    this.sweep(now)
    this.markIfDue(rfqId, seq, now, false)
  }

  /** Whether step `seq` of RFQ `rfqId` was delivered (or a later one was). */
  delivered(rfqId: number, seq: number): boolean {
    const last = this.last.get(rfqId)
    return last !== undefined && seq <= last.seq
  }

  /** How many RFQs are remembered. */
  get size(): number {
    return this.last.size
  }

  private take(
    events: ReadonlyArray<EngineEvent>,
    now: number,
    nextOnly: boolean
  ): ReadonlyArray<EngineEvent> {
    this.sweep(now)
    const admitted = new Set<string>()
    const refused = new Set<string>()
    const out: Array<EngineEvent> = []
    for (const event of events) {
      const rfqId = event.view.rfq.id
      const key = `${rfqId}:${event.seq}`
      if (refused.has(key)) continue
      if (!admitted.has(key)) {
        if (!this.markIfDue(rfqId, event.seq, now, nextOnly)) {
          refused.add(key)
          continue
        }
        admitted.add(key)
      }
      out.push(event)
    }
    return out
  }

  /** Marks step `seq` of RFQ `rfqId` delivered if it is due (`admit`'s rule, or `admitNext`'s); answers whether it was. */
  private markIfDue(rfqId: number, seq: number, now: number, nextOnly: boolean): boolean {
    const last = this.last.get(rfqId)
    const due = nextOnly
      ? seq === (last === undefined ? 1 : last.seq + 1)
      : last === undefined || seq > last.seq
    if (due) this.last.set(rfqId, { seq, at: now })
    return due
  }

  private sweep(now: number): void {
    if (now - this.sweptAt < this.horizonMs / 4) return
    this.sweptAt = now
    for (const [rfqId, { at }] of this.last) if (now - at > this.horizonMs) this.last.delete(rfqId)
  }
}

/**
 * The one way RFQ steps reach this host's subscribers (`hub`), from the stream and from the RFQ's
 * owner on this host. Each step is judged by the guard and offered to the hub in one synchronous
 * run of code (the hub is unbounded, so an offer never waits): nothing else runs between the two,
 * so a step let through on one side is in the hub before the other side can let the next one
 * through, and each RFQ's steps reach subscribers once and in order, whichever side brought each.
 * Synchronous, so the stream's messages are handled in the NATS client's own callback, with no
 * fiber, promise or lock per message (every host receives every step of every RFQ).
 *
 * A step no subscriber here wants (`interests`, by the step's audience) is marked delivered and not
 * offered; from the stream, when its message names its audience, it is not even decoded (`passUnwanted`).
 */
export interface StepDelivery {
  /** A stream message's events: the steps not delivered yet. */
  readonly fromStream: (events: ReadonlyArray<EngineEvent>, now: number) => void
  /** Steps this host just committed as the RFQ's owner: those that directly follow what was delivered. */
  readonly fromOwner: (events: ReadonlyArray<EngineEvent>, now: number) => void
  /** Whether the step was delivered already (its message need not be read). */
  readonly delivered: (rfqId: number, seq: number) => boolean
  /**
   * For a stream message not read yet whose step has `audience`: when no subscriber here wants it,
   * marks the step delivered and answers true (the message need not be read); else false.
   */
  readonly passUnwanted: (
    step: { readonly rfqId: number; readonly seq: number },
    audience: EventAudience,
    now: number
  ) => boolean
}

export const makeStepDelivery = (
  guard: StepGuard,
  hub: PubSub.PubSub<EngineEvent>,
  interests: EventInterests
): StepDelivery => {
  // A shut-down hub (the host stopping) takes nothing, and nothing is left to tell.
  const offer = (admitted: ReadonlyArray<EngineEvent>) => {
    if (admitted.length === 0 || !interests.wantsEvents(admitted)) return
    for (const event of admitted) hub.unsafeOffer(event)
  }
  return {
    fromStream: (events, now) => offer(guard.admit(events, now)),
    fromOwner: (events, now) => offer(guard.admitNext(events, now)),
    delivered: (rfqId, seq) => guard.delivered(rfqId, seq),
    passUnwanted: (step, audience, now) => {
      if (interests.wants(audience)) return false
      guard.pass(step.rfqId, step.seq, now)
      return true
    }
  }
}

/** The step a stream message holds, from its message id (`EventStream.ts#messageIdOf`), if it has one. */
export const stepOfMessage = (msg: JsMsg): { readonly rfqId: number; readonly seq: number } | undefined => {
  const id = msg.headers?.get("Nats-Msg-Id")
  const match = id === undefined ? null : /^(\d+):(\d+)$/.exec(id)
  return match === null ? undefined : { rfqId: Number(match[1]), seq: Number(match[2]) }
}

const reopenSchedule = Schedule.exponential("100 millis").pipe(Schedule.union(Schedule.spaced("5 seconds")))

/** An ordered consumer of the stream starting at stream sequence `fromSeq` (created on the server now). */
export const openConsumer = (
  js: JetStreamClient,
  names: NatsNames,
  fromSeq: number
): Effect.Effect<Consumer, NatsUnavailable> =>
  Effect.tryPromise({
    try: () => js.consumers.get(names.stream, { opt_start_seq: fromSeq }),
    catch: (cause) =>
      new NatsUnavailable({
        message: `consumer of ${names.stream} could not be created: ${messageOf(cause)}`
      })
  })

/**
 * Feeds `delivery` from the stream, starting with `first` (opened at start): each message decoded,
 * in stream order (which is each RFQ's order), in the client's callback as it arrives. A message
 * whose step was delivered already (by this host as its owner, or a repeat) is skipped unread, by
 * its message id, and so is one whose audience header names nobody a subscriber here wants; one
 * that cannot be decoded is logged and skipped.
 * The client's ordered consumer recreates itself after gaps and reconnections; when it stops anyway
 * (its consumer or the stream gone), the stream is set up again and a new consumer opened after the
 * last message seen. Runs until interrupted.
 */
export const followStream = (options: {
  readonly js: JetStreamClient
  /** Sets the stream up again (`EventStream.ts#ensureStream`), should it have gone. */
  readonly ensure: Effect.Effect<StreamInfo, NatsUnavailable>
  readonly names: NatsNames
  readonly first: Consumer
  readonly firstSeq: number
  readonly delivery: StepDelivery
}): Effect.Effect<never> =>
  Effect.gen(function* () {
    const { js, ensure, names, delivery } = options
    let lastSeen = options.firstSeq - 1
    const clock = yield* Effect.clock
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())

    // Called by the client for each message, synchronously; it must not throw (a throw stops the consumer).
    const deliver = (msg: JsMsg): void => {
      lastSeen = msg.seq
      const step = stepOfMessage(msg)
      if (step !== undefined) {
        if (delivery.delivered(step.rfqId, step.seq)) return
        const audience = audienceOfMessage(msg.headers?.get(AUDIENCE_HEADER))
        if (audience !== undefined && delivery.passUnwanted(step, audience, clock.unsafeCurrentTimeMillis()))
          return
      }
      let events: ReadonlyArray<EngineEvent>
      try {
        events = decodeEvents(msg.data)
      } catch (e) {
        runFork(Effect.logWarning(`${names.stream} message ${msg.seq} skipped: ${messageOf(e)}`))
        return
      }
      delivery.fromStream(events, clock.unsafeCurrentTimeMillis())
    }

    // Until the consumer stops: its `closed()` answers an error when it failed.
    const pump = (consumer: Consumer) =>
      Effect.acquireUseRelease(
        Effect.tryPromise(() =>
          consumer.consume({ max_messages: 256, abort_on_missing_resource: true, callback: deliver })
        ),
        (messages) =>
          Effect.flatMap(
            Effect.promise(() => messages.closed()),
            (ended) => (ended instanceof Error ? Effect.fail(ended) : Effect.void)
          ),
        (messages) =>
          Effect.promise(async () => {
            messages.stop()
            await consumer.delete().catch(() => false)
          }).pipe(Effect.timeout("2 seconds"), Effect.ignore)
      )

    // After the last message seen; if the stream was recreated (its sequence restarted), after its end.
    const reopen = ensure.pipe(
      Effect.flatMap((info) => openConsumer(js, names, Math.min(info.state.last_seq, lastSeen) + 1)),
      Effect.tapError((e) =>
        Effect.logWarning(`${names.stream}: reopening the consumer failed: ${messageOf(e)}`)
      ),
      Effect.retry(reopenSchedule),
      Effect.orDie // the schedule never ends
    )

    let consumer = options.first
    return yield* Effect.forever(
      Effect.suspend(() => pump(consumer)).pipe(
        Effect.catchAllCause((cause) => Effect.logError(`${names.stream}: the consumer failed`, cause)),
        Effect.zipRight(
          Effect.suspend(() =>
            Effect.logWarning(`${names.stream}: consumer stopped after stream message ${lastSeen}; reopening`)
          )
        ),
        Effect.zipRight(Effect.sleep("1 second")),
        Effect.zipRight(reopen),
        Effect.tap((next) => {
          consumer = next
        })
      )
    )
  })

import type { Consumer, JetStreamClient, JsMsg, StreamInfo } from "@nats-io/jetstream"
import { Clock, Effect, PubSub, Schedule } from "effect"
import type { EngineEvent } from "../services/Events.js"
import { decodeEvents } from "./EventCodec.js"
import { forEachAsync, messageOf, type NatsNames, NatsUnavailable } from "./NatsConnection.js"

/**
 * Drops the steps a host has already delivered. JetStream stores a step once while its message id
 * is within the duplicate window; a step published again later (a republish after a crash) would be
 * stored twice, and a step republished after a newer one of the same RFQ would arrive out of order.
 * Each RFQ's highest delivered `seq` is kept for `horizonMs` after it was delivered: a step at or
 * below it is dropped.
 */
export class StepGuard {
  private readonly last = new Map<number, { seq: number; at: number }>()
  private sweptAt = 0

  constructor(private readonly horizonMs: number) {}

  /** The events of steps not delivered before (all steps of `events` are marked delivered). */
  admit(events: ReadonlyArray<EngineEvent>, now: number): ReadonlyArray<EngineEvent> {
    this.sweep(now)
    const admitted = new Set<string>()
    const out: Array<EngineEvent> = []
    for (const event of events) {
      const rfqId = event.view.rfq.id
      const key = `${rfqId}:${event.seq}`
      if (!admitted.has(key)) {
        const last = this.last.get(rfqId)
        if (last !== undefined && event.seq <= last.seq) continue
        this.last.set(rfqId, { seq: event.seq, at: now })
        admitted.add(key)
      }
      out.push(event)
    }
    return out
  }

  /** How many RFQs are remembered. */
  get size(): number {
    return this.last.size
  }

  private sweep(now: number): void {
    if (now - this.sweptAt < this.horizonMs / 4) return
    this.sweptAt = now
    for (const [rfqId, { at }] of this.last) if (now - at > this.horizonMs) this.last.delete(rfqId)
  }
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
 * Feeds `hub` from the stream, starting with `first` (opened at start): each message decoded, its
 * steps passed through `guard`, its events published in stream order (which is each RFQ's order).
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
  readonly hub: PubSub.PubSub<EngineEvent>
  readonly guard: StepGuard
}): Effect.Effect<never> => {
  const { js, ensure, names, hub, guard } = options
  let lastSeen = options.firstSeq - 1

  const deliver = (msg: JsMsg) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      lastSeen = msg.seq
      let events: ReadonlyArray<EngineEvent>
      try {
        events = guard.admit(decodeEvents(msg.data), now)
      } catch (e) {
        return Effect.logWarning(`${names.stream} message ${msg.seq} skipped: ${messageOf(e)}`)
      }
      return events.length === 0 ? Effect.void : PubSub.publishAll(hub, events)
    })

  const pump = (consumer: Consumer) =>
    Effect.acquireUseRelease(
      Effect.tryPromise(() => consumer.consume({ max_messages: 256, abort_on_missing_resource: true })),
      (messages) => forEachAsync(messages, deliver),
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
  return Effect.forever(
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
}

import {
  DiscardPolicy,
  JetStreamApiError,
  type JetStreamClient,
  jetstreamManager,
  RetentionPolicy,
  type StreamInfo,
  StorageType
} from "@nats-io/jetstream"
import { errors, headers, type MsgHdrs, type NatsConnection, nanos } from "@nats-io/transport-node"
import { Duration, Effect, Schedule } from "effect"
import { audienceOf } from "../services/EventAudience.js"
import type { EngineEvent } from "../services/Events.js"
import { AUDIENCE_HEADER, encodeAudience, encodeEvents } from "./EventCodec.js"
import { messageOf, type NatsNames, NatsUnavailable } from "./NatsConnection.js"
import { makeTurnBatch } from "./TurnBatch.js"

/** How long the stream keeps events, and over which window it drops a repeated message id. */
export interface StreamLimits {
  readonly duplicateWindowMs: number
  readonly maxAgeMs: number
}

/** "stream name already in use with a different configuration" */
const STREAM_NAME_IN_USE = 10058

/**
 * Creates the namespace's stream, or brings an existing one to `limits`. Hosts starting together
 * all do this: an identical `add` is a no-op on the server, and one that differs becomes an update.
 */
export const ensureStream = (
  nc: NatsConnection,
  names: NatsNames,
  limits: StreamLimits
): Effect.Effect<StreamInfo, NatsUnavailable> => {
  const config = {
    subjects: [names.eventSubjects],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    num_replicas: 1,
    max_age: nanos(limits.maxAgeMs),
    duplicate_window: nanos(limits.duplicateWindowMs)
  }
  return Effect.tryPromise({
    try: async () => {
      const jsm = await jetstreamManager(nc)
      try {
        return await jsm.streams.add({ name: names.stream, ...config })
      } catch (e) {
        if (!(e instanceof JetStreamApiError) || e.code !== STREAM_NAME_IN_USE) throw e
        return await jsm.streams.update(names.stream, config)
      }
    },
    catch: (cause) =>
      new NatsUnavailable({
        message: `JetStream stream ${names.stream} could not be set up: ${messageOf(cause)}`
      })
  }).pipe(Effect.retry({ times: 3, schedule: Schedule.exponential("200 millis") }))
}

/** One committed step's events: one message, one message id. */
interface Step {
  readonly rfqId: number
  readonly seq: number
  readonly events: Array<EngineEvent>
}

/** The events grouped by step (RFQ id and `seq`), steps and events in their given order. */
export const stepsOf = (events: ReadonlyArray<EngineEvent>): ReadonlyArray<Step> => {
  const steps = new Map<string, Step>()
  for (const event of events) {
    const rfqId = event.view.rfq.id
    const key = `${rfqId}:${event.seq}`
    const step = steps.get(key)
    if (step === undefined) steps.set(key, { rfqId, seq: event.seq, events: [event] })
    else step.events.push(event)
  }
  return [...steps.values()]
}

/** The JetStream message id of a step: a step published twice is stored once (within the window). */
export const messageIdOf = (rfqId: number, seq: number): string => `${rfqId}:${seq}`

/** The longest wait for one publish acknowledgement; a slower one is tried again (same id). */
const ATTEMPT_TIMEOUT_MS = 2_000

/** The server's definite refusals and our own bad input: trying again cannot help. */
const isFinal = (e: unknown): boolean =>
  e instanceof JetStreamApiError ||
  e instanceof errors.InvalidArgumentError ||
  e instanceof errors.InvalidSubjectError ||
  e instanceof errors.PermissionViolationError

const retrySchedule = Schedule.exponential("50 millis").pipe(
  Schedule.union(Schedule.spaced("1 second")),
  Schedule.jittered
)

/**
 * Publishes `events` to the stream, one message per step on the RFQ's subject with the step's
 * audience in a header (`EventCodec.ts#AUDIENCE_HEADER`), one after the other
 * (so a caller that publishes each RFQ's steps in order gets them stored in that order). Each
 * waits for JetStream's acknowledgement; while NATS does not answer it tries again for up to
 * `deadline`, then logs and gives up: the step is committed in the database already, and
 * publishing it again later is harmless (same message id, and receivers drop steps they have seen).
 *
 * Every committed step of every RFQ comes through here, so the first attempt is a bare promise
 * (no retry schedule, no timeout fiber: the client's own attempt timeout bounds it); only a step
 * whose first attempt failed goes on to the retries, within what is left of `deadline`. The
 * publishes of one turn of the event loop go to the client together (`TurnBatch.ts`): one socket
 * write for the steps committed in that turn.
 */
export const publishEvents = (js: JetStreamClient, names: NatsNames, deadline: Duration.DurationInput) => {
  const deadlineMs = Duration.toMillis(Duration.decode(deadline))
  const inTurn = makeTurnBatch()
  const attempt = (subject: string, data: Uint8Array, id: string, hdrs: MsgHdrs) =>
    Effect.tryPromise({
      try: () =>
        inTurn(() =>
          js.publish(subject, data, {
            msgID: id,
            headers: hdrs,
            timeout: Math.min(ATTEMPT_TIMEOUT_MS, deadlineMs)
          })
        ),
      catch: (e) => e
    })
  const retried = (subject: string, data: Uint8Array, id: string, hdrs: MsgHdrs, leftMs: number) =>
    attempt(subject, data, id, hdrs).pipe(
      Effect.retry({ schedule: retrySchedule, while: (e) => !isFinal(e) }),
      Effect.timeoutFail({
        duration: Duration.millis(Math.max(0, leftMs)),
        onTimeout: () => new Error(`no acknowledgement within ${Duration.format(deadline)}`)
      })
    )
  const publishStep = (step: Step): Effect.Effect<void> =>
    Effect.suspend(() => {
      const id = messageIdOf(step.rfqId, step.seq)
      const subject = names.eventSubject(step.rfqId)
      const startedAt = Date.now()
      let data: Uint8Array
      const hdrs = headers()
      try {
        data = encodeEvents(step.events)
        hdrs.set(AUDIENCE_HEADER, encodeAudience(audienceOf(step.events)))
      } catch (e) {
        return notPublished(names, id, e)
      }
      return attempt(subject, data, id, hdrs).pipe(
        Effect.catchAll((first) =>
          isFinal(first)
            ? Effect.fail(first)
            : retried(subject, data, id, hdrs, deadlineMs - (Date.now() - startedAt))
        ),
        Effect.asVoid,
        Effect.catchAll((e) => notPublished(names, id, e))
      )
    })
  return (events: ReadonlyArray<EngineEvent>): Effect.Effect<void> => {
    if (events.length === 0) return Effect.void
    const steps = stepsOf(events)
    return steps.length === 1 ? publishStep(steps[0]!) : Effect.forEach(steps, publishStep, { discard: true })
  }
}

const notPublished = (names: NatsNames, id: string, e: unknown) =>
  Effect.logError(`events of step ${id} not published to ${names.stream}: ${messageOf(e)}`)

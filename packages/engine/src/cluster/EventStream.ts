import {
  DiscardPolicy,
  JetStreamApiError,
  type JetStreamClient,
  jetstreamManager,
  RetentionPolicy,
  type StreamInfo,
  StorageType
} from "@nats-io/jetstream"
import { errors, type NatsConnection, nanos } from "@nats-io/transport-node"
import { Duration, Effect, Schedule } from "effect"
import type { EngineEvent } from "../services/Events.js"
import { encodeEvents } from "./EventCodec.js"
import { messageOf, type NatsNames, NatsUnavailable } from "./NatsConnection.js"

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
 * Publishes `events` to the stream, one message per step on the RFQ's subject, one after the other
 * (so a caller that publishes each RFQ's steps in order gets them stored in that order). Each
 * waits for JetStream's acknowledgement; while NATS does not answer it tries again for up to
 * `deadline`, then logs and gives up: the step is committed in the database already, and
 * publishing it again later is harmless (same message id, and receivers drop steps they have seen).
 */
export const publishEvents =
  (js: JetStreamClient, names: NatsNames, deadline: Duration.DurationInput) =>
  (events: ReadonlyArray<EngineEvent>): Effect.Effect<void> =>
    events.length === 0
      ? Effect.void
      : Effect.forEach(
          stepsOf(events),
          (step) => {
            const id = messageIdOf(step.rfqId, step.seq)
            return Effect.try(() => encodeEvents(step.events)).pipe(
              Effect.flatMap((data) =>
                Effect.tryPromise({
                  try: () =>
                    js.publish(names.eventSubject(step.rfqId), data, {
                      msgID: id,
                      timeout: ATTEMPT_TIMEOUT_MS
                    }),
                  catch: (e) => e
                }).pipe(
                  Effect.retry({ schedule: retrySchedule, while: (e) => !isFinal(e) }),
                  Effect.timeoutFail({
                    duration: deadline,
                    onTimeout: () => new Error(`no acknowledgement within ${Duration.format(deadline)}`)
                  })
                )
              ),
              Effect.catchAll((e) =>
                Effect.logError(`events of step ${id} not published to ${names.stream}: ${messageOf(e)}`)
              )
            )
          },
          { discard: true }
        )

import { jetstream } from "@nats-io/jetstream"
import { Clock, Context, Effect, Fiber, FiberSet, Layer, PubSub } from "effect"
import { EventInterests } from "../services/EventInterests.js"
import { type EngineEvent, Events, type EventsService, STEP_DEDUPE_WINDOW_MS } from "../services/Events.js"
import { ClusterBus, makeClusterBus } from "./ClusterBus.js"
import { ensureStream, publishEvents } from "./EventStream.js"
import { natsConnection, natsNames, type NatsUnavailable } from "./NatsConnection.js"
import { followStream, makeStepDelivery, openConsumer, StepGuard } from "./StreamFollower.js"

/** Where NATS is and how the namespace's event stream is kept. */
export interface NatsEventsOptions {
  /** NATS server URLs, comma-separated (`nats://127.0.0.1:4222`). */
  readonly servers: string
  /** Separates services (and test files) sharing one NATS server. */
  readonly namespace: string
  /** Over how long a step published twice is stored once; default `STEP_DEDUPE_WINDOW_MS` (2 minutes). */
  readonly duplicateWindowMs?: number
  /** How long the stream keeps events; default 1 hour. */
  readonly maxAgeMs?: number
  /** How long a publish keeps trying while NATS does not acknowledge; default 5 seconds. */
  readonly publishDeadlineMs?: number
}

/**
 * Engine events over NATS JetStream, for several hosts serving one venue, and the hosts' bus.
 *
 * - One stream per namespace (`EventStream.ts#ensureStream`), set up idempotently at start.
 * - `publish` stores each step as one message on its RFQ's subject with message id
 *   `<rfqId>:<seq>`, waiting for the acknowledgement (`EventStream.ts#publishEvents`). It is
 *   idempotent, so it also serves to republish what a crash left unpublished. `publishStep`, a
 *   command's step, does the same on a fiber of its own and answers at once with the wait for it:
 *   the command's answer does not wait for the stream (nor, behind the acknowledgement on this
 *   host's event loop, for the fan-out to its subscribers); the RFQ's next step waits for it
 *   instead (`RfqActors.ts`). Closing the layer waits for those in flight (each has its deadline).
 * - Every host receives the events from the stream: at start one ordered consumer per host begins
 *   after the stream's last message, and each message's events go to this host's subscribers in
 *   stream order, each step once (`StreamFollower.ts`). The publisher, the RFQ's owner, gives its
 *   own subscribers the step at once, before publishing it, when the step directly follows the
 *   last one they had (nearly always); its copy from the stream is then skipped unread. A step
 *   that does not (the stream has not yet brought an earlier one, as after a take-over) comes
 *   from the stream like any other, so each RFQ's steps still arrive once and in order.
 * - A step none of this host's subscribers wants (`EventsService.subscribeFor`, by the step's
 *   audience, which its message carries in a header) is marked delivered and left unread.
 * - `ClusterBus` on the same connection (`ClusterBus.ts`).
 *
 * The connection, consumer and subscriptions close with the layer's scope. NATS unreachable at
 * start, or a stream JetStream refuses, is `NatsUnavailable`.
 */
export const NatsEventsLive = (
  options: NatsEventsOptions
): Layer.Layer<Events | ClusterBus, NatsUnavailable> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const limits = {
        duplicateWindowMs: options.duplicateWindowMs ?? STEP_DEDUPE_WINDOW_MS,
        maxAgeMs: options.maxAgeMs ?? 60 * 60_000
      }
      if (!(limits.duplicateWindowMs > 0 && limits.duplicateWindowMs <= limits.maxAgeMs)) {
        return yield* Effect.dieMessage("NatsEventsLive: need 0 < duplicateWindowMs <= maxAgeMs")
      }
      const names = yield* Effect.sync(() => natsNames(options.namespace))
      const nc = yield* natsConnection(options.servers, `rfq ${names.stream}`)
      const ensure = ensureStream(nc, names, limits)
      const info = yield* ensure
      const js = jetstream(nc)

      const hub = yield* Effect.acquireRelease(PubSub.unbounded<EngineEvent>(), PubSub.shutdown)
      // Created on the server before the layer is ready: every message stored from here on reaches this host.
      const firstSeq = info.state.last_seq + 1
      const first = yield* openConsumer(js, names, firstSeq)
      const interests = new EventInterests()
      const delivery = makeStepDelivery(new StepGuard(limits.maxAgeMs), hub, interests)
      yield* Effect.forkScoped(followStream({ js, ensure, names, first, firstSeq, delivery }))

      const publishDeadlineMs = options.publishDeadlineMs ?? 5_000
      const toStream = publishEvents(js, names, publishDeadlineMs)
      // Steps on their way to the stream; the layer's end waits for them before the connection closes.
      const inFlight = yield* FiberSet.make<void>()
      yield* Effect.addFinalizer(() =>
        FiberSet.awaitEmpty(inFlight).pipe(Effect.timeout(publishDeadlineMs + 1_000), Effect.ignore)
      )
      const toOwnSubscribers = (stepEvents: ReadonlyArray<EngineEvent>) =>
        Effect.map(Clock.currentTimeMillis, (now) => delivery.fromOwner(stepEvents, now))
      const events: EventsService = {
        publish: (stepEvents) =>
          stepEvents.length === 0
            ? Effect.void
            : Effect.zipRight(toOwnSubscribers(stepEvents), toStream(stepEvents)),
        publishStep: (stepEvents) =>
          stepEvents.length === 0
            ? Effect.succeed(undefined)
            : Effect.zipRight(
                toOwnSubscribers(stepEvents),
                // Interruptible whatever the command's region: the layer's end may cut it.
                Effect.map(FiberSet.run(inFlight, Effect.interruptible(toStream(stepEvents))), (fiber) =>
                  Effect.asVoid(Fiber.await(fiber))
                )
              ),
        subscribe: Effect.zipRight(interests.register(undefined), PubSub.subscribe(hub)),
        subscribeFor: (interest) => Effect.zipRight(interests.register(interest), PubSub.subscribe(hub))
      }
      return Context.make(Events, events).pipe(Context.add(ClusterBus, makeClusterBus(nc, names)))
    })
  )

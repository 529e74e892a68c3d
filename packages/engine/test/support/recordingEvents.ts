import { Effect, Layer } from "effect"
import { type EngineEvent, Events, EventsLive } from "../../src/services/Events.js"

/**
 * In-memory events (`EventsLive`) that also record, in order, every event published either way
 * (`publish`, a take-over's catch-up; `publishStep`, a committed step), into `heard`.
 */
export const recordingEvents = (heard: Array<EngineEvent>): Layer.Layer<Events> =>
  Layer.effect(
    Events,
    Effect.map(Events, (inner) => ({
      ...inner,
      publish: (events: ReadonlyArray<EngineEvent>) =>
        Effect.zipRight(
          Effect.sync(() => heard.push(...events)),
          inner.publish(events)
        ),
      publishStep: (events: ReadonlyArray<EngineEvent>) =>
        Effect.zipRight(
          Effect.sync(() => heard.push(...events)),
          inner.publishStep(events)
        )
    }))
  ).pipe(Layer.provide(EventsLive))

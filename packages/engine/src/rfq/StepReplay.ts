import { Effect, Option } from "effect"
import type { EngineEvent } from "../services/Events.js"
import type { RfqEffect, RfqStateValue } from "./RfqMachine.js"
import type { QuoteRecord, RfqState } from "./RfqRecord.js"
import { eventsOf } from "./StepEvents.js"

/**
 * The events of an RFQ's last step, rebuilt from its event-log row, for a take-over to publish
 * again under the step's id (`engine/Recovery.ts`). A command is answered once its step is
 * committed and this host's subscribers have it; the step reaches the event stream a moment later
 * (`Events.publishStep`). An owner killed in between leaves that step committed but unheard on the
 * other hosts: the new owner publishes it again, and the stream keeps the first of the two copies
 * (same message id), so nothing is heard twice.
 *
 * The row holds the step's state value and effects (`storage/RfqStepWriter.ts#stepPayload`); the
 * RFQ's state after that step is the adopted actor's. The quotes a step closed are gone from that
 * state, so they are read from storage (with their closed status, which the event carries anyway).
 * Answers undefined when the row cannot be read as a step (the RFQ's first, its creation, has its
 * own shape), or a closed quote is missing; the caller then publishes the RFQ as it now is.
 */
export const replayLastStep = (
  value: RfqStateValue,
  state: RfqState,
  seq: number,
  payload: unknown,
  quoteOf: (quoteId: number) => Effect.Effect<Option.Option<QuoteRecord>>
): Effect.Effect<ReadonlyArray<EngineEvent> | undefined> =>
  Effect.gen(function* () {
    if (typeof payload !== "object" || payload === null) return undefined
    const stored = payload as { readonly value?: unknown; readonly effects?: unknown }
    if (stored.value !== value || !Array.isArray(stored.effects)) return undefined
    const effects: Array<RfqEffect> = []
    for (const e of stored.effects as ReadonlyArray<StoredEffect>) {
      if (typeof e !== "object" || e === null || typeof e.type !== "string") return undefined
      const params = yield* paramsOf(e, quoteOf)
      if (params === undefined) return undefined
      effects.push({ type: e.type, params } as RfqEffect)
    }
    return eventsOf(value, state, seq, effects)
  })

/** One effect as `stepPayload` writes it. */
interface StoredEffect {
  readonly type: string
  readonly update?: boolean
  readonly quote?: QuoteRecord
  readonly closed?: ReadonlyArray<{ readonly quoteId: number; readonly status: string }>
  readonly trade?: unknown
  readonly outcome?: string
  readonly status?: string
  readonly at?: number
}

/** The machine effect's params `eventsOf` reads, from the stored effect; undefined if it cannot. */
const paramsOf = (
  e: StoredEffect,
  quoteOf: (quoteId: number) => Effect.Effect<Option.Option<QuoteRecord>>
): Effect.Effect<unknown> => {
  switch (e.type) {
    case "quoteStored":
      // `eventsOf` tells an update by a previous quote being there; its content is not read.
      return Effect.succeed(
        e.quote === undefined ? undefined : { quote: e.quote, previous: e.update ? e.quote : undefined }
      )
    case "quotesClosed":
      return e.closed === undefined
        ? Effect.succeed(undefined)
        : Effect.map(
            Effect.forEach(e.closed, (c) =>
              Effect.map(
                quoteOf(c.quoteId),
                Option.map((quote) => ({ quote, status: c.status }))
              )
            ),
            (found) =>
              found.every(Option.isSome) ? { at: e.at, closed: found.map((f) => f.value) } : undefined
          )
    case "tradeStarted":
      return Effect.succeed({ trade: e.trade })
    case "tradeFinished":
      return Effect.succeed({ trade: e.trade, outcome: e.outcome })
    case "rfqClosed":
      return Effect.succeed({ status: e.status, at: e.at })
    case "rfqDeleted":
      return Effect.succeed({ at: e.at })
    default:
      return Effect.succeed(undefined)
  }
}

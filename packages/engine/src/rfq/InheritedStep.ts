import { Effect, Option } from "effect"
import { type EngineEvent, type EventsService, STEP_DEDUPE_WINDOW_MS } from "../services/Events.js"
import type { RfqStateValue } from "./RfqMachine.js"
import type { RfqState } from "./RfqRecord.js"
import type { RfqStoreService, StoredRfq } from "./RfqStore.js"
import { viewOf } from "./StepEvents.js"
import { replayLastStep } from "./StepReplay.js"

/**
 * The last step of an RFQ an engine restores from storage while other engines share the RFQs
 * (several hosts): the step may be committed but unheard on the other hosts. A command is answered
 * once its step is committed and its own host's subscribers have it; the step reaches the event
 * stream a moment later, so an engine killed in between leaves it committed and unpublished.
 *
 * Whoever takes the RFQ next must publish that step again before the RFQ's next step reaches the
 * stream: every host delivers each RFQ's steps in order and drops a step numbered below one it
 * delivered (`cluster/StreamFollower.ts#StepGuard`), so a step published after a later one is
 * never heard. And the next step may come before the take-over is done: the new owner holds the
 * shard a moment before it adopts the shard's RFQs, and a command there, or a read that expires
 * what is due, is a step. So the step to publish again is the restored actor's inheritance
 * (`RfqActor.unpublished`), which its next step, whoever commits it, waits for, and which the
 * take-over (`engine/Recovery.ts`) starts for all its RFQs at once and waits for together. The stream keeps one copy of a step published twice (same
 * message id), so publishing one that did arrive is harmless.
 */
export const inheritedStep = (
  store: RfqStoreService,
  events: EventsService,
  value: RfqStateValue,
  state: RfqState,
  seq: number
): Effect.Effect<void> =>
  Effect.flatMap(
    Effect.suspend(() => lastStepEvents(store, value, state, seq)),
    events.publish
  )

/**
 * Whether an RFQ restored at `now` inherits its last step: a live one always (the take-over
 * publishes it anyway); a closed one only within the stream's duplicate window after it closed, as
 * the take-over does (`engine/Recovery.ts#closingStepsAgain`). Later, the closing step reached the
 * stream long ago, or was published again by the take-over, and a copy outside the window would be
 * stored twice: a deletion of a cancelled RFQ an hour on would first tell its cancellation again.
 */
export const inherits = (stored: StoredRfq, now: number): boolean => {
  if (stored.value === "open" || stored.value === "settling") return true
  const closedAt = stored.state.closedAt
  return closedAt !== undefined && now - closedAt <= STEP_DEDUPE_WINDOW_MS
}

/** The RFQ as it now is, under the number of its last step: when that step cannot be rebuilt. */
const asItIs = (value: RfqStateValue, state: RfqState, seq: number): ReadonlyArray<EngineEvent> => [
  { type: "rfq", event: seq === 1 ? "created" : "updated", seq, view: viewOf(value, state) }
]

/**
 * The events of the last step (`StepReplay.ts`), rebuilt from its event-log row, else the RFQ as it
 * now is, both under that step's number. An RFQ whose last step is its creation: the RFQ as it is
 * *is* that step's event.
 */
const lastStepEvents = (
  store: RfqStoreService,
  value: RfqStateValue,
  state: RfqState,
  seq: number
): Effect.Effect<ReadonlyArray<EngineEvent>> =>
  Effect.gen(function* () {
    if (seq === 1) return asItIs(value, state, seq)
    const last = yield* store.lastEvent(state.rfq.id)
    if (Option.isNone(last) || last.value.seq !== seq) {
      // Storage moved on since the RFQ was read: the step after it was another engine's to publish.
      yield* Effect.logWarning(
        `RFQ ${state.rfq.id}: last step ${seq} not found in the event log; publishing the RFQ as it is`
      )
      return asItIs(value, state, seq)
    }
    const replayed = yield* replayLastStep(value, state, seq, last.value.payload, store.quote)
    if (replayed !== undefined) return replayed
    yield* Effect.logWarning(
      `RFQ ${state.rfq.id}: last step ${seq} could not be rebuilt; publishing the RFQ as it is`
    )
    return asItIs(value, state, seq)
  }).pipe(
    // Whatever goes wrong here, the RFQ as it now is still tells every host.
    Effect.catchAllCause((cause) =>
      Effect.as(
        Effect.logWarning("last step not rebuilt; publishing the RFQ as it is", cause),
        asItIs(value, state, seq)
      )
    )
  )

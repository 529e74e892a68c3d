import { Clock, Context, Effect, Fiber, Layer, Option } from "effect"
import { Mmp } from "../mmp/Mmp.js"
import { closeStaleQuotes } from "../mmp/MmpEnforcer.js"
import { inheritedStep } from "../rfq/InheritedStep.js"
import { RfqActors } from "../rfq/RfqActors.js"
import { RfqStore } from "../rfq/RfqStore.js"
import { Events, STEP_DEDUPE_WINDOW_MS } from "../services/Events.js"
import { ActiveQuotes } from "./ActiveQuotes.js"
import { ActorAccess } from "./ActorAccess.js"
import { Ownership } from "./Ownership.js"

export interface RecoveryService {
  /** Live RFQs found in storage at start. */
  readonly restored: number
  /** Of those, the ones caught mid-settlement and reconciled with their venue. */
  readonly reconciled: number
  /**
   * Takes over the live RFQs `which` accepts (the shards this engine just acquired): the same
   * steps as the start, for those RFQs only. Answers how many were live and how many reconciled.
   */
  readonly adopt: (
    which: (rfqId: number) => boolean
  ) => Effect.Effect<{ readonly restored: number; readonly reconciled: number }>
  /**
   * Lets go of the RFQs `which` accepts (shards this engine lost): their actors and their quotes in
   * the active-quote index are forgotten. How many actors were.
   */
  readonly release: (which: (rfqId: number) => boolean) => Effect.Effect<number>
}

/**
 * The engine's start, and every take-over of RFQs from another engine: live RFQs back into memory,
 * those that expired meanwhile expired at once (before anyone can read or quote them), their active
 * quotes indexed (those a market-maker protection trip barred closed: its cancellations may have
 * been lost, `mmp/MmpEnforcer.ts#closeStaleQuotes`), the expiry timers of the open ones (and of
 * their quotes' `validUntil`) re-armed, and trades caught mid-settlement reconciled with the venue
 * by their idempotency keys. The start happens while the layer is built, so before any command
 * runs. An engine that shares ownership (several hosts) restores nothing at start: it adopts each
 * shard's RFQs when it acquires the shard (`cluster/ShardRecovery.ts`), each RFQ's last step
 * published again first, as a dead owner may have left it unpublished (`rfq/InheritedStep.ts`),
 * and so is the closing step of each of the shard's RFQs that closed within the last two minutes,
 * and the deletion of each deleted within them.
 */
export class Recovery extends Context.Tag("rfq/Recovery")<Recovery, RecoveryService>() {}

const make = Effect.gen(function* () {
  const store = yield* RfqStore
  const actors = yield* RfqActors
  const access = yield* ActorAccess
  const index = yield* ActiveQuotes
  const ownership = yield* Ownership
  const mmp = yield* Mmp
  const events = yield* Events

  /**
   * The closing step of each RFQ `which` accepts that closed within the stream's duplicate window,
   * published again, and the delete step of each deleted within it: a dead owner may have answered
   * a fill, a cancel, an expiry or a delete and died before that step reached the stream, and no
   * live actor is restored for a closed RFQ. Within the window the stream keeps one copy, so one
   * that did arrive is not heard twice.
   */
  const closingStepsAgain = (which: (rfqId: number) => boolean, flushing: Array<Effect.Effect<void>>) =>
    Effect.gen(function* () {
      const since = (yield* Clock.currentTimeMillis) - STEP_DEDUPE_WINDOW_MS
      const ids = (yield* store.closedSince(since)).filter((id) => which(id) && !actors.live.has(id))
      // After a busy two minutes these are many: a load each, overlapped.
      yield* Effect.forEach(
        ids,
        (rfqId) =>
          Effect.flatMap(actors.actorOf(rfqId), (found) =>
            Option.isSome(found)
              ? found.value.mailbox.run(
                  Effect.map(actors.startFlush(found.value), (rest) => {
                    flushing.push(rest)
                  })
                )
              : Effect.void
          ),
        { concurrency: 16, discard: true }
      )
      // A deleted RFQ has no actor to load (every read and command answers "rfq not found"): its
      // delete step is rebuilt from the event log and published as the RFQ's inheritance would be.
      const deleted = (yield* store.deletedSince(since)).filter((stored) => which(stored.state.rfq.id))
      for (const stored of deleted) {
        const publishing = inheritedStep(store, events, stored.value, stored.state, stored.seq)
        flushing.push(Fiber.join(yield* Effect.forkDaemon(publishing)))
      }
    })

  const adopt = (which: (rfqId: number) => boolean) =>
    Effect.gen(function* () {
      const adopted = yield* actors.restoreLive(which)
      // Each RFQ's last step published again (a dead owner may have left it unpublished:
      // `rfq/InheritedStep.ts`), all at once, waited for together at the end.
      const flushing: Array<Effect.Effect<void>> = []
      for (const actor of adopted) {
        yield* actor.mailbox.run(
          Effect.flatMap(actors.startFlush(actor), (rest) => {
            flushing.push(rest)
            return actors.expireIfDue(actor)
          })
        )
        yield* index.reindex(actor.state.rfq.id, actor.state.quotes)
        // Quotes a trip barred whose cancellation was lost (a crash, a missed notice) close now.
        yield* actor.mailbox
          .run(closeStaleQuotes(mmp, access, actor))
          .pipe(Effect.catchAllCause((cause) => Effect.logWarning("mmp: stale quotes not closed", cause)))
        if (actor.value === "open") {
          yield* access.scheduleExpiry(actor.state.rfq.id, actor.state.rfq.expiresAt)
          // Quote expiry (issue 16): each active quote's `validUntil` on the same timer.
          for (const quote of Object.values(actor.state.quotes)) {
            if (quote.validUntil !== undefined)
              yield* access.scheduleExpiry(actor.state.rfq.id, quote.validUntil)
          }
        }
      }
      const settling = adopted.filter((a) => a.value === "settling")
      for (const actor of settling) yield* actor.mailbox.run(access.finishSettlement(actor))
      if (ownership.shared) yield* closingStepsAgain(which, flushing)
      yield* Effect.all(flushing, { concurrency: "unbounded", discard: true })
      return { restored: adopted.length, reconciled: settling.length }
    })

  const atStart = ownership.shared ? { restored: 0, reconciled: 0 } : yield* adopt(() => true)
  const release = (which: (rfqId: number) => boolean) =>
    Effect.zipLeft(
      Effect.sync(() => actors.forget(which)),
      index.release(which)
    )
  const service: RecoveryService = { ...atStart, adopt, release }
  return service
})

export const RecoveryLive: Layer.Layer<
  Recovery,
  never,
  RfqStore | RfqActors | ActorAccess | ActiveQuotes | Ownership | Mmp | Events
> = Layer.effect(Recovery, make)

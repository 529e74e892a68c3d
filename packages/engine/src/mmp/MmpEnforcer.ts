import { Clock, Effect, Layer, Queue } from "effect"
import type { BaseCurrency } from "../domain/Primitives.js"
import { ActiveQuotes } from "../engine/ActiveQuotes.js"
import { ActorAccess } from "../engine/ActorAccess.js"
import { Ownership } from "../engine/Ownership.js"
import { MmpNotices } from "./MmpNotices.js"

/**
 * A trip's cancellations: on every host, when a desk trips in a currency, each of the desk's active
 * quotes on the RFQs this host owns in that currency is cancelled, RFQ by RFQ in its own mailbox
 * (the `rfq_quote.*` channels say so, as for a cancel). They run after the freeze is committed and
 * never inside the tripping accept (which holds its own RFQ's mailbox): waiting there for other
 * RFQs' mailboxes could deadlock against accepts on them. Nothing can fill or be put meanwhile: a
 * fill of the desk in that currency is refused under the desk's lock, and a quote put is refused
 * once the host knows of the freeze (this host at once; the others when the notice arrives, which
 * is also when they cancel). A quote put just before is cancelled here, since this pass takes each
 * RFQ's mailbox after it. The accepted quote's own RFQ closes its other quotes in the accept itself.
 */
export const cancelTrippedQuotes = (deskId: number, baseCurrency: BaseCurrency) =>
  Effect.gen(function* () {
    const index = yield* ActiveQuotes
    const access = yield* ActorAccess
    const ownership = yield* Ownership
    const rfqIds = new Set((yield* index.ofDesk(deskId)).map((q) => q.rfqId))
    let cancelled = 0
    for (const rfqId of rfqIds) {
      if (!ownership.owns(rfqId)) continue
      cancelled += yield* access
        .withActor(rfqId, (actor) =>
          Effect.gen(function* () {
            if (actor.value !== "open" || actor.state.rfq.baseCurrency !== baseCurrency) return 0
            const ids = Object.values(actor.state.quotes)
              .filter((q) => q.makerDeskId === deskId)
              .map((q) => q.id)
            if (ids.length === 0) return 0
            yield* access.step(actor, {
              type: "QUOTE.CLOSE",
              quoteIds: ids,
              status: "cancelled",
              now: yield* Clock.currentTimeMillis
            })
            return ids.length
          })
        )
        .pipe(Effect.catchAll(() => Effect.succeed(0)))
    }
    return cancelled
  })

/** Listens for trips for as long as the engine runs (its scope). */
export const MmpEnforcerLive: Layer.Layer<never, never, MmpNotices | ActiveQuotes | ActorAccess | Ownership> =
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const notices = yield* MmpNotices
      const context = yield* Effect.context<ActiveQuotes | ActorAccess | Ownership>()
      const heard = yield* notices.subscribe
      yield* Queue.take(heard).pipe(
        Effect.flatMap((notice) =>
          notice.event === "tripped"
            ? cancelTrippedQuotes(notice.deskId, notice.baseCurrency).pipe(
                Effect.provide(context),
                Effect.tap((n) =>
                  Effect.logInfo("mmp trip: quotes cancelled").pipe(
                    Effect.annotateLogs({
                      deskId: notice.deskId,
                      baseCurrency: notice.baseCurrency,
                      cancelled: n
                    })
                  )
                ),
                Effect.catchAllCause((cause) => Effect.logError("mmp trip: cancelling quotes failed", cause))
              )
            : Effect.void
        ),
        Effect.forever,
        Effect.forkScoped
      )
    })
  )

import { Clock, Effect, Layer, Queue } from "effect"
import { ActiveQuotes } from "../engine/ActiveQuotes.js"
import { ActorAccess, type ActorAccessService } from "../engine/ActorAccess.js"
import { Ownership } from "../engine/Ownership.js"
import type { RfqActor } from "../rfq/RfqActors.js"
import type { QuoteRecord } from "../rfq/RfqRecord.js"
import { Mmp, type MmpService } from "./Mmp.js"
import { type MmpNotice, MmpNotices } from "./MmpNotices.js"
import { fillBarred, type MmpState, staleBeforeOfTrip } from "./MmpRules.js"

/**
 * Closes `cancelled`, in one step of the RFQ (the caller holds its mailbox), the quotes of `quotes`
 * whose fills the desk's protection bars at `now` (`MmpRules.ts#fillBarred`); `stateOf` gives the
 * state of a desk in the RFQ's currency. The `rfq_quote.*` channels say so, as for a cancel.
 */
const closeBarred = (
  access: ActorAccessService,
  actor: RfqActor,
  quotes: ReadonlyArray<QuoteRecord>,
  stateOf: (deskId: number) => Effect.Effect<MmpState | undefined>
) =>
  Effect.gen(function* () {
    if (actor.value !== "open" || quotes.length === 0) return 0
    const now = yield* Clock.currentTimeMillis
    const barred: Array<number> = []
    for (const deskId of new Set(quotes.map((q) => q.makerDeskId))) {
      const state = yield* stateOf(deskId)
      if (state === undefined) continue
      for (const q of quotes)
        if (q.makerDeskId === deskId && fillBarred(state, q.updatedAt, now)) barred.push(q.id)
    }
    if (barred.length === 0) return 0
    yield* access.step(actor, { type: "QUOTE.CLOSE", quoteIds: barred, status: "cancelled", now })
    return barred.length
  })

/**
 * At a restore or a take-over (`engine/Recovery.ts`), with the RFQ's mailbox held: closes the
 * quotes a trip barred that are still active, because the host crashed between the trip's commit
 * and its cancellations, or missed the trip's notice. The fill of such a quote is refused anyway
 * under the desk's lock; this keeps the taker's book and the channels true. Desks without
 * protection cost no SQL beyond the config cache.
 */
export const closeStaleQuotes = (mmp: MmpService, access: ActorAccessService, actor: RfqActor) =>
  closeBarred(access, actor, Object.values(actor.state.quotes), (deskId) =>
    Effect.map(mmp.protection(deskId, false), (configs) =>
      configs.find((c) => c.baseCurrency === actor.state.rfq.baseCurrency)
    )
  )

/**
 * A trip's cancellations: on every host, when a desk trips in a currency, each of the desk's quotes
 * on the RFQs this host owns in that currency that the trip bars is cancelled, RFQ by RFQ in its
 * own mailbox. They run after the freeze is committed and never inside the tripping accept (which
 * holds its own RFQ's mailbox): waiting there for other RFQs' mailboxes could deadlock against
 * accepts on them. Nothing can fill or be put meanwhile: a fill of the desk in that currency is
 * refused under the desk's lock, and a quote put is refused once the host knows of the freeze (this
 * host at once; the others when the notice arrives, which is also when they cancel). A quote put
 * just before is cancelled here, since this pass takes each RFQ's mailbox after it. The accepted
 * quote's own RFQ closes its other quotes in the accept itself. Which quotes: those the desk's
 * state read now from storage bars (a notice heard late, after a reset, spares the quotes put
 * since); the notice's own trip when the config is gone. A lost notice leaves the quotes to the
 * next restore or take-over (`closeStaleQuotes`); their fills are refused meanwhile.
 */
export const cancelTrippedQuotes = (trip: Extract<MmpNotice, { event: "tripped" }>) =>
  Effect.gen(function* () {
    const index = yield* ActiveQuotes
    const access = yield* ActorAccess
    const ownership = yield* Ownership
    const mmp = yield* Mmp
    const { deskId, baseCurrency } = trip
    const stored = (yield* mmp.protection(deskId, true)).find((c) => c.baseCurrency === baseCurrency)
    const state: MmpState = stored ?? {
      frozenAt: trip.at,
      frozenUntil: trip.frozenUntil,
      clearedThrough: 0,
      staleBefore: staleBeforeOfTrip(trip.at, trip.at, trip.frozenUntil)
    }
    const rfqIds = new Set((yield* index.ofDesk(deskId)).map((q) => q.rfqId))
    let cancelled = 0
    for (const rfqId of rfqIds) {
      if (!ownership.owns(rfqId)) continue
      cancelled += yield* access
        .withActor(rfqId, (actor) =>
          actor.state.rfq.baseCurrency !== baseCurrency
            ? Effect.succeed(0)
            : closeBarred(
                access,
                actor,
                Object.values(actor.state.quotes).filter((q) => q.makerDeskId === deskId),
                () => Effect.succeed(state)
              )
        )
        .pipe(Effect.catchAll(() => Effect.succeed(0)))
    }
    return cancelled
  })

/** Listens for trips for as long as the engine runs (its scope). */
export const MmpEnforcerLive: Layer.Layer<
  never,
  never,
  Mmp | MmpNotices | ActiveQuotes | ActorAccess | Ownership
> = Layer.scopedDiscard(
  Effect.gen(function* () {
    const notices = yield* MmpNotices
    const context = yield* Effect.context<Mmp | ActiveQuotes | ActorAccess | Ownership>()
    const heard = yield* notices.subscribe
    yield* Queue.take(heard).pipe(
      Effect.flatMap((notice) =>
        notice.event === "tripped"
          ? cancelTrippedQuotes(notice).pipe(
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

import { Clock, Context, Effect, Layer, Option } from "effect"
import type { AccountStore } from "../accounts/AccountStore.js"
import { type ApiError, apiError } from "../domain/Errors.js"
import { isPastExpiry } from "../rfq/Expiry.js"
import { Mmp } from "../mmp/Mmp.js"
import { makeExpiryScheduler } from "../rfq/ExpiryScheduler.js"
import { hasDueQuote } from "../rfq/QuoteExpiry.js"
import { RfqActor, RfqActors, type StepFailure } from "../rfq/RfqActors.js"
import { type RfqEvent, step as stepMachine } from "../rfq/RfqMachine.js"
import type { Caller } from "../rfq/RfqRecord.js"
import { canSee } from "../rfq/Visibility.js"
import type { Pricing } from "../services/Pricing.js"
import type { Venues } from "../services/Venues.js"
import { ActiveQuotes } from "./ActiveQuotes.js"
import { Ownership } from "./Ownership.js"
import { finishTrade } from "./Settlement.js"

/**
 * Another engine's RFQ read fresh from storage, as its owner is about to make it: one past its
 * expiry shows expired (the owner's timer fires at that instant), without this engine writing.
 */
const projectExpiry = (actor: RfqActor, at: number): RfqActor => {
  const due = isPastExpiry(actor.state, at)
    ? "EXPIRE"
    : hasDueQuote(actor.state, at)
      ? "QUOTE.EXPIRE"
      : undefined
  if (due === undefined) return actor
  const { next, changed } = stepMachine(actor.snapshot, { type: due, now: at })
  return changed ? new RfqActor(next, actor.seq + 1) : actor
}

/** Whether a read of the RFQ must first let its mailbox expire it or some of its quotes. */
const hasDue = (actor: RfqActor, at: number): boolean =>
  actor.value === "open" && (isPastExpiry(actor.state, at) || hasDueQuote(actor.state, at))

/** What a command's body may use inside an RFQ's mailbox besides the actor. */
export type ActorServices = AccountStore | Venues | Pricing

/** How soon an RFQ left unsettled (a write in doubt, a settlement cut off) is looked at again. */
const UNSETTLED_RETRY_MS = 1000

/**
 * How every command and read reaches an RFQ's actor. Each access runs in the RFQ's mailbox, keeps
 * the active-quote index in step with the actor, finishes first a settlement an earlier command
 * left unfinished, and arranges another look at an RFQ it leaves unsettled. That second look runs
 * on the expiry timer, whose firing is itself an access, so the timer lives here too.
 */
export interface ActorAccessService {
  /**
   * Steps the actor (the caller holds its mailbox) and re-reads its quotes into the index. A quote
   * put fails with `LabelTaken` when storage refused it (see `RfqActors.commit`).
   */
  readonly step: <E extends RfqEvent>(actor: RfqActor, event: E) => Effect.Effect<boolean, StepFailure<E>>
  /**
   * Runs `body` in the RFQ's mailbox (see `RfqActors.withActor`), then re-reads the index: the
   * mailbox may have expired the RFQ first. An RFQ found settling inside its mailbox is a
   * settlement a command left unfinished (a write or a venue call that failed, the database
   * stalled): it is finished first, by the venue's idempotency keys, so no block trade runs twice.
   * One still unsettled afterwards (in doubt, or settling) is looked at again shortly, whether or
   * not a client comes back to it.
   */
  readonly withActor: <A>(
    rfqId: number,
    body: (actor: RfqActor) => Effect.Effect<A, ApiError>
  ) => Effect.Effect<A, ApiError>
  /** `withActor` for a caller: `rfq not found` unless the caller may see the RFQ. */
  readonly visibleActor: <A>(
    caller: Caller,
    rfqId: number,
    body: (actor: RfqActor) => Effect.Effect<A, ApiError, ActorServices>
  ) => Effect.Effect<A, ApiError>
  /**
   * The actor of an RFQ for a read; one past its expiry is expired first, so no read shows it open,
   * and one in doubt is reloaded first (in its mailbox), so a read never shows an unsettled write.
   */
  readonly readActor: (rfqId: number) => Effect.Effect<Option.Option<RfqActor>>
  /**
   * What `readActor` would answer when it can answer without any effect: the RFQ owned here, in
   * memory, not in doubt and not open past its expiry. Undefined otherwise (then `readActor`).
   */
  readonly peekReadable: (rfqId: number, at: number) => RfqActor | undefined
  /** Settles the trade of an RFQ left settling (the caller holds its mailbox). */
  readonly finishSettlement: (actor: RfqActor) => Effect.Effect<void>
  /**
   * Arms the RFQ's expiry: at `expiresAt` its mailbox expires it unless it closed before. The same
   * timer expires its quotes at their `validUntil` (armed by `step` when a quote is stored).
   */
  readonly scheduleExpiry: (rfqId: number, expiresAt: number) => Effect.Effect<void>
}

export class ActorAccess extends Context.Tag("rfq/ActorAccess")<ActorAccess, ActorAccessService>() {}

const make = Effect.gen(function* () {
  const actors = yield* RfqActors
  const index = yield* ActiveQuotes
  const ownership = yield* Ownership
  const mmp = yield* Mmp
  const context = yield* Effect.context<ActorServices>()
  const now = () => Clock.currentTimeMillis

  const reindex = (actor: RfqActor) =>
    Effect.suspend(() => index.reindex(actor.state.rfq.id, actor.state.quotes))

  // A quote stored with a `validUntil` gets its timer on the RFQ's expiry scheduler: at that
  // instant the mailbox expires it (`RfqActors.expireIfDue`), whatever else is pending.
  const armValidUntil = (rfqId: number, event: RfqEvent, changed: boolean): Effect.Effect<void> =>
    changed && event.type === "QUOTE.PUT" && event.candidate.quote.validUntil !== undefined
      ? scheduler.schedule(rfqId, event.candidate.quote.validUntil)
      : Effect.void

  const step = <E extends RfqEvent>(actor: RfqActor, event: E) =>
    Effect.tap(Effect.zipLeft(actors.commit(actor, event), reindex(actor)), (changed) =>
      armValidUntil(actor.state.rfq.id, event, changed)
    )

  const finishSettlement = (actor: RfqActor): Effect.Effect<void> =>
    actor.value === "settling"
      ? Effect.gen(function* () {
          const settled = yield* finishTrade(actor.state, now)
          if (settled === undefined) return
          yield* step(actor, { type: "SETTLED", trade: settled, now: yield* now() })
          // The maker's protection counts what the fill traded (nothing if it failed wholly).
          yield* mmp.settleFill(settled, actor.state.rfq.baseCurrency)
        }).pipe(Effect.provide(context), Effect.orDie)
      : Effect.void

  const withActor = <A>(
    rfqId: number,
    body: (actor: RfqActor) => Effect.Effect<A, ApiError>
  ): Effect.Effect<A, ApiError> =>
    actors
      .withActor(rfqId, (actor) =>
        Effect.ensuring(Effect.zipRight(finishSettlement(actor), body(actor)), reindex(actor))
      )
      .pipe(
        Effect.ensuring(Effect.suspend(() => (actors.unsettled(rfqId) ? retryLater(rfqId) : Effect.void)))
      )

  // The expiry scheduler doubles as the timer of these second looks.
  const retriesDue = new Set<number>()
  const retryLater = (rfqId: number): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (retriesDue.has(rfqId)) return Effect.void
      retriesDue.add(rfqId)
      return Effect.flatMap(now(), (at) => scheduler.schedule(rfqId, at + UNSETTLED_RETRY_MS))
    })
  const scheduler = yield* makeExpiryScheduler((rfqId) =>
    Effect.suspend(() => {
      retriesDue.delete(rfqId)
      // An RFQ whose ownership moved is the new owner's to expire (it re-armed its own timer).
      return ownership.owns(rfqId) ? withActor(rfqId, () => Effect.void) : Effect.void
    }).pipe(
      Effect.catchAll(() => Effect.void),
      Effect.catchAllDefect((d) => Effect.logError("expiry failed", d))
    )
  )

  const visibleActor = <A>(
    caller: Caller,
    rfqId: number,
    body: (actor: RfqActor) => Effect.Effect<A, ApiError, ActorServices>
  ) =>
    withActor(rfqId, (actor) =>
      canSee(actor.state.rfq, caller)
        ? body(actor).pipe(Effect.provide(context))
        : Effect.fail(apiError("rfqNotFound"))
    )

  const readActor = (rfqId: number) =>
    Effect.flatMap(actors.actorOf(rfqId), (found) =>
      Option.isSome(found) && (found.value.value === "open" || found.value.doubt)
        ? Effect.flatMap(now(), (at) =>
            !ownership.owns(rfqId)
              ? Effect.succeed(Option.some(projectExpiry(found.value, at)))
              : found.value.doubt || hasDue(found.value, at)
                ? withActor(rfqId, () => Effect.void).pipe(Effect.ignore, Effect.as(found))
                : Effect.succeed(found)
          )
        : Effect.succeed(found)
    )

  const peekReadable = (rfqId: number, at: number): RfqActor | undefined => {
    const actor = actors.peek(rfqId)
    if (actor === undefined || actor.doubt) return undefined
    return hasDue(actor, at) ? undefined : actor
  }

  const service: ActorAccessService = {
    step,
    withActor,
    visibleActor,
    readActor,
    peekReadable,
    finishSettlement,
    scheduleExpiry: scheduler.schedule
  }
  return service
})

/** Stops the expiry timer when its scope closes. */
export const ActorAccessLive: Layer.Layer<
  ActorAccess,
  never,
  RfqActors | ActiveQuotes | Ownership | Mmp | ActorServices
> = Layer.scoped(ActorAccess, make)

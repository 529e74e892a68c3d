import { Cause, Clock, Context, Deferred, Effect, Fiber, FiberId, Layer, Option } from "effect"
import { type ApiError, apiError } from "../domain/Errors.js"
import { Ownership } from "../engine/Ownership.js"
import { type EngineEvent, Events, type Unpublished } from "../services/Events.js"
import { waitSpan } from "../services/WaitProbe.js"
import { isPastExpiry } from "./Expiry.js"
import { hasDueQuote } from "./QuoteExpiry.js"
import {
  type RfqEvent,
  type RfqSnapshot,
  type RfqStateValue,
  restoreSnapshot,
  stateOf,
  step
} from "./RfqMachine.js"
import type { RfqState } from "./RfqRecord.js"
import { Mailbox } from "./Mailbox.js"
import { type LabelTaken, RfqStore, type StoredRfq } from "./RfqStore.js"
import { inheritedStep, inherits } from "./InheritedStep.js"
import { eventsOf, viewOf } from "./StepEvents.js"

/*
 * The closed-actor cache below is ours, not Effect's `Cache`, because `Cache` does another job:
 * - it remembers every lookup outcome for at least a clock millisecond (for ever under a frozen
 *   TestClock), misses and failures too, while a miss here must not be remembered: an RFQ whose
 *   insert was in doubt may be found in storage a moment later, and its expiry must still load it;
 * - a lookup here lands in one of two places: a live RFQ in the live registry, a closed one in the
 *   cache; `Cache` keeps whatever its lookup returns;
 * - `unsettled` peeks at it synchronously after every command; `Cache` only answers in an Effect;
 * - a hit (a read of a closed RFQ from memory, a hot path) costs about 1.2 µs through `Cache.get`
 *   against 0.2 µs here (10 000 entries, measured on this machine).
 * What it shares with `Cache`: a bound on its size, and one load per id at a time.
 */

/**
 * The RFQ actors: one per live RFQ, each a machine snapshot behind a mailbox of one. Every command
 * on an RFQ runs inside its actor's mailbox, so two accepts, an accept and a cancel, an accept and a
 * quote update or an accept and the expiry never interleave. A step is committed to storage before
 * the actor's snapshot moves and before anyone hears of it.
 *
 * Live RFQs (open, or caught mid-settlement by a crash) are kept in memory and restored from
 * storage at start; a closed RFQ gets an actor only when asked for, loaded from storage.
 *
 * A step whose write did not succeed (the database stalled past the statement deadline, the
 * connection broke, the fiber was interrupted) may still have committed, or commit later. Its actor
 * is then in *doubt*: its snapshot is not trusted, and before its next command (or read) it is
 * reloaded from storage, whose answer is final by then (the PostgreSQL client fences abandoned
 * statements before it runs another one; PGlite never abandons one). So memory never runs ahead of,
 * or behind, what is stored.
 */
export class RfqActor {
  readonly mailbox = new Mailbox()
  /** The last step's write may or may not have committed: reload before trusting the snapshot. */
  doubt = false
  /** What is left of the last step's publication; the next step waits for it (`Events.publishStep`). */
  unpublished: Unpublished = undefined
  constructor(
    public snapshot: RfqSnapshot,
    public seq: number
  ) {}
  get value(): RfqStateValue {
    return stateOf(this.snapshot)
  }
  get state(): RfqState {
    return this.snapshot.context
  }
}

/** What committing `event` can fail with: a quote put, with its label taken (`LabelTaken`). */
export type StepFailure<E extends RfqEvent> = E extends { readonly type: "QUOTE.PUT" } ? LabelTaken : never

export interface RfqActorsService {
  /** Live RFQs held in memory (open or settling), by id. */
  readonly live: ReadonlyMap<number, RfqActor>
  /** The actor of an RFQ: live, cached, or loaded from storage. */
  readonly actorOf: (rfqId: number) => Effect.Effect<Option.Option<RfqActor>>
  /**
   * The actor of an RFQ this engine owns when it is already in memory (live or cached), else
   * undefined: no load, no effect. For reads answered synchronously (`RfqQueries.peekRfq`).
   */
  readonly peek: (rfqId: number) => RfqActor | undefined
  /**
   * Steps `actor` with `event` inside its mailbox (the caller holds it): commits the step, moves the
   * snapshot, publishes. Returns false, changing nothing, when the machine refused the event. A
   * quote put fails with `LabelTaken` when storage refused it (nothing written, no doubt).
   */
  readonly commit: <E extends RfqEvent>(actor: RfqActor, event: E) => Effect.Effect<boolean, StepFailure<E>>
  /**
   * Runs `body` in the RFQ's mailbox. `rfq not found` when the RFQ does not exist or was deleted.
   * Visibility is the body's business (it knows the caller).
   */
  readonly withActor: <A>(
    rfqId: number,
    body: (actor: RfqActor) => Effect.Effect<A, ApiError>
  ) => Effect.Effect<A, ApiError>
  /**
   * Whether the RFQ needs another look once the database answers: its actor is in doubt, or was
   * left mid-settlement by a command that did not finish (found so outside a command).
   */
  readonly unsettled: (rfqId: number) => boolean
  /** The actor of a newly created (open) RFQ. */
  readonly register: (state: RfqState) => RfqActor
  /**
   * Loads the live RFQs from storage into memory (only those `which` accepts, all by default); an
   * RFQ already in memory keeps its actor. Answers the actors of the RFQs loaded or found.
   */
  readonly restoreLive: (which?: (rfqId: number) => boolean) => Effect.Effect<ReadonlyArray<RfqActor>>
  /** Forgets the actors of the RFQs `which` accepts (their ownership moved to another engine). */
  readonly forget: (which: (rfqId: number) => boolean) => number
  /**
   * Expires the RFQ first when its time has passed, else its quotes past their `validUntil`: the
   * expiry wins over whatever came later.
   */
  readonly expireIfDue: (actor: RfqActor) => Effect.Effect<void>
  /**
   * Starts what is left of the actor's last step's publication without waiting for it (the caller
   * holds its mailbox): for an actor restored from storage with other engines about, that step
   * published again (`InheritedStep.ts`). The actor's next step still waits for it. Answers what
   * waits for it: a take-over starts every RFQ's, then waits for all of them together, so a stream
   * that does not answer costs it one publish deadline, not one per RFQ.
   */
  readonly startFlush: (actor: RfqActor) => Effect.Effect<Effect.Effect<void>>
  /**
   * Publishes a step `actor` just took outside `commit` (its creation), as `commit` does: this
   * host's subscribers at once, the rest before the actor's next step.
   */
  readonly announce: (actor: RfqActor, events: ReadonlyArray<EngineEvent>) => Effect.Effect<void>
}

const mailboxSpan = waitSpan("RfqActors.mailbox")
const commandSpan = waitSpan("RfqActors.command")

export class RfqActors extends Context.Tag("rfq/RfqActors")<RfqActors, RfqActorsService>() {}

const make = Effect.gen(function* () {
  const store = yield* RfqStore
  const events = yield* Events
  const ownership = yield* Ownership
  const live = new Map<number, RfqActor>()
  const clock = yield* Effect.clock

  // With other engines about, a restored actor inherits its last step's publication (`InheritedStep.ts`).
  const restore = (stored: StoredRfq) => {
    const actor = new RfqActor(restoreSnapshot(stored.value, stored.state), stored.seq)
    if (ownership.shared && inherits(stored, clock.unsafeCurrentTimeMillis()))
      actor.unpublished = inheritedStep(store, events, stored.value, stored.state, stored.seq)
    return actor
  }

  // Closed RFQs get an actor on demand, kept in a bounded cache; loads of one id are shared so two
  // concurrent commands on a closed RFQ still meet in one mailbox.
  const closed = new Map<number, RfqActor>()
  const loading = new Map<number, Deferred.Deferred<Option.Option<RfqActor>>>()
  const closedCacheSize = 10_000

  const remember = (actor: RfqActor) => {
    closed.set(actor.state.rfq.id, actor)
    if (closed.size > closedCacheSize) closed.delete(closed.keys().next().value!)
  }

  const actorOf = (rfqId: number): Effect.Effect<Option.Option<RfqActor>> =>
    Effect.suspend(() => {
      const actor = live.get(rfqId) ?? closed.get(rfqId)
      if (actor !== undefined) return Effect.succeed(Option.some(actor))
      // Another engine's RFQ: read as it is now, kept nowhere (see `Ownership`).
      if (!ownership.owns(rfqId)) return Effect.map(store.load(rfqId), Option.map(restore))
      const pending = loading.get(rfqId)
      if (pending !== undefined) return Deferred.await(pending)
      const deferred = Deferred.unsafeMake<Option.Option<RfqActor>>(FiberId.none)
      loading.set(rfqId, deferred)
      return store.load(rfqId).pipe(
        Effect.map(
          Option.map((stored) => {
            const restored = restore(stored)
            if (stored.value === "open" || stored.value === "settling") live.set(rfqId, restored)
            else remember(restored)
            return restored
          })
        ),
        Effect.exit,
        Effect.tap((exit) => Deferred.done(deferred, exit)),
        // A load interrupted mid-way (its request timed out) must not leave the others waiting.
        Effect.onInterrupt(() => Deferred.interrupt(deferred)),
        Effect.ensuring(Effect.sync(() => loading.delete(rfqId))),
        Effect.flatten
      )
    })

  /**
   * Waits for what is left of the actor's last step's publication: a step reaches the stream only
   * after the one before it did (or gave up), and at most an RFQ's last step is ever still on its way,
   * which a take-over publishes again (`Recovery.ts`).
   */
  const published = (actor: RfqActor): Effect.Effect<void> => {
    const pending = actor.unpublished
    if (pending === undefined) return Effect.void
    return Effect.tap(pending, () => {
      if (actor.unpublished === pending) actor.unpublished = undefined
    })
  }

  const startFlush = (actor: RfqActor): Effect.Effect<Effect.Effect<void>> =>
    Effect.suspend(() => {
      const pending = actor.unpublished
      if (pending === undefined) return Effect.succeed(Effect.void)
      // A daemon: the publication ends by itself within the stream's publish deadline.
      return Effect.map(Effect.forkDaemon(pending), (fiber) => {
        const rest = Fiber.join(fiber)
        if (actor.unpublished === pending) actor.unpublished = rest
        return rest
      })
    })

  /** Hands a committed step's events on (`Events.publishStep`), keeping what is left on the actor. */
  const announce = (actor: RfqActor, stepEvents: ReadonlyArray<EngineEvent>): Effect.Effect<void> =>
    Effect.zipRight(
      published(actor),
      Effect.map(events.publishStep(stepEvents), (rest) => {
        actor.unpublished = rest
      })
    )

  // Every step of every command runs through here: plain composition, no generator.
  const commit = <E extends RfqEvent>(actor: RfqActor, event: E): Effect.Effect<boolean, StepFailure<E>> =>
    Effect.suspend(() => {
      const { next, effects, changed } = step(actor.snapshot, event)
      if (!changed) return Effect.succeed(false)
      const seq = actor.seq + 1
      const value = stateOf(next)
      const write = store.applyStep(actor.state.rfq.id, seq, event.type, value, effects)
      const written = (
        actor.unpublished === undefined ? write : Effect.zipRight(published(actor), write)
      ).pipe(
        Effect.onError((cause) =>
          Effect.sync(() => {
            // A refusal (`LabelTaken`) is storage's definite answer; anything else may have committed.
            if (Option.isNone(Cause.failureOption(cause))) actor.doubt = true
          })
        )
      )
      // Only a quote put stores a quote, so only it can find its label taken.
      const stored = event.type === "QUOTE.PUT" ? written : Effect.catchAll(written, Effect.die)
      return Effect.flatMap(stored, () => {
        actor.snapshot = next
        actor.seq = seq
        if (value !== "open" && value !== "settling" && live.delete(actor.state.rfq.id)) remember(actor)
        return Effect.as(announce(actor, eventsOf(value, next.context, seq, effects)), true)
      })
      // `LabelTaken` only from a quote put (the other events' failures died above): `StepFailure<E>`.
    }) as Effect.Effect<boolean, StepFailure<E>>

  /**
   * Replaces a doubtful actor's snapshot with what storage holds (the caller holds its mailbox).
   * When the doubtful step did commit, subscribers get the RFQ as it now is: the step's own events
   * were never published.
   */
  const resolve = (actor: RfqActor) =>
    Effect.gen(function* () {
      yield* published(actor)
      const rfqId = actor.state.rfq.id
      const stored = yield* store.load(rfqId)
      const before = actor.seq
      if (Option.isNone(stored)) {
        // Storage shows no deleted RFQ: the doubtful step was the deletion, and it committed.
        actor.snapshot = restoreSnapshot("deleted", actor.state)
        actor.seq = before + 1
      } else {
        actor.snapshot = restoreSnapshot(stored.value.value, stored.value.state)
        actor.seq = stored.value.seq
      }
      actor.doubt = false
      const value = actor.value
      if (value === "open" || value === "settling") live.set(rfqId, actor)
      else if (live.delete(rfqId)) remember(actor)
      if (actor.seq !== before) {
        yield* events.publish([
          {
            type: "rfq",
            event: value === "deleted" ? "deleted" : "updated",
            seq: actor.seq,
            view: viewOf(value, actor.state)
          }
        ])
      }
    })

  const unsettled = (rfqId: number): boolean => {
    const actor = live.get(rfqId) ?? closed.get(rfqId)
    return actor !== undefined && (actor.doubt || actor.value === "settling")
  }

  const expireIfDue = (actor: RfqActor): Effect.Effect<void> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      actor.value !== "open"
        ? Effect.void
        : isPastExpiry(actor.state, now)
          ? Effect.asVoid(commit(actor, { type: "EXPIRE", now }))
          : hasDueQuote(actor.state, now)
            ? Effect.asVoid(commit(actor, { type: "QUOTE.EXPIRE", now }))
            : Effect.void
    )

  const withActor = <A>(rfqId: number, body: (actor: RfqActor) => Effect.Effect<A, ApiError>) =>
    Effect.gen(function* () {
      const found = yield* actorOf(rfqId)
      if (Option.isNone(found)) return yield* Effect.fail(apiError("rfqNotFound"))
      const actor = found.value
      // Under a wait profile only (free otherwise): the mailbox span's own time is the wait for it.
      return yield* mailboxSpan(
        actor.mailbox.run(
          commandSpan(
            Effect.gen(function* () {
              if (actor.doubt) yield* resolve(actor)
              yield* expireIfDue(actor)
              if (actor.value === "deleted") return yield* Effect.fail(apiError("rfqNotFound"))
              return yield* body(actor)
            })
          )
        )
      )
    })

  const register = (state: RfqState) => {
    const actor = new RfqActor(restoreSnapshot("open", state), 1)
    live.set(state.rfq.id, actor)
    return actor
  }

  const restoreLive = (which?: (rfqId: number) => boolean) =>
    Effect.gen(function* () {
      const stored = yield* store.loadLive
      const restored: Array<RfqActor> = []
      for (const s of stored) {
        const id = s.state.rfq.id
        if (which !== undefined && !which(id)) continue
        let actor = live.get(id)
        if (actor === undefined) {
          actor = restore(s)
          live.set(id, actor)
        }
        restored.push(actor)
      }
      return restored
    })

  const forget = (which: (rfqId: number) => boolean) => {
    let count = 0
    for (const map of [live, closed])
      for (const id of [...map.keys()])
        if (which(id)) {
          map.delete(id)
          count++
        }
    return count
  }

  const service: RfqActorsService = {
    live,
    actorOf,
    peek: (rfqId) => (ownership.owns(rfqId) ? (live.get(rfqId) ?? closed.get(rfqId)) : undefined),
    commit,
    withActor,
    unsettled,
    register,
    restoreLive,
    forget,
    expireIfDue,
    startFlush,
    announce
  }
  return service
})

/** The actor registry over the RFQ store; the engine's services share one. */
export const RfqActorsLive: Layer.Layer<RfqActors, never, RfqStore | Events | Ownership> = Layer.effect(
  RfqActors,
  make
)

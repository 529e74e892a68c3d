import { Clock, Deferred, Effect, FiberId, Option } from "effect"
import { type ApiError, apiError } from "../domain/Errors.js"
import { type EngineEvent, Events } from "../services/Events.js"
import type { RfqState } from "./QuoteRules.js"
import {
  type RfqEffect,
  type RfqEvent,
  type RfqSnapshot,
  type RfqStateValue,
  publicStatus,
  restoreSnapshot,
  stateOf,
  step
} from "./RfqMachine.js"
import { RfqStore, type StoredRfq } from "./RfqStore.js"
import type { RfqView } from "./RfqView.js"

/**
 * The RFQ actors: one per live RFQ, each a machine snapshot behind a mailbox of one. Every command
 * on an RFQ runs inside its actor's mailbox, so two accepts, an accept and a cancel, an accept and a
 * quote update or an accept and the expiry never interleave. A step is committed to storage before
 * the actor's snapshot moves and before anyone hears of it.
 *
 * Closed RFQs need no actor: they are read from storage (see `view`). Live RFQs (open, or caught
 * mid-settlement by a crash) are kept in memory and restored from storage at start.
 *
 * A step whose write did not succeed (the database stalled past the statement deadline, the
 * connection broke, the fiber was interrupted) may still have committed, or commit later. Its actor
 * is then in *doubt*: its snapshot is not trusted, and before its next command (or read) it is
 * reloaded from storage, whose answer is final by then (the PostgreSQL client fences abandoned
 * statements before it runs another one; PGlite never abandons one). So memory never runs ahead of,
 * or behind, what is stored.
 */
export class RfqActor {
  readonly mailbox = Effect.unsafeMakeSemaphore(1)
  /** The last step's write may or may not have committed: reload before trusting the snapshot. */
  doubt = false
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

export const viewOf = (value: RfqStateValue, state: RfqState, extraQuotes?: RfqView["quotes"]): RfqView => {
  const status = publicStatus(value)
  return {
    rfq: state.rfq,
    status: status === "deleted" ? "cancelled" : status,
    quotes: extraQuotes ?? Object.values(state.quotes),
    // A trade still settling is not shown: its outcome (and filledAmount) is not known yet.
    trade: value === "settling" ? undefined : state.trade
  }
}

/** The engine events a committed step produces, rendered later per recipient. */
const eventsOf = (value: RfqStateValue, state: RfqState, seq: number, effects: ReadonlyArray<RfqEffect>) => {
  const view = viewOf(value, state)
  const out: Array<EngineEvent> = []
  let rfqChanged = false
  for (const e of effects) {
    switch (e.type) {
      case "quoteStored": {
        const p = e.params as { quote: RfqState["quotes"][number]; previous?: unknown }
        out.push({
          type: "quote",
          event: p.previous === undefined ? "created" : "updated",
          seq,
          view,
          quote: p.quote
        })
        break
      }
      case "quotesClosed": {
        const p = e.params as { closed: ReadonlyArray<{ quote: RfqState["quotes"][number]; status: string }> }
        for (const c of p.closed) {
          out.push({
            type: "quote",
            event: c.status === "filled" ? "updated" : "deleted",
            seq,
            view,
            quote: { ...c.quote, status: c.status as "filled" }
          })
        }
        break
      }
      case "rfqDeleted":
        out.push({ type: "rfq", event: "deleted", seq, view })
        break
      default:
        rfqChanged = true
    }
  }
  if (rfqChanged) out.push({ type: "rfq", event: "updated", seq, view })
  return out
}

export const makeRfqActors = Effect.gen(function* () {
  const store = yield* RfqStore
  const events = yield* Events
  const live = new Map<number, RfqActor>()

  const restore = (stored: StoredRfq) => new RfqActor(restoreSnapshot(stored.value, stored.state), stored.seq)

  // Closed RFQs get an actor on demand, kept in a bounded cache; loads of one id are shared so two
  // concurrent commands on a closed RFQ still meet in one mailbox.
  const closed = new Map<number, RfqActor>()
  const loading = new Map<number, Deferred.Deferred<Option.Option<RfqActor>>>()
  const closedCacheSize = 10_000

  const remember = (actor: RfqActor) => {
    closed.set(actor.state.rfq.id, actor)
    if (closed.size > closedCacheSize) closed.delete(closed.keys().next().value!)
  }

  /** The actor of an RFQ: live, cached, or loaded from storage. */
  const actorOf = (rfqId: number): Effect.Effect<Option.Option<RfqActor>> =>
    Effect.suspend(() => {
      const actor = live.get(rfqId) ?? closed.get(rfqId)
      if (actor !== undefined) return Effect.succeed(Option.some(actor))
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
        Effect.ensuring(Effect.sync(() => loading.delete(rfqId))),
        Effect.flatten
      )
    })

  /**
   * Steps `actor` with `event` inside its mailbox (the caller holds it): commits the step, moves the
   * snapshot, publishes. Returns false, changing nothing, when the machine refused the event.
   */
  const commit = (actor: RfqActor, event: RfqEvent): Effect.Effect<boolean> =>
    Effect.gen(function* () {
      const { next, effects, changed } = step(actor.snapshot, event)
      if (!changed) return false
      const seq = actor.seq + 1
      const value = stateOf(next)
      yield* store.applyStep(actor.state.rfq.id, seq, event.type, value, effects).pipe(
        Effect.onError(() =>
          Effect.sync(() => {
            actor.doubt = true
          })
        )
      )
      actor.snapshot = next
      actor.seq = seq
      if (value !== "open" && value !== "settling" && live.delete(actor.state.rfq.id)) remember(actor)
      yield* events.publish(eventsOf(value, next.context, seq, effects))
      return true
    })

  /**
   * Replaces a doubtful actor's snapshot with what storage holds (the caller holds its mailbox).
   * When the doubtful step did commit, subscribers get the RFQ as it now is: the step's own events
   * were never published.
   */
  const resolve = (actor: RfqActor) =>
    Effect.gen(function* () {
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

  /**
   * Whether the RFQ needs another look once the database answers: its actor is in doubt, or was
   * left mid-settlement by a command that did not finish (found so outside a command).
   */
  const unsettled = (rfqId: number): boolean => {
    const actor = live.get(rfqId) ?? closed.get(rfqId)
    return actor !== undefined && (actor.doubt || actor.value === "settling")
  }

  /** Expires the RFQ first when its time has passed: the expiry wins over whatever came later. */
  const expireIfDue = (actor: RfqActor) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      if (actor.value === "open" && now >= actor.state.rfq.expiresAt)
        yield* commit(actor, { type: "EXPIRE", now })
    })

  /**
   * Runs `body` in the RFQ's mailbox. `rfq not found` when the RFQ does not exist or was deleted.
   * Visibility is the body's business (it knows the caller).
   */
  const withActor = <A>(rfqId: number, body: (actor: RfqActor) => Effect.Effect<A, ApiError>) =>
    Effect.gen(function* () {
      const found = yield* actorOf(rfqId)
      if (Option.isNone(found)) return yield* Effect.fail(apiError("rfqNotFound"))
      const actor = found.value
      return yield* actor.mailbox.withPermits(1)(
        Effect.gen(function* () {
          if (actor.doubt) yield* resolve(actor)
          yield* expireIfDue(actor)
          if (actor.value === "deleted") return yield* Effect.fail(apiError("rfqNotFound"))
          return yield* body(actor)
        })
      )
    })

  const register = (state: RfqState) => {
    const actor = new RfqActor(restoreSnapshot("open", state), 1)
    live.set(state.rfq.id, actor)
    return actor
  }

  const restoreLive = Effect.gen(function* () {
    const stored = yield* store.loadLive
    for (const s of stored) live.set(s.state.rfq.id, restore(s))
    return stored.length
  })

  return {
    live,
    actorOf,
    commit,
    withActor,
    unsettled,
    register,
    restoreLive,
    expireIfDue,
    publish: events.publish,
    eventsOf
  }
})

export type RfqActors = Effect.Effect.Success<typeof makeRfqActors>

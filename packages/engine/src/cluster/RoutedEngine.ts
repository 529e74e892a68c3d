import { Sharding } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { Cause, Data, Duration, Effect, Layer, Option } from "effect"
import { ApiError, apiError } from "../domain/Errors.js"
import { ActiveQuotes } from "../engine/ActiveQuotes.js"
import { Engine, type EngineService } from "../engine/Engine.js"
import { Ownership } from "../engine/Ownership.js"
import type { Caller } from "../rfq/RfqRecord.js"
import { RfqStore } from "../rfq/RfqStore.js"
import { requestStartedAt, statementDeadlineOverride } from "../storage/StatementDeadline.js"
import { makeQuoteHomes } from "./QuoteHomes.js"
import { entityIdOf, RfqEntity } from "./RfqEntity.js"

/**
 * How long a forwarded call may wait for the RFQ's owner: longer than a take-over of a dead host's
 * shards (shard locks expire after 10 s), so a request sent during one is answered by the new owner.
 */
export const FORWARD_TIMEOUT_MS = 15_000

/** How many ids a create may skip looking for one of this host's shards. */
const OWN_ID_TRIES = 64

class ForwardFailed extends Data.TaggedError("ForwardFailed")<{ readonly cause: unknown }> {}

const outage = (cause: unknown, reason?: string) =>
  Effect.zipRight(
    Effect.logWarning("forwarding to the RFQ's owner failed", cause),
    Effect.fail(apiError("serviceUnavailable", reason))
  )

/** What a client hears when the owner answered a forwarded call with an interruption. */
export const OWNER_STOPPED = "the RFQ's owner stopped before answering; read before sending it again"

/** A socket error between runners (the platform's `SocketError`): the message never arrived. */
const isTransportDefect = (defect: unknown): boolean =>
  typeof defect === "object" &&
  defect !== null &&
  "_tag" in defect &&
  (defect._tag === "SocketError" || defect._tag === "RpcClientError")

/**
 * An entity's handler runs with no request's time budget: its fiber may have been started by a
 * request on this host (the budget lives in fiber refs, which forks inherit), and a later message
 * must not inherit that request's deadline. Each statement gets the default deadline.
 */
const asHandler = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  effect.pipe(
    Effect.locally(requestStartedAt, Option.none()),
    Effect.locally(statementDeadlineOverride, Option.none())
  )

/**
 * The engine of one host among several. A call on an RFQ runs where the RFQ's actor lives: here
 * when this host holds the RFQ's shard (no serialisation, no hop), else on the owner, as a message
 * to the RFQ's cluster entity (`RfqEntity.ts`), whose handler is the owner's own engine. Calls that
 * name a quote find its RFQ in this host's memory of quote homes (`QuoteHomes.ts`), else in
 * storage (then remembered); a create takes its id here and goes to the owner of that id. Lists,
 * accounts, instruments and bulk block trades need no owner and run here.
 *
 * Registering the handlers here too keeps the entity and its callers in one place: each host is
 * both (every host answers any request).
 */
const make = Effect.gen(function* () {
  const local = yield* Engine
  const sharding = yield* Sharding.Sharding
  const ownership = yield* Ownership
  const store = yield* RfqStore
  const index = yield* ActiveQuotes
  // Where each quote this host made or looked up lives: its commands route without a read.
  const homes = makeQuoteHomes()

  const handlers = RfqEntity.of({
    CreateRfq: ({ address, payload }) =>
      local.createRfq(payload.caller, payload.req, { id: Number(address.entityId) }),
    CancelRfq: ({ address, payload }) => local.cancelRfq(payload.caller, Number(address.entityId)),
    DeleteRfq: ({ address, payload }) => local.deleteRfq(payload.caller, Number(address.entityId)),
    GetRfq: ({ address, payload }) => local.getRfq(payload.caller, Number(address.entityId)),
    TakerQuotes: ({ address, payload }) => local.takerQuotes(payload.caller, Number(address.entityId)),
    LegPrices: ({ payload }) => local.legPrices(payload.caller, payload.req),
    CreateQuote: ({ payload }) => local.createQuote(payload.caller, payload.req),
    UpdateQuote: ({ payload }) => local.updateQuote(payload.caller, payload.req),
    DeleteQuote: ({ payload }) => local.deleteQuote(payload.caller, payload.req),
    CancelQuotes: ({ payload }) =>
      local.cancelAllQuotes(payload.caller, payload.req, { onlyUser: payload.onlyUser }),
    Trade: ({ payload }) => local.trade(payload.caller, payload.rfqQuoteId)
  })
  yield* sharding.registerEntity(
    RfqEntity,
    Effect.succeed(
      Object.fromEntries(
        Object.entries(handlers).map(([tag, handler]) => [
          tag,
          (envelope: never) =>
            Rpc.uninterruptible(
              asHandler((handler as (e: never) => Effect.Effect<unknown, unknown>)(envelope))
            )
        ])
      ) as unknown as typeof handlers
    ),
    // Each handler runs to its end even when the entity is stopped under it (`Rpc.uninterruptible`):
    // a shard lock refresh that fails or takes longer than its interval makes the cluster stop
    // every entity of the host at once, and a command cut there would answer an interruption
    // whatever it had committed. Run out, it answers what storage holds (the step's guard
    // refuses a stale write), and the stop waits for it: a command is bounded by its statements'
    // deadlines.
    // Reads need not wait behind writes: the actor's own mailbox orders what must be ordered. A
    // defect is answered to the caller (a 500, as on one host), never retried by the cluster: a
    // retried command could run twice.
    { concurrency: "unbounded", disableFatalDefects: true }
  )
  const client = yield* RfqEntity.client

  /** Runs `here` when this host owns the RFQ, else `there` on the owner's entity. */
  const routed = <A>(
    rfqId: number,
    here: Effect.Effect<A, ApiError>,
    there: (entity: ReturnType<typeof client>) => Effect.Effect<unknown, unknown>
  ): Effect.Effect<A, ApiError> =>
    ownership.owns(rfqId)
      ? here
      : (there(client(entityIdOf(rfqId))).pipe(
          Effect.timeoutFail({
            duration: Duration.millis(FORWARD_TIMEOUT_MS),
            onTimeout: () => new ForwardFailed({ cause: "no answer from the RFQ's owner" })
          }),
          // The cluster's own failures (its storage unreachable, the owner's socket reset while it
          // died) are an outage: 503, and the client tries again once a host has taken over.
          Effect.catchAll((error) => (error instanceof ApiError ? Effect.fail(error) : outage(error))),
          Effect.catchSomeDefect((defect) =>
            isTransportDefect(defect) ? Option.some(outage(defect)) : Option.none()
          ),
          // An interruption sent back by the owner (its entity stopped mid-call) is not this
          // request's: an outage, not a server shutting down. This fiber's own interruption (the
          // client left, this host stops) never reaches a handler.
          Effect.catchSomeCause((cause) =>
            Cause.isInterruptedOnly(cause) ? Option.some(outage(cause, OWNER_STOPPED)) : Option.none()
          )
        ) as Effect.Effect<A, ApiError>)

  /** The RFQ of a quote named by id or by the caller desk's label, if any is known. */
  const rfqOfQuote = (
    caller: Caller,
    ref: { readonly rfqQuoteId?: number | undefined; readonly label?: string | undefined }
  ) =>
    Effect.gen(function* () {
      if (ref.rfqQuoteId !== undefined) {
        const known = homes.rfqOf(ref.rfqQuoteId)
        if (known !== undefined) return Option.some(known)
        const found = yield* store.rfqOfQuote(ref.rfqQuoteId)
        if (Option.isSome(found)) {
          homes.remember(ref.rfqQuoteId, found.value)
          return found
        }
      }
      if (ref.label !== undefined) {
        const holder = yield* index.labelHolder(caller.deskId, ref.label)
        if (Option.isSome(holder)) return Option.map(yield* index.find(holder.value), (q) => q.rfqId)
      }
      return Option.none<number>()
    })

  /** A quote call goes to its RFQ's owner; one naming no known quote gets the local answer. */
  const byQuote = <A>(
    caller: Caller,
    ref: { readonly rfqQuoteId?: number | undefined; readonly label?: string | undefined },
    here: Effect.Effect<A, ApiError>,
    there: (entity: ReturnType<typeof client>) => Effect.Effect<unknown, unknown>
  ) =>
    Effect.flatMap(rfqOfQuote(caller, ref), (rfqId) =>
      Option.isNone(rfqId) ? here : routed(rfqId.value, here, there)
    )

  /**
   * An id for a new RFQ that this host owns, so the create (and the RFQ's first commands, often
   * sent to the host that created it) need no hop: ids from this host's blocks whose shard another
   * host holds are skipped (ids need not be dense; a block holds 100). A host that holds no shard
   * yet (it is starting) takes the next id, and the create goes to that id's owner.
   */
  const ownId = Effect.gen(function* () {
    for (let tries = 0; tries < OWN_ID_TRIES; tries++) {
      const id = yield* store.nextRfqId
      if (ownership.owns(id)) return id
    }
    return yield* store.nextRfqId
  })

  const engine: EngineService = {
    ...local,
    createRfq: (caller, req, options) =>
      Effect.flatMap(options?.id === undefined ? ownId : Effect.succeed(options.id), (id) =>
        routed(id, local.createRfq(caller, req, { id }), (e) => e.CreateRfq({ caller, req }))
      ),
    cancelRfq: (caller, rfqId) =>
      routed(rfqId, local.cancelRfq(caller, rfqId), (e) => e.CancelRfq({ caller })),
    deleteRfq: (caller, rfqId) =>
      routed(rfqId, local.deleteRfq(caller, rfqId), (e) => e.DeleteRfq({ caller })),
    getRfq: (caller, rfqId) => routed(rfqId, local.getRfq(caller, rfqId), (e) => e.GetRfq({ caller })),
    takerQuotes: (caller, rfqId) =>
      routed(rfqId, local.takerQuotes(caller, rfqId), (e) => e.TakerQuotes({ caller })),
    legPrices: (caller, req) =>
      routed(req.rfqId, local.legPrices(caller, req), (e) => e.LegPrices({ caller, req })),
    createQuote: (caller, req) =>
      Effect.tap(
        routed(req.rfqId, local.createQuote(caller, req), (e) => e.CreateQuote({ caller, req })),
        (answer) => homes.remember(answer.rfqQuoteId, req.rfqId)
      ),
    updateQuote: (caller, req) =>
      byQuote(caller, req, local.updateQuote(caller, req), (e) => e.UpdateQuote({ caller, req })),
    deleteQuote: (caller, req) =>
      byQuote(caller, req, local.deleteQuote(caller, req), (e) => e.DeleteQuote({ caller, req })),
    trade: (caller, rfqQuoteId) =>
      byQuote(caller, { rfqQuoteId }, local.trade(caller, rfqQuoteId), (e) =>
        e.Trade({ caller, rfqQuoteId })
      ),
    // The desk's active quotes, found in storage, cancelled RFQ by RFQ by each RFQ's owner.
    cancelAllQuotes: (caller, req, options) =>
      Effect.gen(function* () {
        const onlyUser = options?.onlyUser === true
        // Role and maker checks, and the answer when the desk has nothing to cancel.
        const quotes = yield* index.ofDesk(caller.deskId, {
          userId: onlyUser ? caller.userId : undefined,
          rfqId: req.rfqId
        })
        const rfqIds = [...new Set(quotes.map((q) => q.rfqId))]
        if (rfqIds.length === 0) return yield* local.cancelAllQuotes(caller, req, options)
        let cancelledCount = 0
        for (const rfqId of rfqIds) {
          const one: typeof req = { ...req, rfqId: rfqId as NonNullable<typeof req.rfqId> }
          const answer = yield* (
            routed(rfqId, local.cancelAllQuotes(caller, one, options), (e) =>
              e.CancelQuotes({ caller, req: one, onlyUser })
            ) as Effect.Effect<{ cancelledCount: number }, ApiError>
          ).pipe(Effect.catchAll(() => Effect.succeed({ cancelledCount: 0 })))
          cancelledCount += answer.cancelledCount
        }
        return { message: `${cancelledCount} quotes cancelled`, cancelledCount }
      })
  }
  return engine
})

/** The routed engine over the host's own engine (which it hides), registering the RFQ entity. */
export const RoutedEngineLive: Layer.Layer<
  Engine,
  never,
  Engine | Sharding.Sharding | Ownership | RfqStore | ActiveQuotes
> = Layer.scoped(Engine, make)

import { Clock, Context, Effect, Layer, Option } from "effect"
import type {
  CancelAllQuotesRequest,
  CreateQuoteRequest,
  DeleteQuoteRequest,
  UpdateQuoteRequest
} from "../api/QuoteRequests.js"
import { requireMaker, requireRole } from "../auth/Roles.js"
import { type ApiError, apiError } from "../domain/Errors.js"
import { Mmp } from "../mmp/Mmp.js"
import { type QuoteCandidate, quoteRejection } from "../rfq/QuoteRules.js"
import { type RfqActor, RfqActors } from "../rfq/RfqActors.js"
import type { Caller, QuoteRecord } from "../rfq/RfqRecord.js"
import { RfqStore } from "../rfq/RfqStore.js"
import { isOwnQuote, isTaker } from "../rfq/Visibility.js"
import { waitSpan } from "../services/WaitProbe.js"
import { ActiveQuotes } from "./ActiveQuotes.js"
import { ActorAccess, type ActorServices } from "./ActorAccess.js"
import { buildQuoteCandidate } from "./QuoteBuilder.js"

/** A maker desk's commands on its quotes. */
export interface QuoteCommandsService {
  readonly createQuote: (
    caller: Caller,
    req: CreateQuoteRequest
  ) => Effect.Effect<{ rfqQuoteId: number }, ApiError>
  /** Replaces the caller's active quote named by id and/or label. */
  readonly updateQuote: (
    caller: Caller,
    req: UpdateQuoteRequest
  ) => Effect.Effect<
    {
      direction: "buy" | "sell"
      price: number
      label?: string
      validUntil?: number
      rfqQuoteId: number
      rfqId: number
    },
    ApiError
  >
  readonly deleteQuote: (
    caller: Caller,
    req: DeleteQuoteRequest
  ) => Effect.Effect<{ message: string }, ApiError>
  /**
   * Cancels the caller desk's active quotes (all, one RFQ's, or one base currency's). With
   * `onlyUser`, only the quotes the calling user created (cancel-on-disconnect).
   */
  readonly cancelAllQuotes: (
    caller: Caller,
    req: CancelAllQuotesRequest,
    options?: { readonly onlyUser?: boolean } | undefined
  ) => Effect.Effect<{ message: string; cancelledCount: number }, ApiError>
}

export class QuoteCommands extends Context.Tag("rfq/QuoteCommands")<QuoteCommands, QuoteCommandsService>() {}

const make = Effect.gen(function* () {
  const store = yield* RfqStore
  const actors = yield* RfqActors
  const access = yield* ActorAccess
  const index = yield* ActiveQuotes
  const mmp = yield* Mmp
  const now = () => Clock.currentTimeMillis

  /** Puts the candidate quote on the RFQ (the caller holds its mailbox), its label reserved. */
  const putQuote = (actor: RfqActor, candidate: Effect.Effect<QuoteCandidate, ApiError, ActorServices>) =>
    Effect.gen(function* () {
      const c = yield* candidate
      const q = c.quote
      // A desk its protection froze in the RFQ's currency quotes nothing (from memory, inside the
      // mailbox: a trip's cancellation pass comes through it after this put, see `mmp/MmpEnforcer.ts`).
      yield* mmp.refuseIfFrozen(q.makerDeskId, actor.state.rfq.baseCurrency)
      const rejection = quoteRejection(actor.state, actor.value, c)
      // A label another quote holds is refused before any other rule. Only a quote the rules admit
      // takes its label, and it takes it before the commit yields, so no other RFQ can meanwhile.
      if (q.label !== undefined) {
        const free =
          rejection === undefined
            ? yield* index.reserveLabel(q.makerDeskId, q.label, q.id)
            : Option.getOrElse(yield* index.labelHolder(q.makerDeskId, q.label), () => q.id) === q.id
        if (!free) return yield* Effect.fail(apiError("duplicateClientQuoteId"))
      }
      if (rejection !== undefined) return yield* Effect.fail(rejection)
      const release = q.label === undefined ? Effect.void : index.releaseLabel(q.makerDeskId, q.label, q.id)
      // A write that failed frees the label; if it committed after all, the reload re-indexes it.
      // Storage refuses a label that another RFQ's quote took meanwhile (on another host, past
      // `reserveLabel`): nothing was written, and the answer is the same as the check's.
      const changed = yield* access.step(actor, { type: "QUOTE.PUT", candidate: c }).pipe(
        Effect.onError(() => release),
        Effect.catchTag("LabelTaken", () => Effect.fail(apiError("duplicateClientQuoteId")))
      )
      if (!changed) {
        yield* release
        return yield* Effect.fail(
          quoteRejection(actor.state, actor.value, c) ?? apiError("invalidRequest", "the quote was refused")
        )
      }
      return q
    })

  const createQuote = Effect.fnUntraced(function* (caller: Caller, req: CreateQuoteRequest) {
    yield* requireRole(caller, "write")
    return yield* access.visibleActor(caller, req.rfqId, (actor) =>
      Effect.gen(function* () {
        // The taker sees its own RFQ: it is told why it cannot quote, whether or not it is a maker.
        if (isTaker(actor.state.rfq, caller)) return yield* Effect.fail(apiError("cannotQuoteOwnRfq"))
        yield* requireMaker(caller)
        const id = yield* store.nextQuoteId
        const at = yield* now()
        const q = yield* putQuote(
          actor,
          buildQuoteCandidate(caller, actor.state.rfq, req, {
            id,
            direction: req.direction,
            createdAt: at,
            now: at
          })
        )
        return { rfqQuoteId: q.id }
      })
    )
  }, waitSpan("Engine.createQuote"))

  /** The caller's active quote named by id and/or label. */
  const findQuote = (
    caller: Caller,
    ref: { readonly rfqQuoteId?: number | undefined; readonly label?: string | undefined }
  ) =>
    Effect.gen(function* () {
      const byLabel =
        ref.label === undefined
          ? undefined
          : Option.getOrUndefined(yield* index.labelHolder(caller.deskId, ref.label))
      if (
        ref.rfqQuoteId !== undefined &&
        ref.label !== undefined &&
        byLabel !== undefined &&
        byLabel !== ref.rfqQuoteId
      ) {
        return yield* Effect.fail(apiError("multipleQuotesFound"))
      }
      const id = ref.rfqQuoteId ?? byLabel
      const entry = id === undefined ? undefined : Option.getOrUndefined(yield* index.find(id))
      if (id === undefined || entry === undefined || entry.deskId !== caller.deskId) {
        return yield* Effect.fail(apiError("recordNotFound", "no active quote of the caller matches"))
      }
      return { id, rfqId: entry.rfqId }
    })

  /** Fails with `mmp frozen` when `req` names a quote of the caller's desk on an RFQ whose currency is frozen. */
  const frozenQuoteRefusal = (caller: Caller, req: UpdateQuoteRequest) =>
    Effect.gen(function* () {
      if (req.rfqQuoteId === undefined) return
      const stored = yield* store.quote(req.rfqQuoteId)
      if (Option.isNone(stored) || stored.value.makerDeskId !== caller.deskId) return
      const holder = yield* actors.actorOf(stored.value.rfqId)
      if (Option.isSome(holder)) yield* mmp.refuseIfFrozen(caller.deskId, holder.value.state.rfq.baseCurrency)
    })

  const updateQuote = Effect.fnUntraced(function* (caller: Caller, req: UpdateQuoteRequest) {
    yield* requireRole(caller, "write")
    yield* requireMaker(caller)
    // An update of a quote its desk's protection cancelled says why: `mmp frozen`, not "not found".
    const found = yield* findQuote(caller, req).pipe(Effect.tapError(() => frozenQuoteRefusal(caller, req)))
    return yield* access.visibleActor(caller, found.rfqId, (actor) =>
      Effect.gen(function* () {
        const current: QuoteRecord | undefined = actor.state.quotes[found.id]
        if (current === undefined)
          return yield* Effect.fail(apiError("recordNotFound", "the quote is no longer active"))
        const label = req.label ?? current.label
        // An update without `validUntil` keeps the quote's (docs/api.md, "Quote expiry").
        const validUntil = req.validUntil ?? current.validUntil
        const q = yield* putQuote(
          actor,
          buildQuoteCandidate(
            caller,
            actor.state.rfq,
            {
              ...req,
              ...(label === undefined ? {} : { label }),
              ...(validUntil === undefined ? {} : { validUntil })
            },
            {
              id: current.id,
              direction: current.direction,
              createdAt: current.createdAt,
              now: yield* now()
            }
          )
        )
        return {
          rfqQuoteId: q.id,
          rfqId: q.rfqId,
          ...(q.label === undefined ? {} : { label: q.label }),
          direction: q.direction,
          price: Number(q.price),
          ...(q.validUntil === undefined ? {} : { validUntil: q.validUntil })
        }
      })
    )
  }, waitSpan("Engine.updateQuote"))

  /** Cancels those of `ids` that are the caller desk's active quotes on the RFQ; how many. */
  const closeQuotes = (caller: Caller, rfqId: number, ids: ReadonlyArray<number>) =>
    access.visibleActor(caller, rfqId, (actor) =>
      Effect.gen(function* () {
        const mine = ids.filter((id) => {
          const quote = actor.state.quotes[id]
          return quote !== undefined && isOwnQuote(quote, caller)
        })
        if (mine.length === 0 || actor.value !== "open") return 0
        yield* access.step(actor, {
          type: "QUOTE.CLOSE",
          quoteIds: mine,
          status: "cancelled",
          now: yield* now()
        })
        return mine.length
      })
    )

  const deleteQuote = Effect.fnUntraced(function* (caller: Caller, req: DeleteQuoteRequest) {
    yield* requireRole(caller, "write")
    yield* requireMaker(caller)
    const found = yield* findQuote(caller, req)
    const closed = yield* closeQuotes(caller, found.rfqId, [found.id])
    if (closed === 0) return yield* Effect.fail(apiError("recordNotFound", "the quote is no longer active"))
    return { message: `quote ${found.id} deleted` }
  }, waitSpan("Engine.deleteQuote"))

  const cancelAllQuotes = Effect.fnUntraced(function* (
    caller: Caller,
    req: CancelAllQuotesRequest,
    options?: { readonly onlyUser?: boolean } | undefined
  ) {
    yield* requireRole(caller, "write")
    yield* requireMaker(caller)
    const byRfq = new Map<number, Array<number>>()
    const quotes = yield* index.ofDesk(caller.deskId, {
      userId: options?.onlyUser === true ? caller.userId : undefined,
      rfqId: req.rfqId
    })
    for (const entry of quotes) {
      const list = byRfq.get(entry.rfqId) ?? []
      list.push(entry.id)
      byRfq.set(entry.rfqId, list)
    }
    let cancelledCount = 0
    for (const [rfqId, ids] of byRfq) {
      if (req.baseCurrency !== undefined) {
        const actor = actors.live.get(rfqId)
        if (actor === undefined || actor.state.rfq.baseCurrency !== req.baseCurrency) continue
      }
      cancelledCount += yield* closeQuotes(caller, rfqId, ids).pipe(Effect.catchAll(() => Effect.succeed(0)))
    }
    return { message: `${cancelledCount} quotes cancelled`, cancelledCount }
  }, waitSpan("Engine.cancelAllQuotes"))

  const service: QuoteCommandsService = { createQuote, updateQuote, deleteQuote, cancelAllQuotes }
  return service
})

export const QuoteCommandsLive: Layer.Layer<
  QuoteCommands,
  never,
  RfqStore | RfqActors | ActorAccess | ActiveQuotes | Mmp
> = Layer.effect(QuoteCommands, make)

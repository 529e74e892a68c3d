import { createHash } from "node:crypto"
import { BigDecimal, Clock, Context, Effect, Either, Layer, Option, type Scope } from "effect"
import { AccountStore } from "../accounts/AccountStore.js"
import type { BulkBlockTradeRequest, CreateExchangeCredentialsRequest } from "../api/AccountRequests.js"
import type { InstrumentsQuery, ListQuotesQuery, ListRfqsQuery } from "../api/Queries.js"
import type {
  CancelAllQuotesRequest,
  CreateQuoteRequest,
  DeleteQuoteRequest,
  UpdateQuoteRequest
} from "../api/QuoteRequests.js"
import type { CreateRfqRequest, LegPricesRequest } from "../api/RfqRequests.js"
import { type ApiError, apiError } from "../domain/Errors.js"
import { legPrices } from "../domain/LegPrices.js"
import type { SettlementOption } from "../domain/Primitives.js"
import { decString } from "../rfq/Dec.js"
import { type ExpiryScheduler, makeExpiryScheduler } from "../rfq/ExpiryScheduler.js"
import { type RfqActor, makeRfqActors, viewOf } from "../rfq/RfqActors.js"
import { acceptRejection, canSee, isTaker, quoteRejection } from "../rfq/QuoteRules.js"
import type { Caller, QuoteRecord } from "../rfq/RfqRecord.js"
import { RfqStore } from "../rfq/RfqStore.js"
import {
  type Json,
  renderAllocations,
  renderMakerQuote,
  renderQuoteBook,
  renderRfq,
  renderTrades,
  tradeDirectionFor
} from "../rfq/RfqView.js"
import { credentialsAad, SecretBox } from "../security/SecretBox.js"
import { Events } from "../services/Events.js"
import { Pricing } from "../services/Pricing.js"
import { Venues } from "../services/Venues.js"
import { bulkBlockTrades } from "./BulkBlockTrades.js"
import { buildRfq, pricingOption } from "./CreateRfq.js"
import { buildQuoteCandidate, venueInstrumentOf } from "./QuoteBuilder.js"
import { planTrade, settleTrade } from "./Settlement.js"

export interface EngineConfig {
  /** Time an RFQ stays open: expiresAt = createdAt + rfqTtlMs. */
  readonly rfqTtlMs: number
}

const exchanges: Record<SettlementOption, { readonly exchangeId: number; readonly name: string }> = {
  DBT: { exchangeId: 1, name: "DBT" },
  BULL: { exchangeId: 2, name: "BULL" }
}

/** How soon an RFQ left unsettled (a write in doubt, a settlement cut off) is looked at again. */
const UNSETTLED_RETRY_MS = 1000

const requireTrader = (caller: Caller) =>
  caller.roles.includes("trader") ? Effect.void : Effect.fail(apiError("insufficientPermissions"))

/** A stable hash of a decoded request, decimals in canonical form, for request-id idempotency. */
const hashRequest = (value: unknown): string =>
  createHash("sha256")
    .update(
      JSON.stringify(value, (_k, v) =>
        BigDecimal.isBigDecimal(v)
          ? `dec:${decString(v)}`
          : v !== null && typeof v === "object" && !Array.isArray(v)
            ? Object.fromEntries(
                Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1))
              )
            : v
      )
    )
    .digest("hex")

const makeEngine = (config: EngineConfig) =>
  Effect.gen(function* () {
    const store = yield* RfqStore
    const accounts = yield* AccountStore
    const venues = yield* Venues
    const secrets = yield* SecretBox
    const hub = yield* Events
    const context = yield* Effect.context<AccountStore | Venues | Pricing>()
    const actors = yield* makeRfqActors
    const now = () => Clock.currentTimeMillis

    // Active quotes by id, and their labels per maker desk: quote commands find their RFQ here,
    // and a label is reserved synchronously so two RFQs never take the same one concurrently.
    const activeQuotes = new Map<
      number,
      { rfqId: number; deskId: number; userId: number; label?: string | undefined }
    >()
    const labels = new Map<string, number>()
    // The indexed quote ids of each RFQ: an expiry that the mailbox runs before a command closes
    // quotes the command never saw, and they must still leave the index (and free their labels).
    const indexedByRfq = new Map<number, Set<number>>()
    const labelKey = (deskId: number, label: string) => `${deskId}\u0000${label}`
    const indexQuote = (q: QuoteRecord) => {
      const previous = activeQuotes.get(q.id)
      if (previous?.label !== undefined) labels.delete(labelKey(previous.deskId, previous.label))
      activeQuotes.set(q.id, { rfqId: q.rfqId, deskId: q.makerDeskId, userId: q.makerUserId, label: q.label })
      if (q.label !== undefined) labels.set(labelKey(q.makerDeskId, q.label), q.id)
      const ids = indexedByRfq.get(q.rfqId)
      if (ids === undefined) indexedByRfq.set(q.rfqId, new Set([q.id]))
      else ids.add(q.id)
    }
    const unindexQuote = (id: number) => {
      const previous = activeQuotes.get(id)
      if (previous === undefined) return
      if (previous.label !== undefined && labels.get(labelKey(previous.deskId, previous.label)) === id) {
        labels.delete(labelKey(previous.deskId, previous.label))
      }
      activeQuotes.delete(id)
      const ids = indexedByRfq.get(previous.rfqId)
      ids?.delete(id)
      if (ids?.size === 0) indexedByRfq.delete(previous.rfqId)
    }
    /** Re-reads an actor's active quotes into the index. */
    const reindex = (actor: RfqActor) => {
      const ids = indexedByRfq.get(actor.state.rfq.id)
      if (ids !== undefined)
        for (const id of [...ids]) if (actor.state.quotes[id] === undefined) unindexQuote(id)
      for (const q of Object.values(actor.state.quotes)) indexQuote(q)
    }
    const stepActor = (actor: RfqActor, event: Parameters<typeof actors.commit>[1]) =>
      Effect.gen(function* () {
        const changed = yield* actors.commit(actor, event)
        reindex(actor)
        return changed
      })
    /**
     * `actors.withActor`, then the index re-read: the mailbox may have expired the RFQ first. An
     * RFQ found settling inside its mailbox is a settlement a command left unfinished (a write or
     * a venue call that failed, the database stalled): it is finished first, by the venue's
     * idempotency keys, so no block trade runs twice. One still unsettled afterwards (in doubt, or
     * settling) is looked at again shortly, whether or not a client comes back to it.
     */
    const withActor = <A>(
      rfqId: number,
      body: (actor: RfqActor) => Effect.Effect<A, ApiError>
    ): Effect.Effect<A, ApiError> =>
      actors
        .withActor(rfqId, (actor) =>
          Effect.ensuring(
            Effect.zipRight(finishSettlement(actor), body(actor)),
            Effect.sync(() => reindex(actor))
          )
        )
        .pipe(
          Effect.ensuring(Effect.suspend(() => (actors.unsettled(rfqId) ? retryLater(rfqId) : Effect.void)))
        )
    const finishSettlement = (actor: RfqActor) =>
      actor.value === "settling" ? reconcile(actor).pipe(Effect.provide(context), Effect.orDie) : Effect.void
    // The expiry scheduler doubles as the timer of these second looks.
    const retriesDue = new Set<number>()
    const retryLater = (rfqId: number): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (retriesDue.has(rfqId)) return Effect.void
        retriesDue.add(rfqId)
        return Effect.flatMap(now(), (at) => scheduler.schedule(rfqId, at + UNSETTLED_RETRY_MS))
      })

    const scheduler: ExpiryScheduler = yield* makeExpiryScheduler((rfqId) =>
      Effect.suspend(() => {
        retriesDue.delete(rfqId)
        return withActor(rfqId, () => Effect.void)
      }).pipe(
        Effect.catchAll(() => Effect.void),
        Effect.catchAllDefect((d) => Effect.logError("expiry failed", d))
      )
    )

    // Restore: live RFQs back into memory, expiry timers re-armed (due ones fire at once), and
    // trades caught mid-settlement reconciled with the venue by their keys.
    yield* actors.restoreLive
    for (const actor of [...actors.live.values()]) {
      // Expired while the process was down: expire now, before anyone can read or quote it.
      yield* actor.mailbox.withPermits(1)(actors.expireIfDue(actor))
      for (const q of Object.values(actor.state.quotes)) indexQuote(q)
      if (actor.value === "open") yield* scheduler.schedule(actor.state.rfq.id, actor.state.rfq.expiresAt)
    }
    const reconcile = (actor: RfqActor) =>
      Effect.gen(function* () {
        const trade = actor.state.trade
        const quote = trade === undefined ? undefined : actor.state.quotes[trade.quoteId]
        if (trade === undefined || quote === undefined) return
        const settled = yield* settleTrade(actor.state.rfq, quote, trade, now)
        yield* stepActor(actor, { type: "SETTLED", trade: settled, now: yield* now() })
      })
    for (const actor of [...actors.live.values()].filter((a) => a.value === "settling")) {
      yield* actor.mailbox.withPermits(1)(finishSettlement(actor))
    }

    const visibleActor = <A>(
      caller: Caller,
      rfqId: number,
      body: (actor: RfqActor) => Effect.Effect<A, ApiError, AccountStore | Venues | Pricing>
    ) =>
      withActor(rfqId, (actor) =>
        canSee(actor.state.rfq, caller)
          ? body(actor).pipe(Effect.provide(context))
          : Effect.fail(apiError("rfqNotFound"))
      )

    const requestLocks = new Map<string, { readonly lock: Effect.Semaphore; users: number }>()

    // ---- RFQs ---------------------------------------------------------------------------------

    const createRfq = Effect.fn("Engine.createRfq")(function* (caller: Caller, req: CreateRfqRequest) {
      yield* requireTrader(caller)
      const bodyHash = req.requestId === 0 ? "" : hashRequest(req)
      const create = Effect.gen(function* () {
        if (req.requestId !== 0) {
          const earlier = yield* store.findByRequestId(caller.userId, req.requestId)
          if (Option.isSome(earlier)) {
            if (earlier.value.bodyHash === bodyHash) return { rfqId: earlier.value.rfqId }
            return yield* Effect.fail(
              apiError(
                "invalidRequest",
                `id: request id ${req.requestId} was already used with a different body`
              )
            )
          }
        }
        const id = yield* store.nextRfqId
        const record = yield* buildRfq(caller, req, { id, now: yield* now(), ttlMs: config.rfqTtlMs }).pipe(
          Effect.provide(context)
        )
        // An insert that failed may still commit (a stalled database): its expiry is due either way.
        yield* store
          .insertRfq(record, bodyHash)
          .pipe(Effect.onError(() => scheduler.schedule(record.id, record.expiresAt)))
        const actor = actors.register({ rfq: record, quotes: {} })
        yield* scheduler.schedule(record.id, record.expiresAt)
        yield* actors.publish([
          { type: "rfq", event: "created", seq: 1, view: viewOf(actor.value, actor.state) }
        ])
        return { rfqId: record.id }
      })
      if (req.requestId === 0) return yield* create
      // One create per (user, request id) at a time, so a retry racing the original finds it.
      const key = `${caller.userId}:${req.requestId}`
      let entry = requestLocks.get(key)
      if (entry === undefined) {
        entry = { lock: Effect.unsafeMakeSemaphore(1), users: 0 }
        requestLocks.set(key, entry)
      }
      const held = entry
      held.users++
      return yield* held.lock
        .withPermits(1)(create)
        .pipe(Effect.ensuring(Effect.sync(() => --held.users === 0 && requestLocks.delete(key))))
    })

    /**
     * The actor of an RFQ for a read; one past its expiry is expired first, so no read shows it open,
     * and one in doubt is reloaded first (in its mailbox), so a read never shows an unsettled write.
     */
    const readActor = (rfqId: number) =>
      Effect.flatMap(actors.actorOf(rfqId), (found) =>
        Option.isSome(found) && (found.value.value === "open" || found.value.doubt)
          ? Effect.flatMap(now(), (at) =>
              found.value.doubt || at >= found.value.state.rfq.expiresAt
                ? withActor(rfqId, () => Effect.void).pipe(Effect.ignore, Effect.as(found))
                : Effect.succeed(found)
            )
          : Effect.succeed(found)
      )

    // A single fetch as a desk sees it, rendered once per snapshot (snapshots are immutable and
    // replaced on every step) and desk (what a visible RFQ shows depends only on the caller's
    // desk). Frozen, so a host may cache its serialisation too.
    const renderedRfqs = new WeakMap<object, Map<number, Json>>()
    const renderedRfq = (actor: RfqActor, caller: Caller): Json => {
      let byDesk = renderedRfqs.get(actor.snapshot)
      if (byDesk === undefined) {
        byDesk = new Map()
        renderedRfqs.set(actor.snapshot, byDesk)
      }
      let rendered = byDesk.get(caller.deskId)
      if (rendered === undefined) {
        rendered = Object.freeze(renderRfq(viewOf(actor.value, actor.state), caller, { single: true })!)
        byDesk.set(caller.deskId, rendered)
      }
      return rendered
    }

    // Reads served from memory are the hot path of the service: no span (it would cost more than
    // the read itself) and no generator.
    const getRfq = (caller: Caller, rfqId: number) =>
      Effect.flatMap(readActor(rfqId), (found) => {
        if (
          Option.isNone(found) ||
          found.value.value === "deleted" ||
          !canSee(found.value.state.rfq, caller)
        ) {
          return Effect.fail(apiError("rfqNotFound"))
        }
        return Effect.succeed(renderedRfq(found.value, caller))
      })

    /** The one answer to a list cursor the caller could not have received (issue 12). */
    const notACursor = (cursor: number) =>
      apiError("invalidRequest", `cursor: ${cursor} is not a cursor of this list`)

    const listRfqs = Effect.fn("Engine.listRfqs")(function* (caller: Caller, query: ListRfqsQuery) {
      // The cursor is the id of the last RFQ of the previous page; the keyset is its (createdAt, id).
      // Only an RFQ the caller can see (as `GET /rfq/{id}` would show it) is a cursor; any other
      // id, existing or not, gets the same 400, so a cursor tells nothing about other desks' RFQs.
      let after: { readonly createdAt: number; readonly id: number } | undefined
      if (query.cursor !== undefined && query.cursor !== 0) {
        const found = yield* actors.actorOf(query.cursor)
        if (
          Option.isNone(found) ||
          found.value.value === "deleted" ||
          !canSee(found.value.state.rfq, caller)
        ) {
          return yield* Effect.fail(notACursor(query.cursor))
        }
        after = { createdAt: found.value.state.rfq.createdAt, id: found.value.state.rfq.id }
      }
      // One row past the page says whether another page follows: the last page's cursor is 0.
      const page = yield* store.list({
        deskId: caller.deskId,
        makerId: caller.makerId,
        role: query.role,
        statuses: query.status,
        baseCurrency: query.baseCurrency,
        startTime: query.startTime,
        endTime: query.endTime,
        after,
        limit: query.limit + 1
      })
      const ids = page.ids.slice(0, query.limit)
      const results: Array<Json> = []
      for (const id of ids) {
        const found = yield* readActor(id)
        if (Option.isNone(found)) continue
        const rendered = renderRfq(viewOf(found.value.value, found.value.state), caller, { single: false })
        if (rendered !== undefined) results.push(rendered)
      }
      return {
        totalResults: page.total,
        cursor: page.ids.length > query.limit ? ids[ids.length - 1]! : 0,
        results
      }
    })

    const cancelRfq = Effect.fn("Engine.cancelRfq")(function* (caller: Caller, rfqId: number) {
      yield* requireTrader(caller)
      return yield* visibleActor(caller, rfqId, (actor) =>
        Effect.gen(function* () {
          if (!isTaker(actor.state.rfq, caller))
            return yield* Effect.fail(apiError("insufficientPermissions"))
          const changed = yield* stepActor(actor, { type: "CANCEL", now: yield* now() })
          if (!changed)
            return yield* Effect.fail(
              apiError(actor.value === "expired" ? "rfqExpired" : "canOnlyCancelInProgress")
            )
          return { id: rfqId }
        })
      )
    })

    const deleteRfq = Effect.fn("Engine.deleteRfq")(function* (caller: Caller, rfqId: number) {
      yield* requireTrader(caller)
      return yield* visibleActor(caller, rfqId, (actor) =>
        Effect.gen(function* () {
          if (!isTaker(actor.state.rfq, caller))
            return yield* Effect.fail(apiError("insufficientPermissions"))
          const changed = yield* stepActor(actor, { type: "DELETE", now: yield* now() })
          if (!changed) return yield* Effect.fail(apiError("canOnlyDeleteDraftOrCancelled"))
          return { rfqId }
        })
      )
    })

    const takerQuotes = Effect.fn("Engine.takerQuotes")(function* (caller: Caller, rfqId: number) {
      return yield* visibleActor(caller, rfqId, (actor) =>
        isTaker(actor.state.rfq, caller)
          ? Effect.succeed(renderQuoteBook(actor.state.rfq, Object.values(actor.state.quotes)))
          : Effect.fail(apiError("rfqNotFound"))
      )
    })

    // ---- quotes -------------------------------------------------------------------------------

    const requireMaker = (caller: Caller) =>
      caller.makerId === undefined ? Effect.fail(apiError("rfqNotFound")) : requireTrader(caller)

    const putQuote = (
      caller: Caller,
      actor: RfqActor,
      candidate: Effect.Effect<
        Parameters<typeof quoteRejection>[2],
        ApiError,
        AccountStore | Venues | Pricing
      >
    ) =>
      Effect.gen(function* () {
        const c = yield* candidate
        const q = c.quote
        if (q.label !== undefined) {
          const holder = labels.get(labelKey(q.makerDeskId, q.label))
          if (holder !== undefined && holder !== q.id)
            return yield* Effect.fail(apiError("duplicateClientQuoteId"))
        }
        const rejection = quoteRejection(actor.state, actor.value, c)
        if (rejection !== undefined) return yield* Effect.fail(rejection)
        // Reserve the label before the commit yields, so no other RFQ can take it meanwhile.
        const reserved = q.label === undefined ? undefined : labelKey(q.makerDeskId, q.label)
        if (reserved !== undefined) labels.set(reserved, q.id)
        // A write that failed frees the label; if it committed after all, the reload re-indexes it.
        const changed = yield* stepActor(actor, { type: "QUOTE.PUT", candidate: c }).pipe(
          Effect.onError(() =>
            Effect.sync(
              () =>
                reserved !== undefined &&
                labels.get(reserved) === q.id &&
                !activeQuotes.has(q.id) &&
                labels.delete(reserved)
            )
          )
        )
        if (!changed) {
          if (reserved !== undefined && !activeQuotes.has(q.id)) labels.delete(reserved)
          return yield* Effect.fail(
            quoteRejection(actor.state, actor.value, c) ?? apiError("invalidRequest", "the quote was refused")
          )
        }
        void caller
        return q
      })

    const createQuote = Effect.fn("Engine.createQuote")(function* (caller: Caller, req: CreateQuoteRequest) {
      yield* requireTrader(caller)
      return yield* visibleActor(caller, req.rfqId, (actor) =>
        Effect.gen(function* () {
          // The taker sees its own RFQ: it is told why it cannot quote, whether or not it is a maker.
          if (isTaker(actor.state.rfq, caller)) return yield* Effect.fail(apiError("cannotQuoteOwnRfq"))
          yield* requireMaker(caller)
          const id = yield* store.nextQuoteId
          const at = yield* now()
          const q = yield* putQuote(
            caller,
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
    })

    /** The caller's active quote named by id and/or label. */
    const findQuote = (
      caller: Caller,
      ref: { readonly rfqQuoteId?: number | undefined; readonly label?: string | undefined }
    ) =>
      Effect.gen(function* () {
        const byLabel = ref.label === undefined ? undefined : labels.get(labelKey(caller.deskId, ref.label))
        if (
          ref.rfqQuoteId !== undefined &&
          ref.label !== undefined &&
          byLabel !== undefined &&
          byLabel !== ref.rfqQuoteId
        ) {
          return yield* Effect.fail(apiError("multipleQuotesFound"))
        }
        const id = ref.rfqQuoteId ?? byLabel
        const entry = id === undefined ? undefined : activeQuotes.get(id)
        if (id === undefined || entry === undefined || entry.deskId !== caller.deskId) {
          return yield* Effect.fail(apiError("recordNotFound", "no active quote of the caller matches"))
        }
        return { id, rfqId: entry.rfqId }
      })

    const updateQuote = Effect.fn("Engine.updateQuote")(function* (caller: Caller, req: UpdateQuoteRequest) {
      yield* requireMaker(caller)
      const found = yield* findQuote(caller, req)
      return yield* visibleActor(caller, found.rfqId, (actor) =>
        Effect.gen(function* () {
          const current = actor.state.quotes[found.id]
          if (current === undefined)
            return yield* Effect.fail(apiError("recordNotFound", "the quote is no longer active"))
          const label = req.label ?? current.label
          const q = yield* putQuote(
            caller,
            actor,
            buildQuoteCandidate(caller, actor.state.rfq, label === undefined ? req : { ...req, label }, {
              id: current.id,
              direction: current.direction,
              createdAt: current.createdAt,
              now: yield* now()
            })
          )
          return {
            rfqQuoteId: q.id,
            rfqId: q.rfqId,
            ...(q.label === undefined ? {} : { label: q.label }),
            direction: q.direction,
            price: Number(q.price)
          }
        })
      )
    })

    const closeQuotes = (caller: Caller, rfqId: number, ids: ReadonlyArray<number>) =>
      visibleActor(caller, rfqId, (actor) =>
        Effect.gen(function* () {
          const mine = ids.filter((id) => actor.state.quotes[id]?.makerDeskId === caller.deskId)
          if (mine.length === 0 || actor.value !== "open") return 0
          yield* stepActor(actor, {
            type: "QUOTE.CLOSE",
            quoteIds: mine,
            status: "cancelled",
            now: yield* now()
          })
          return mine.length
        })
      )

    const deleteQuote = Effect.fn("Engine.deleteQuote")(function* (caller: Caller, req: DeleteQuoteRequest) {
      yield* requireMaker(caller)
      const found = yield* findQuote(caller, req)
      const closed = yield* closeQuotes(caller, found.rfqId, [found.id])
      if (closed === 0) return yield* Effect.fail(apiError("recordNotFound", "the quote is no longer active"))
      return { message: `quote ${found.id} deleted` }
    })

    /**
     * Cancels the caller desk's active quotes (all, one RFQ's, or one base currency's). With
     * `onlyUser`, only the quotes the calling user created (cancel-on-disconnect).
     */
    const cancelAllQuotes = Effect.fn("Engine.cancelAllQuotes")(function* (
      caller: Caller,
      req: CancelAllQuotesRequest,
      options?: { readonly onlyUser?: boolean }
    ) {
      yield* requireMaker(caller)
      const byRfq = new Map<number, Array<number>>()
      for (const [id, entry] of activeQuotes) {
        if (entry.deskId !== caller.deskId) continue
        if (options?.onlyUser === true && entry.userId !== caller.userId) continue
        if (req.rfqId !== undefined && entry.rfqId !== req.rfqId) continue
        const list = byRfq.get(entry.rfqId) ?? []
        list.push(id)
        byRfq.set(entry.rfqId, list)
      }
      let cancelledCount = 0
      for (const [rfqId, ids] of byRfq) {
        if (req.baseCurrency !== undefined) {
          const actor = actors.live.get(rfqId)
          if (actor === undefined || actor.state.rfq.baseCurrency !== req.baseCurrency) continue
        }
        cancelledCount += yield* closeQuotes(caller, rfqId, ids).pipe(
          Effect.catchAll(() => Effect.succeed(0))
        )
      }
      return { message: `${cancelledCount} quotes cancelled`, cancelledCount }
    })

    const listQuotes = Effect.fn("Engine.listQuotes")(function* (caller: Caller, query: ListQuotesQuery) {
      // Only a quote of the caller's desk is a cursor; any other id, existing or not, gets the same 400.
      const cursorQuote =
        query.cursor === undefined || query.cursor === 0 ? undefined : yield* store.quote(query.cursor)
      if (
        cursorQuote !== undefined &&
        (Option.isNone(cursorQuote) || cursorQuote.value.makerDeskId !== caller.deskId)
      ) {
        return yield* Effect.fail(notACursor(query.cursor ?? 0))
      }
      const after =
        cursorQuote === undefined || Option.isNone(cursorQuote)
          ? undefined
          : { createdAt: cursorQuote.value.createdAt, id: cursorQuote.value.id }
      const page = yield* store.listQuotes({
        makerDeskId: caller.deskId,
        rfqId: query.rfqId,
        startTime: query.startTime,
        endTime: query.endTime,
        after,
        limit: query.limit + 1
      })
      const quotes = page.quotes.slice(0, query.limit)
      return {
        totalResults: page.total,
        cursor: page.quotes.length > query.limit ? quotes[quotes.length - 1]!.id : 0,
        results: quotes.map(renderMakerQuote)
      }
    })

    // ---- trade --------------------------------------------------------------------------------

    const trade = Effect.fn("Engine.trade")(function* (caller: Caller, rfqQuoteId: number) {
      yield* requireTrader(caller)
      const entry = activeQuotes.get(rfqQuoteId)
      const missing = apiError("recordNotFound", `quote ${rfqQuoteId} is not an active quote`)
      if (entry === undefined) {
        // A quote that is no longer active: its own taker learns why when the RFQ itself ended,
        // the same answer as before the expiry was processed; anyone else learns nothing.
        const stored = yield* store.quote(rfqQuoteId)
        if (Option.isSome(stored)) {
          const found = yield* readActor(stored.value.rfqId)
          // A deleted RFQ is gone for its taker too: its quotes are simply not found.
          if (
            Option.isSome(found) &&
            found.value.value !== "deleted" &&
            isTaker(found.value.state.rfq, caller)
          ) {
            if (found.value.value === "expired") return yield* Effect.fail(apiError("rfqExpired"))
            if (found.value.value !== "open" && found.value.value !== "settling") {
              return yield* Effect.fail(
                apiError("invalidRequest", `the RFQ is ${found.value.value}; it must be open`)
              )
            }
          }
        }
        return yield* Effect.fail(missing)
      }
      // A live quote on an RFQ the caller may not see is answered like a missing one (OWASP API1):
      // "rfq not found" would tell an outsider that the quote id is live.
      const holder = yield* actors.actorOf(entry.rfqId)
      if (Option.isNone(holder) || !canSee(holder.value.state.rfq, caller)) return yield* Effect.fail(missing)
      return yield* visibleActor(caller, entry.rfqId, (actor) =>
        Effect.gen(function* () {
          const at = yield* now()
          const rejected = acceptRejection(actor.state, actor.value, rfqQuoteId, caller, at)
          if (rejected !== undefined) return yield* Effect.fail(rejected)
          const quote = actor.state.quotes[rfqQuoteId]!
          const accountsCount = (actor.state.rfq.settlementAccounts[quote.settlementOption] ?? []).length
          const tradeId = yield* store.nextTradeId
          const allocationIds: Array<number> = []
          for (let i = 0; i < accountsCount; i++) allocationIds.push(yield* store.nextAllocationId)
          const planned = yield* planTrade(actor.state.rfq, quote, { tradeId, allocationIds, now: at })
          yield* stepActor(actor, { type: "ACCEPT", quoteId: rfqQuoteId, caller, now: at, trade: planned })
          const settled = yield* settleTrade(actor.state.rfq, quote, planned, now)
          yield* stepActor(actor, { type: "SETTLED", trade: settled, now: yield* now() })
          if (settled.allocations.every((a) => a.status === "failed")) {
            return yield* Effect.fail(
              apiError(
                "invalidRequest",
                settled.allocations.map((a) => `credentialsId ${a.credentialsId}: ${a.reason ?? "failed"}`)
              )
            )
          }
          const rfq = actor.state.rfq
          return {
            rfqTradeId: settled.id,
            rfqId: rfq.id,
            trades: renderTrades(settled, tradeDirectionFor(settled, rfq, caller)),
            ...(rfq.split ? { allocations: renderAllocations(settled) } : {})
          }
        })
      )
    })

    // ---- leg prices, reference data -----------------------------------------------------------

    const legPricesOf = Effect.fn("Engine.legPrices")(function* (caller: Caller, req: LegPricesRequest) {
      return yield* visibleActor(caller, req.rfqId, (actor) =>
        Effect.gen(function* () {
          const rfq = actor.state.rfq
          const option = pricingOption(rfq)
          const pricing = yield* Pricing
          const inputs = yield* Effect.forEach(req.legs, (leg, i) =>
            Effect.gen(function* () {
              const stored = rfq.legs.find((l) => l.instrumentName === leg.instrumentName)
              const currency = rfq.quoteCurrencies[option] ?? rfq.quoteCurrency
              const resolved =
                stored?.contracts[option] !== undefined
                  ? yield* venueInstrumentOf(option, leg.instrumentName, stored.contracts[option])
                  : Option.getOrUndefined(yield* venues.resolve(option, leg.instrumentName, currency))
              if (resolved === undefined) {
                return yield* Effect.fail(
                  apiError(
                    "instrumentNotFoundForLeg",
                    `legs[${i}]: ${leg.instrumentName} is not listed on ${option}`
                  )
                )
              }
              const mark = yield* pricing.mark(resolved)
              const band = venues.priceBand(resolved, mark)
              return {
                instrumentName: leg.instrumentName,
                direction: leg.direction,
                ratio: leg.ratio,
                mark,
                tick: resolved.tickSize,
                bandLow: band.low,
                bandHigh: band.high
              }
            })
          )
          const result = legPrices(inputs, req.price)
          if (Either.isLeft(result)) return yield* Effect.fail(result.left)
          return {
            legs: result.right.legs.map((l) => ({
              instrumentName: l.instrumentName,
              direction: l.direction,
              ratio: Number(decString(l.ratio)),
              price: Number(decString(l.price))
            })),
            priceDifference: Number(decString(result.right.priceDifference))
          }
        })
      )
    })

    const makers = Effect.fn("Engine.makers")(function* (_caller: Caller) {
      const rows = yield* accounts.makers
      return yield* Effect.forEach(rows, (m) =>
        Effect.map(accounts.credentialsOfDesk(m.deskId), (creds) => ({
          makerId: m.makerId,
          name: m.name,
          settlementOptions: (["BULL", "DBT"] as const).filter((o) => creds.some((c) => c.exchange === o))
        }))
      )
    })

    const instruments = Effect.fn("Engine.instruments")(function* (_caller: Caller, query: InstrumentsQuery) {
      const all = yield* venues.instruments(query.exchange, { baseCurrency: query.baseCurrency })
      const wanted = all.filter((i) =>
        query.kind === undefined ? true : query.kind === "option" ? i.kind === "option" : i.kind !== "option"
      )
      // One element per venue-neutral name: the contract in the base currency's own quote first.
      const seen = new Set<string>()
      const out: Array<Json> = []
      for (const i of [...wanted].sort(
        (a, b) => (a.quoteCurrency === "USDC" ? 1 : 0) - (b.quoteCurrency === "USDC" ? 1 : 0)
      )) {
        if (seen.has(i.instrumentName)) continue
        seen.add(i.instrumentName)
        out.push({
          instrumentName: i.instrumentName,
          kind: i.kind,
          ...(i.expiry === undefined ? {} : { expiry: i.expiry }),
          ...(i.strike === undefined ? {} : { strike: Number(decString(i.strike)) }),
          ...(i.optionType === undefined ? {} : { optionType: i.optionType }),
          quoteCurrency: i.quoteCurrency,
          tickSize: Number(decString(i.tickSize)),
          amountStep: Number(decString(i.amountStep)),
          minBlockAmount: Number(decString(i.minBlockAmount))
        })
      }
      return out.sort((a, b) => String(a.instrumentName).localeCompare(String(b.instrumentName)))
    })

    const credentialsList = Effect.fn("Engine.credentialsList")(function* (caller: Caller) {
      yield* requireTrader(caller)
      const rows = yield* accounts.credentialsOfDesk(caller.deskId, { fresh: true })
      return rows.map((r) => ({
        alias: r.alias,
        credentialsId: r.id,
        exchange: exchanges[r.exchange].name,
        exchangeId: exchanges[r.exchange].exchangeId,
        exchangeShortCode: r.exchange,
        isExchangeDefault: r.isExchangeDefault
      }))
    })

    const credentialsGet = Effect.fn("Engine.credentialsGet")(function* (caller: Caller, id: number) {
      yield* requireTrader(caller)
      const row = yield* accounts.credentials(id, { fresh: true })
      if (Option.isNone(row) || row.value.deskId !== caller.deskId)
        return yield* Effect.fail(apiError("credentialsNotFound"))
      const secret = yield* secrets.open(
        row.value.clientSecretSealed,
        credentialsAad(row.value.deskId, row.value.alias)
      )
      return {
        alias: row.value.alias,
        clientId: row.value.clientId,
        clientSecret: secret,
        credentialsId: row.value.id,
        exchangeId: exchanges[row.value.exchange].exchangeId,
        isExchangeDefault: row.value.isExchangeDefault
      }
    })

    const credentialsCreate = Effect.fn("Engine.credentialsCreate")(function* (
      caller: Caller,
      req: CreateExchangeCredentialsRequest
    ) {
      yield* requireTrader(caller)
      const sealed = yield* secrets.seal(req.clientSecret, credentialsAad(caller.deskId, req.alias))
      const id = yield* accounts.insertCredentials({
        deskId: caller.deskId,
        alias: req.alias,
        exchange: req.exchange,
        clientId: req.clientId,
        clientSecretSealed: sealed,
        isExchangeDefault: req.isExchangeDefault ?? false
      })
      return { credentialsId: id }
    })

    const credentialsDelete = Effect.fn("Engine.credentialsDelete")(function* (caller: Caller, id: number) {
      yield* requireTrader(caller)
      const deleted = yield* accounts.deleteCredentials(caller.deskId, id)
      if (!deleted) return yield* Effect.fail(apiError("credentialsNotFound"))
      return { credentialsId: id }
    })

    const otcCounterparties = Effect.fn("Engine.otcCounterparties")(function* (caller: Caller) {
      yield* requireTrader(caller)
      const rows = yield* accounts.counterparties(caller.deskId)
      return rows.map((r) => ({ id: r.id, name: r.name }))
    })

    // ---- bulk block trades --------------------------------------------------------------------

    const bulkBlockTradesOf = Effect.fn("Engine.bulkBlockTrades")(function* (
      caller: Caller,
      req: BulkBlockTradeRequest
    ) {
      yield* requireTrader(caller)
      return yield* bulkBlockTrades(accounts, venues, caller, req)
    })

    return {
      createRfq,
      getRfq,
      listRfqs,
      cancelRfq,
      deleteRfq,
      takerQuotes,
      createQuote,
      updateQuote,
      deleteQuote,
      cancelAllQuotes,
      listQuotes,
      trade,
      legPrices: legPricesOf,
      makers,
      instruments,
      exchangeCredentials: {
        list: credentialsList,
        get: credentialsGet,
        create: credentialsCreate,
        delete: credentialsDelete
      },
      otcCounterparties,
      bulkBlockTrades: bulkBlockTradesOf,
      /** Engine events: subscribe in a scope. */
      events: hub.subscribe,
      /** Live RFQs held in memory (open or settling). */
      liveCount: () => actors.live.size
    }
  })

export type EngineService = Effect.Effect.Success<ReturnType<typeof makeEngine>>

/** The engine's front door: one service with a command or query per operation of the spec. */
export class Engine extends Context.Tag("rfq/Engine")<Engine, EngineService>() {}

/**
 * The engine layer. It needs its stores, venues, pricing, secret box and event hub; it restores
 * live RFQs and reconciles interrupted settlements while it is built, and stops its expiry
 * scheduler when its scope closes.
 */
export const EngineLive = (config: EngineConfig) => Layer.scoped(Engine, makeEngine(config))

export type EngineRequirements = RfqStore | AccountStore | Venues | Pricing | SecretBox | Events | Scope.Scope

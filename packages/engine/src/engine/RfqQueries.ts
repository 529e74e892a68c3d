import { Context, Effect, Either, Layer, Option } from "effect"
import type { InstrumentsQuery, ListQuotesQuery, ListRfqsQuery } from "../api/Queries.js"
import type { LegPricesRequest } from "../api/RfqRequests.js"
import { mayAccess, requireRole } from "../auth/Roles.js"
import { ApiError, apiError } from "../domain/Errors.js"
import { legPrices } from "../domain/LegPrices.js"
import { decString } from "../rfq/Dec.js"
import { type RfqActor, RfqActors } from "../rfq/RfqActors.js"
import type { Caller } from "../rfq/RfqRecord.js"
import { RfqStore } from "../rfq/RfqStore.js"
import { type Json, renderMakerQuote, renderQuoteBook, renderRfq } from "../rfq/RfqView.js"
import { viewOf } from "../rfq/StepEvents.js"
import { canSee, isOwnQuote, isTaker } from "../rfq/Visibility.js"
import { Pricing } from "../services/Pricing.js"
import { Venues } from "../services/Venues.js"
import { ActorAccess } from "./ActorAccess.js"
import { pricingOption } from "./CreateRfq.js"
import { cutPage, type Page, pageStart } from "./Paging.js"
import { venueInstrumentOf } from "./QuoteBuilder.js"

/** What a desk may read: RFQs, quote books, its own quotes, leg prices, listed instruments. */
export interface RfqQueriesService {
  /** One RFQ as the caller's desk sees it; `rfq not found` for one it may not see. */
  readonly getRfq: (caller: Caller, rfqId: number) => Effect.Effect<Json, ApiError>
  /**
   * `getRfq`'s answer when memory alone gives it (the RFQ owned here and in memory, not in doubt,
   * not open past its expiry), without a fiber; undefined when only `getRfq` can answer.
   */
  readonly peekRfq: (caller: Caller, rfqId: number) => Either.Either<Json, ApiError> | undefined
  readonly listRfqs: (caller: Caller, query: ListRfqsQuery) => Effect.Effect<Page, ApiError>
  /** The taker's quote book of its RFQ. */
  readonly takerQuotes: (caller: Caller, rfqId: number) => Effect.Effect<Array<Json>, ApiError>
  /**
   * `takerQuotes`' answer when memory alone gives it (as `peekRfq`), without a fiber and without
   * waiting in the RFQ's mailbox: the book as of the last committed step; undefined otherwise.
   */
  readonly peekTakerQuotes: (
    caller: Caller,
    rfqId: number
  ) => Either.Either<Array<Json>, ApiError> | undefined
  /** The caller desk's own quotes, any status. */
  readonly listQuotes: (caller: Caller, query: ListQuotesQuery) => Effect.Effect<Page, ApiError>
  /** Leg prices that make up a structure price, at each leg's mark and within its band. */
  readonly legPrices: (
    caller: Caller,
    req: LegPricesRequest
  ) => Effect.Effect<
    {
      legs: Array<{ instrumentName: string; direction: "buy" | "sell"; ratio: number; price: number }>
      priceDifference: number
    },
    ApiError
  >
  /** The instruments listed on a venue, one per venue-neutral name. */
  readonly instruments: (caller: Caller, query: InstrumentsQuery) => Effect.Effect<Array<Json>, ApiError>
}

export class RfqQueries extends Context.Tag("rfq/RfqQueries")<RfqQueries, RfqQueriesService>() {}

const make = Effect.gen(function* () {
  const pricing = yield* Pricing
  const store = yield* RfqStore
  const actors = yield* RfqActors
  const access = yield* ActorAccess
  const venues = yield* Venues

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

  /** Whether a read may show the RFQ to the caller: one it can see, not deleted (gone for all). */
  const shownTo = (actor: RfqActor, caller: Caller): boolean =>
    actor.value !== "deleted" && canSee(actor.state.rfq, caller)

  // Reads served from memory are the hot path of the service: no span (it would cost more than
  // the read itself) and no generator; the role check is a plain test (`requireRole`'s) too.
  const getRfq = (caller: Caller, rfqId: number): Effect.Effect<Json, ApiError> =>
    mayAccess(caller.roles, "read")
      ? Effect.flatMap(access.readActor(rfqId), (found) =>
          Option.isNone(found) || !shownTo(found.value, caller)
            ? Effect.fail(apiError("rfqNotFound"))
            : Effect.succeed(renderedRfq(found.value, caller))
        )
      : Effect.fail(apiError("insufficientPermissions"))

  const clock = yield* Effect.clock
  /**
   * The reads answered from memory (`peek…`): the actor when memory alone may show it to the caller,
   * the refusal (`ApiError`) when it may not, undefined when only the Effect path can tell.
   */
  const peekVisible = (caller: Caller, rfqId: number): RfqActor | ApiError | undefined => {
    if (!mayAccess(caller.roles, "read")) return apiError("insufficientPermissions")
    const actor = access.peekReadable(rfqId, clock.unsafeCurrentTimeMillis())
    if (actor === undefined) return undefined
    return shownTo(actor, caller) ? actor : apiError("rfqNotFound")
  }

  const peekRfq = (caller: Caller, rfqId: number): Either.Either<Json, ApiError> | undefined => {
    const actor = peekVisible(caller, rfqId)
    if (actor === undefined) return undefined
    return actor instanceof ApiError ? Either.left(actor) : Either.right(renderedRfq(actor, caller))
  }

  const listRfqs = Effect.fn("Engine.listRfqs")(function* (caller: Caller, query: ListRfqsQuery) {
    yield* requireRole(caller, "read")
    // Only an RFQ the caller can see (as `GET /rfq/{id}` would show it) is a cursor.
    const after = yield* pageStart(query.cursor, (cursor) =>
      Effect.map(actors.actorOf(cursor), (found) =>
        Option.isNone(found) || !shownTo(found.value, caller)
          ? Option.none()
          : Option.some({ createdAt: found.value.state.rfq.createdAt, id: found.value.state.rfq.id })
      )
    )
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
    const { shown: ids, cursor } = cutPage(page.ids, query.limit, (id) => id)
    const results: Array<Json> = []
    for (const id of ids) {
      const found = yield* access.readActor(id)
      if (Option.isNone(found)) continue
      const rendered = renderRfq(viewOf(found.value.value, found.value.state), caller, { single: false })
      if (rendered !== undefined) results.push(rendered)
    }
    return { totalResults: page.total, cursor, results }
  })

  const takerQuotes = Effect.fn("Engine.takerQuotes")(function* (caller: Caller, rfqId: number) {
    yield* requireRole(caller, "read")
    return yield* access.visibleActor(caller, rfqId, (actor) =>
      isTaker(actor.state.rfq, caller)
        ? Effect.succeed(renderQuoteBook(actor.state.rfq, Object.values(actor.state.quotes)))
        : Effect.fail(apiError("rfqNotFound"))
    )
  })

  const peekTakerQuotes = (
    caller: Caller,
    rfqId: number
  ): Either.Either<Array<Json>, ApiError> | undefined => {
    const actor = peekVisible(caller, rfqId)
    if (actor === undefined) return undefined
    if (actor instanceof ApiError) return Either.left(actor)
    const rfq = actor.state.rfq
    return isTaker(rfq, caller)
      ? Either.right(renderQuoteBook(rfq, Object.values(actor.state.quotes)))
      : Either.left(apiError("rfqNotFound"))
  }

  const listQuotes = Effect.fn("Engine.listQuotes")(function* (caller: Caller, query: ListQuotesQuery) {
    yield* requireRole(caller, "read")
    // Only a quote of the caller's desk is a cursor.
    const after = yield* pageStart(query.cursor, (cursor) =>
      Effect.map(store.quote(cursor), (found) =>
        Option.isNone(found) || !isOwnQuote(found.value, caller)
          ? Option.none()
          : Option.some({ createdAt: found.value.createdAt, id: found.value.id })
      )
    )
    const page = yield* store.listQuotes({
      makerDeskId: caller.deskId,
      rfqId: query.rfqId,
      startTime: query.startTime,
      endTime: query.endTime,
      after,
      limit: query.limit + 1
    })
    const { shown, cursor } = cutPage(page.quotes, query.limit, (quote) => quote.id)
    return { totalResults: page.total, cursor, results: shown.map(renderMakerQuote) }
  })

  const legPricesOf = Effect.fn("Engine.legPrices")(function* (caller: Caller, req: LegPricesRequest) {
    yield* requireRole(caller, "read")
    // An RFQ's legs never change: read as `getRfq` reads (no wait in its mailbox behind a write;
    // one in doubt or past its expiry is settled first), then priced outside it.
    const found = yield* access.readActor(req.rfqId)
    if (Option.isNone(found) || !shownTo(found.value, caller))
      return yield* Effect.fail(apiError("rfqNotFound"))
    const rfq = found.value.state.rfq
    const option = pricingOption(rfq)
    const inputs = yield* Effect.forEach(req.legs, (leg, i) =>
      Effect.gen(function* () {
        const stored = rfq.legs.find((l) => l.instrumentName === leg.instrumentName)
        const currency = rfq.quoteCurrencies[option] ?? rfq.quoteCurrency
        const resolved =
          stored?.contracts[option] !== undefined
            ? yield* Effect.provideService(
                venueInstrumentOf(option, leg.instrumentName, stored.contracts[option]),
                Venues,
                venues
              )
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

  const instruments = Effect.fn("Engine.instruments")(function* (caller: Caller, query: InstrumentsQuery) {
    yield* requireRole(caller, "read")
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

  const service: RfqQueriesService = {
    getRfq,
    peekRfq,
    listRfqs,
    takerQuotes,
    peekTakerQuotes,
    listQuotes,
    legPrices: legPricesOf,
    instruments
  }
  return service
})

export const RfqQueriesLive: Layer.Layer<
  RfqQueries,
  never,
  RfqStore | RfqActors | ActorAccess | Venues | Pricing
> = Layer.effect(RfqQueries, make)

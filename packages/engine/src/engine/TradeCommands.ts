import { Clock, Context, Effect, Layer, Option } from "effect"
import { AccountStore } from "../accounts/AccountStore.js"
import type { BulkBlockTradeRequest } from "../api/AccountRequests.js"
import { requireRole } from "../auth/Roles.js"
import { type ApiError, apiError } from "../domain/Errors.js"
import { Mmp } from "../mmp/Mmp.js"
import { acceptRejection } from "../rfq/QuoteRules.js"
import { RfqActors } from "../rfq/RfqActors.js"
import type { Caller, QuoteRecord, RfqRecord } from "../rfq/RfqRecord.js"
import { RfqStore } from "../rfq/RfqStore.js"
import { type Json, renderAllocations, renderTrades, tradeDirectionFor } from "../rfq/RfqView.js"
import { canSee, isTaker } from "../rfq/Visibility.js"
import { Venues } from "../services/Venues.js"
import { waitSpan } from "../services/WaitProbe.js"
import { ActiveQuotes } from "./ActiveQuotes.js"
import { ActorAccess } from "./ActorAccess.js"
import { type BulkResult, bulkBlockTrades } from "./BulkBlockTrades.js"
import { planTrade, settleTrade } from "./Settlement.js"

/** Trading: the taker accepts a quote and it settles on the venue; block trades between desks. */
export interface TradeCommandsService {
  /** Accepts an active quote and settles it, one block trade per settlement account. */
  readonly trade: (
    caller: Caller,
    rfqQuoteId: number
  ) => Effect.Effect<
    { allocations?: Array<Json>; rfqTradeId: number; rfqId: number; trades: Array<Json> },
    ApiError
  >
  /** `POST /block-trade/bulk`: each block trade on its own, in request order. */
  readonly bulkBlockTrades: (
    caller: Caller,
    req: BulkBlockTradeRequest
  ) => Effect.Effect<Array<BulkResult>, ApiError>
}

export class TradeCommands extends Context.Tag("rfq/TradeCommands")<TradeCommands, TradeCommandsService>() {}

const make = Effect.gen(function* () {
  const store = yield* RfqStore
  const actors = yield* RfqActors
  const access = yield* ActorAccess
  const index = yield* ActiveQuotes
  const accounts = yield* AccountStore
  const venues = yield* Venues
  const mmp = yield* Mmp
  const now = () => Clock.currentTimeMillis

  /** What a taker is told when the maker's protection stops its accept (docs/api.md, "Accepting a frozen desk's quote"). */
  const frozenAnswer = (baseCurrency: string, quoteId: number) =>
    apiError(
      "mmpFrozen",
      `the maker's market-maker protection froze its ${baseCurrency} quotes; quote ${quoteId} was cancelled`
    )

  /**
   * The same answer when the trip's cancellation reached the quote before the accept did: a
   * cancelled quote of a desk frozen now in the RFQ's currency. Whichever of the two got there
   * first, the taker racing the trip hears `mmp frozen`, not that the quote is missing.
   */
  const cancelledByTrip = (rfq: RfqRecord, quote: Option.Option<QuoteRecord>) =>
    Option.isNone(quote) || quote.value.status !== "cancelled"
      ? Effect.void
      : Effect.mapError(mmp.refuseIfFrozen(quote.value.makerDeskId, rfq.baseCurrency), () =>
          frozenAnswer(rfq.baseCurrency, quote.value.id)
        )

  const trade = Effect.fnUntraced(function* (caller: Caller, rfqQuoteId: number) {
    yield* requireRole(caller, "write")
    const entry = yield* index.find(rfqQuoteId)
    // Built only when needed: an ApiError is costly to make (its schema checks its fields).
    const missing = () => apiError("recordNotFound", `quote ${rfqQuoteId} is not an active quote`)
    if (Option.isNone(entry)) {
      // A quote that is no longer active: its own taker learns why when the RFQ itself ended,
      // the same answer as before the expiry was processed; anyone else learns nothing.
      const stored = yield* store.quote(rfqQuoteId)
      if (Option.isSome(stored)) {
        const found = yield* access.readActor(stored.value.rfqId)
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
          if (stored.value.status === "expired") return yield* Effect.fail(apiError("quoteExpired"))
          yield* cancelledByTrip(found.value.state.rfq, stored)
        }
      }
      return yield* Effect.fail(missing())
    }
    const rfqId = entry.value.rfqId
    // A live quote on an RFQ the caller may not see is answered like a missing one (OWASP API1):
    // "rfq not found" would tell an outsider that the quote id is live.
    const holder = yield* actors.actorOf(rfqId)
    if (Option.isNone(holder) || !canSee(holder.value.state.rfq, caller)) return yield* Effect.fail(missing())
    return yield* access.visibleActor(caller, rfqId, (actor) =>
      Effect.gen(function* () {
        const at = yield* now()
        const rejected = acceptRejection(actor.state, actor.value, rfqQuoteId, caller, at)
        if (rejected !== undefined) {
          // Expired at its `validUntil` by this very mailbox, just before this accept (issue 16).
          const gone =
            actor.value === "open" &&
            actor.state.quotes[rfqQuoteId] === undefined &&
            isTaker(actor.state.rfq, caller)
          const stored = gone ? yield* store.quote(rfqQuoteId) : Option.none()
          if (Option.exists(stored, (q) => q.status === "expired"))
            return yield* Effect.fail(apiError("quoteExpired"))
          yield* cancelledByTrip(actor.state.rfq, stored)
          return yield* Effect.fail(rejected)
        }
        const quote = actor.state.quotes[rfqQuoteId]!
        const accountsCount = (actor.state.rfq.settlementAccounts[quote.settlementOption] ?? []).length
        const tradeId = yield* store.nextTradeId
        const allocationIds: Array<number> = []
        for (let i = 0; i < accountsCount; i++) allocationIds.push(yield* store.nextAllocationId)
        const planned = yield* planTrade(actor.state.rfq, quote, { tradeId, allocationIds, now: at })
        // The maker's protection decides the fill before any venue hears of it (`mmp/Mmp.ts`).
        const baseCurrency = actor.state.rfq.baseCurrency
        if ((yield* mmp.admitFill(actor.state.rfq, quote, tradeId, at)) === "Frozen") {
          yield* access
            .step(actor, { type: "QUOTE.CLOSE", quoteIds: [rfqQuoteId], status: "cancelled", now: at })
            .pipe(Effect.ignore)
          return yield* Effect.fail(frozenAnswer(baseCurrency, rfqQuoteId))
        }
        const unfilled = { makerDeskId: quote.makerDeskId, id: tradeId, filledAmount: "0" }
        yield* access
          .step(actor, { type: "ACCEPT", quoteId: rfqQuoteId, caller, now: at, trade: planned })
          .pipe(Effect.onError(() => mmp.settleFill(unfilled, baseCurrency)))
        // Fresh keys (this command planned them): nothing to reconcile, straight to the venue.
        const settled = yield* settleTrade(actor.state.rfq, quote, planned, now, { reconcile: false })
        yield* access.step(actor, { type: "SETTLED", trade: settled, now: yield* now() })
        yield* mmp.settleFill(settled, baseCurrency)
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
  }, waitSpan("Engine.trade"))

  const bulkBlockTradesOf = Effect.fnUntraced(function* (caller: Caller, req: BulkBlockTradeRequest) {
    yield* requireRole(caller, "write")
    return yield* bulkBlockTrades(accounts, venues, caller, req)
  }, waitSpan("Engine.bulkBlockTrades"))

  const service: TradeCommandsService = { trade, bulkBlockTrades: bulkBlockTradesOf }
  return service
})

export const TradeCommandsLive: Layer.Layer<
  TradeCommands,
  never,
  RfqStore | RfqActors | ActorAccess | ActiveQuotes | AccountStore | Venues | Mmp
> = Layer.effect(TradeCommands, make)

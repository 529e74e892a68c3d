import { Context, Effect, Layer } from "effect"
import type { PublicTradesQuery } from "../api/TradeTapeRequests.js"
import { requireRole } from "../auth/Roles.js"
import type { ApiError } from "../domain/Errors.js"
import type { Caller } from "../rfq/RfqRecord.js"
import { RfqStore } from "../rfq/RfqStore.js"
import { renderPublicTrade } from "../rfq/TradeTapeView.js"
import { waitSpan } from "../services/WaitProbe.js"
import { cutPage, type Page, pageStart } from "./Paging.js"

/**
 * The public block-trade tape (issue 16): every trade that printed, for any authenticated caller
 * (a viewer too), newest first, paged like the other lists. What an element shows is
 * `rfq/TradeTapeView.ts`; the live counterpart is the `trades` channel (`services/Events.ts`).
 */
export interface TradeTapeService {
  readonly publicTrades: (caller: Caller, query: PublicTradesQuery) => Effect.Effect<Page, ApiError>
}

export class TradeTape extends Context.Tag("rfq/TradeTape")<TradeTape, TradeTapeService>() {}

const make = Effect.gen(function* () {
  const store = yield* RfqStore

  const publicTrades = Effect.fnUntraced(function* (caller: Caller, query: PublicTradesQuery) {
    yield* requireRole(caller, "read")
    // Every print is a cursor (the tape is public); any other id is not.
    const after = yield* pageStart(query.cursor, store.publicTradeAt)
    const page = yield* store.publicTrades({
      baseCurrency: query.baseCurrency,
      startTime: query.startTime,
      endTime: query.endTime,
      after,
      limit: query.limit + 1
    })
    const { shown, cursor } = cutPage(page.trades, query.limit, (p) => p.trade.id)
    return {
      totalResults: page.total,
      cursor,
      results: shown.map((p) => renderPublicTrade(p.rfq, p.trade, p.quote))
    }
  }, waitSpan("Engine.publicTrades"))

  const service: TradeTapeService = { publicTrades }
  return service
})

export const TradeTapeLive: Layer.Layer<TradeTape, never, RfqStore> = Layer.effect(TradeTape, make)

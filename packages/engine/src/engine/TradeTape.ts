import { Context, Effect, Layer, Option } from "effect"
import type { PublicTradesQuery } from "../api/TradeTapeRequests.js"
import { requireRole } from "../auth/Roles.js"
import { type ApiError, apiError } from "../domain/Errors.js"
import type { Caller } from "../rfq/RfqRecord.js"
import { RfqStore, type TapePosition } from "../rfq/RfqStore.js"
import { renderPublicTrade } from "../rfq/TradeTapeView.js"
import { waitSpan } from "../services/WaitProbe.js"
import type { Page } from "./RfqQueries.js"

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
    // The cursor is the id of the last print of the previous page; its keyset is (createdAt, id).
    // Any id that is not a print, existing or not, gets the same 400.
    let after: TapePosition | undefined
    if (query.cursor !== undefined && query.cursor !== 0) {
      const found = yield* store.publicTradeAt(query.cursor)
      if (Option.isNone(found)) {
        return yield* Effect.fail(
          apiError("invalidRequest", `cursor: ${query.cursor} is not a cursor of this list`)
        )
      }
      after = found.value
    }
    // One row past the page says whether another page follows: the last page's cursor is 0.
    const page = yield* store.publicTrades({
      baseCurrency: query.baseCurrency,
      startTime: query.startTime,
      endTime: query.endTime,
      after,
      limit: query.limit + 1
    })
    const shown = page.trades.slice(0, query.limit)
    return {
      totalResults: page.total,
      cursor: page.trades.length > query.limit ? shown[shown.length - 1]!.trade.id : 0,
      results: shown.map((p) => renderPublicTrade(p.rfq, p.trade, p.quote))
    }
  }, waitSpan("Engine.publicTrades"))

  const service: TradeTapeService = { publicTrades }
  return service
})

export const TradeTapeLive: Layer.Layer<TradeTape, never, RfqStore> = Layer.effect(TradeTape, make)

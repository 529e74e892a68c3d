import { type Direction, oppositeDirection } from "../domain/Primitives.js"
import { decNumber } from "./Dec.js"
import type { QuoteRecord, RfqRecord, TradeRecord } from "./RfqRecord.js"
import type { Json } from "./RfqView.js"

/**
 * The public block-trade tape (issue 16): what every authenticated session may learn of a traded
 * RFQ, the same element over REST (`GET /v1/trades/public`) and on the `trades` channel. The one
 * home of what the tape shows; everything else of the trade stays with its parties.
 *
 * It is built from an allow-list of fields, never from the RFQ's or the trade's own rendering: no
 * desk, user, maker id, account, label, RFQ id or quote id can reach it. Directions are the
 * taker's side of each leg (and of the hedge), and only when the RFQ was not anonymous: an
 * anonymous taker's side would tell the market which way it traded.
 */

/** Whether the trade prints on the tape: some of it settled (a wholly failed trade prints nothing). */
export const printsOnTape = (trade: TradeRecord): boolean => decNumber(trade.filledAmount) > 0

/** The taker's side of a leg listed as `listed`: the RFQ lists its legs as the structure's buyer. */
const takerSide = (trade: TradeRecord, listed: Direction): Direction =>
  oppositeDirection(trade.makerDirection) === "buy" ? listed : oppositeDirection(listed)

/**
 * The tape element of a settled trade: `quote` is the accepted quote (its leg prices), `amount`
 * the amount that settled (a partial fill prints what filled).
 */
export const renderPublicTrade = (rfq: RfqRecord, trade: TradeRecord, quote: QuoteRecord): Json => {
  const side = (listed: Direction) => (rfq.anonymous ? {} : { direction: takerSide(trade, listed) })
  const priceOf = new Map(quote.legs.map((l) => [l.instrumentName, l.price]))
  return {
    tradeId: trade.id,
    createdAt: trade.createdAt,
    baseCurrency: rfq.baseCurrency,
    kind: rfq.kind,
    strategy: rfq.strategy,
    description: rfq.description,
    legs: rfq.legs.map((leg) => ({
      instrumentName: leg.instrumentName,
      ...side(leg.direction),
      ratio: decNumber(leg.ratio),
      price: decNumber(priceOf.get(leg.instrumentName) ?? "0")
    })),
    ...(rfq.hedge === undefined || quote.hedge === undefined
      ? {}
      : {
          hedge: {
            instrumentName: rfq.hedge.instrumentName,
            ...side(rfq.hedge.direction),
            price: decNumber(quote.hedge.price)
          }
        }),
    price: decNumber(trade.price),
    amount: decNumber(trade.filledAmount),
    settlementOption: trade.settlementOption
  }
}

import { oppositeDirection } from "../domain/Primitives.js"
import type { SettlementOption } from "../domain/Primitives.js"
import { decCmp, decNumber } from "./Dec.js"
import type { Caller, QuoteRecord, RfqRecord, TradeRecord } from "./RfqRecord.js"
import { canSee, canSeeQuote, isTaker, isTradeParty } from "./Visibility.js"

/**
 * How each caller sees an RFQ and its quotes, for REST, the WebSocket methods and the live channels
 * alike. Who sees what is `Visibility.ts`; this renders it:
 * - `label`, `settlementCredentials` and `tradeAllocations` only to the taker (the last two only on
 *   a single fetch);
 * - trade fields only to a party of the trade;
 * - every direction of a trade is the caller's own side.
 */
export interface RfqView {
  readonly rfq: RfqRecord
  readonly status: "open" | "filled" | "filledPartial" | "cancelled" | "expired"
  readonly quotes: ReadonlyArray<QuoteRecord>
  readonly trade?: TradeRecord | undefined
}

export type Json = Record<string, unknown>

const first = (rfq: RfqRecord): SettlementOption => rfq.settlementOptions[0]!

/** 31-bit FNV-1a of the structure: the same legs and hedge give the same product id. */
export const productIdOf = (rfq: RfqRecord): number => {
  const key = [
    rfq.baseCurrency,
    ...rfq.legs.map((l) => `${l.direction}:${l.ratio}:${l.instrumentName}`),
    rfq.hedge === undefined ? "" : `h:${rfq.hedge.direction}:${rfq.hedge.instrumentName}`
  ].join("|")
  let h = 0x811c9dc5
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 1 || 1
}

/** The caller's own side of the trade. */
export const tradeDirectionFor = (trade: TradeRecord, rfq: RfqRecord, caller: Caller) =>
  isTaker(rfq, caller) ? oppositeDirection(trade.makerDirection) : trade.makerDirection

/** `validUntil` of a quote element, when the maker set one (issue 16). */
const validUntilOf = (q: QuoteRecord): Json =>
  q.validUntil === undefined ? {} : { validUntil: q.validUntil }

const quoteSummary = (q: QuoteRecord): Json => ({
  rfqQuoteId: q.id,
  price: decNumber(q.price),
  amount: decNumber(q.amount),
  makers: [q.makerId],
  ...validUntilOf(q),
  createdAt: q.createdAt
})

/** The RFQ object of the spec as `caller` sees it, or undefined when the caller may not see it. */
export const renderRfq = (
  view: RfqView,
  caller: Caller,
  options: { readonly single: boolean }
): Json | undefined => {
  const { rfq, trade } = view
  if (!canSee(rfq, caller)) return undefined
  const taker = isTaker(rfq, caller)
  const opt = first(rfq)
  const out: Json = {
    rfqId: rfq.id,
    productId: productIdOf(rfq),
    ...(taker && rfq.label !== undefined ? { label: rfq.label } : {}),
    kind: rfq.kind,
    strategy: rfq.strategy,
    description: rfq.description,
    status: view.status,
    baseCurrency: rfq.baseCurrency,
    quoteCurrency: rfq.quoteCurrency,
    quoteCurrencies: rfq.quoteCurrencies,
    amount: decNumber(rfq.amount),
    anonymous: rfq.anonymous,
    role: taker ? "taker" : "maker",
    markPrice: decNumber(rfq.markPrice),
    legs: rfq.legs.map((l) => ({
      instrumentId: l.contracts[opt]?.instrumentId ?? 0,
      instrumentName: l.instrumentName,
      direction: l.direction,
      ratio: decNumber(l.ratio),
      ...(l.expiry === undefined ? {} : { expiry: l.expiry }),
      amount: decNumber(l.amount)
    })),
    ...(rfq.hedge === undefined
      ? {}
      : {
          hedge: {
            amount: decNumber(rfq.hedge.amount),
            direction: rfq.hedge.direction,
            ...(rfq.hedge.expiry === undefined ? {} : { expiry: rfq.hedge.expiry }),
            ...(rfq.hedge.contracts[opt] === undefined
              ? {}
              : { instrumentId: rfq.hedge.contracts[opt].instrumentId }),
            instrumentName: rfq.hedge.instrumentName,
            price: decNumber(rfq.hedge.price)
          }
        }),
    settlementOptions: rfq.settlementOptions,
    quotes: view.quotes.filter((q) => canSeeQuote(rfq, q, caller)).map(quoteSummary),
    createdAt: rfq.createdAt,
    expiresAt: rfq.expiresAt
  }
  if (taker && options.single) {
    out.settlementCredentials = rfq.settlementOptions.flatMap((o) =>
      (rfq.settlementAccounts[o] ?? []).map((a) => ({
        settlementOption: o,
        credentialsId: a.credentialsId,
        percentage: decNumber(a.percentage)
      }))
    )
  }
  if (isTradeParty(trade, rfq, caller)) {
    const direction = tradeDirectionFor(trade, rfq, caller)
    out.tradeDirection = direction
    out.tradePrice = decNumber(trade.price)
    out.tradeAmount = decNumber(trade.amount)
    out.tradeCreatedAt = trade.createdAt
    out.tradeId = trade.id
    out.filledAmount = decNumber(trade.filledAmount)
    out.trades = renderTrades(trade, direction)
    if (taker && options.single) out.tradeAllocations = renderAllocations(trade)
  } else {
    out.trades = []
  }
  return out
}

/** One element per block trade that settled: the caller's side, the structure price, the account's amount. */
export const renderTrades = (trade: TradeRecord, direction: "buy" | "sell"): Array<Json> =>
  trade.allocations
    .filter((a) => a.status === "filled")
    .map((a) => ({
      direction,
      price: decNumber(trade.price),
      amount: decNumber(a.amount),
      exchangeTradeId: a.exchangeTradeId ?? "",
      createdAt: a.updatedAt
    }))

export const renderAllocations = (trade: TradeRecord): Array<Json> =>
  trade.allocations.map((a) => ({
    allocationId: a.id,
    settlementOption: trade.settlementOption,
    credentialsId: a.credentialsId,
    percentage: decNumber(a.percentage),
    amount: decNumber(a.amount),
    status: a.status,
    ...(a.exchangeTradeId === undefined ? {} : { exchangeTradeId: a.exchangeTradeId }),
    ...(a.reason === undefined ? {} : { reason: a.reason })
  }))

/** A quote as the taker sees it in its bids and asks (contract, "Leg prices, bulk block trades, makers"). */
export const renderTakerQuote = (q: QuoteRecord): Json => ({
  rfqQuoteId: q.id,
  price: decNumber(q.price),
  amount: decNumber(q.amount),
  settlementOption: q.settlementOption,
  quoteCurrency: q.quoteCurrency,
  makers: [q.makerId],
  legs: q.legs.map((l) => ({
    instrumentId: l.instrumentId,
    instrumentName: l.instrumentName,
    direction: l.direction,
    price: decNumber(l.price),
    amount: decNumber(l.amount)
  })),
  ...(q.hedge === undefined ? {} : { hedge: renderQuoteHedge(q.hedge) }),
  ...validUntilOf(q),
  createdAt: q.createdAt
})

const renderQuoteHedge = (h: NonNullable<QuoteRecord["hedge"]>): Json => ({
  instrumentId: h.instrumentId,
  instrumentName: h.instrumentName,
  direction: h.direction,
  price: decNumber(h.price),
  amount: decNumber(h.amount)
})

/** A quote as its maker sees it (`GET /rfq/quotes`). */
export const renderMakerQuote = (q: QuoteRecord): Json => ({
  rfqQuoteId: q.id,
  rfqId: q.rfqId,
  ...(q.label === undefined ? {} : { label: q.label }),
  direction: q.direction,
  price: decNumber(q.price),
  amount: decNumber(q.amount),
  settlementOption: q.settlementOption,
  settlementCredentials: q.settlementCredentials,
  quoteCurrency: q.quoteCurrency,
  status: q.status,
  legs: q.legs.map((l) => ({
    instrumentId: l.instrumentId,
    instrumentName: l.instrumentName,
    price: decNumber(l.price),
    amount: decNumber(l.amount)
  })),
  ...(q.hedge === undefined ? {} : { hedge: renderQuoteHedge(q.hedge) }),
  ...validUntilOf(q),
  createdAt: q.createdAt
})

/** The taker's quote book: one element per settlement option with quotes, ladders best first. */
export const renderQuoteBook = (rfq: RfqRecord, quotes: ReadonlyArray<QuoteRecord>): Array<Json> =>
  rfq.settlementOptions.flatMap((option) => {
    const own = quotes.filter((q) => q.settlementOption === option)
    if (own.length === 0) return []
    const byPrice = (sign: 1 | -1) => (a: QuoteRecord, b: QuoteRecord) => {
      const d = decCmp(a.price, b.price)
      return d !== 0 ? sign * d : a.createdAt - b.createdAt || a.id - b.id
    }
    return [
      {
        rfqId: rfq.id,
        settlementOption: option,
        quoteCurrency: rfq.quoteCurrencies[option],
        bids: own
          .filter((q) => q.direction === "buy")
          .sort(byPrice(-1))
          .map(renderTakerQuote),
        asks: own
          .filter((q) => q.direction === "sell")
          .sort(byPrice(1))
          .map(renderTakerQuote)
      }
    ]
  })

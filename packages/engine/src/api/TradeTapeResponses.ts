import { Schema } from "effect"
import { BaseCurrency, Direction, SettlementOption } from "../domain/Primitives.js"
import { Decimal, Int, optional, pageOf, responseObject, Text, Timestamp } from "./ResponseFields.js"

/**
 * The public block-trade tape's elements (issue 16): what every authenticated caller may learn of
 * a traded RFQ. No desk, maker, account, label, RFQ or quote id; directions are the taker's side
 * and only for an RFQ that was not anonymous (`rfq/TradeTapeView.ts#renderPublicTrade`).
 */

const takerSide = optional(
  Direction.annotations({ description: "The taker's side; absent when the RFQ was anonymous." })
)

export const PublicTradeLeg = responseObject("PublicTradeLeg", "A leg of a printed block trade.", {
  instrumentName: Text,
  direction: takerSide,
  ratio: Decimal,
  price: Decimal.annotations({ description: "The traded leg price, in the quote currency." })
})
export type PublicTradeLeg = typeof PublicTradeLeg.Type

export const PublicTradeHedge = responseObject("PublicTradeHedge", "The hedge of a printed block trade.", {
  instrumentName: Text,
  direction: takerSide,
  price: Decimal
})
export type PublicTradeHedge = typeof PublicTradeHedge.Type

export const PublicTrade = responseObject("PublicTrade", "A block trade on the public tape.", {
  tradeId: Int,
  createdAt: Timestamp.annotations({ description: "When the quote was accepted (unix ms)." }),
  baseCurrency: BaseCurrency,
  kind: Text,
  strategy: Text,
  description: Text,
  legs: Schema.Array(PublicTradeLeg),
  hedge: optional(PublicTradeHedge),
  price: Decimal.annotations({ description: "The structure price traded." }),
  amount: Decimal.annotations({
    description: "The amount that settled (a partial fill prints what filled)."
  }),
  settlementOption: SettlementOption
})
export type PublicTrade = typeof PublicTrade.Type

export const PublicTradePage = pageOf(
  "PublicTradePage",
  "A page of `GET /trades/public`, newest first.",
  PublicTrade
)
export type PublicTradePage = typeof PublicTradePage.Type

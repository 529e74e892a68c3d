import type { BigDecimal } from "effect"
import { type AccountAllocation, allocateTrade, type TradeShape } from "../domain/Allocation.js"
import type { SettlementOption } from "../domain/Primitives.js"
import type { VenueLegAmounts } from "../domain/Split.js"
import { dec } from "./Dec.js"
import type { Dec, RfqRecord } from "./RfqRecord.js"

/**
 * The RFQ's side of the allocation arithmetic (`domain/Allocation.ts`): its settlement shape on one
 * venue and its accounts per option. Settlement and split rule 4 at quote time (`SplitRules.ts`)
 * both allocate through these, so the amounts a quote was checked with are the amounts that trade.
 */

/** Amount rules as the RFQ actor holds them (a candidate's `LegMarket`), as decimals. */
export const amountRulesOf = (market: {
  readonly amountStep: Dec
  readonly minBlockAmount: Dec
}): VenueLegAmounts => ({ amountStep: dec(market.amountStep), minBlockAmount: dec(market.minBlockAmount) })

/** The RFQ on one venue: its amount, legs and hedge with that venue's rules (legs in RFQ order). */
export const tradeShapeOf = (
  rfq: Pick<RfqRecord, "amount" | "legs" | "hedge">,
  legRules: ReadonlyArray<VenueLegAmounts>,
  hedgeRules: VenueLegAmounts | undefined
): TradeShape => ({
  rfqAmount: dec(rfq.amount),
  legs: rfq.legs.map((leg, i) => ({
    instrumentName: leg.instrumentName,
    ratio: dec(leg.ratio),
    rules: legRules[i]!
  })),
  hedge:
    rfq.hedge === undefined || hedgeRules === undefined
      ? undefined
      : { instrumentName: rfq.hedge.instrumentName, amount: dec(rfq.hedge.amount), rules: hedgeRules }
})

/** The taker's accounts for `option` as the split arithmetic takes them. */
export const accountsOf = (rfq: Pick<RfqRecord, "settlementAccounts">, option: SettlementOption) =>
  (rfq.settlementAccounts[option] ?? []).map((a) => ({
    credentialsId: a.credentialsId,
    percentage: dec(a.percentage)
  }))

/** What each of the option's accounts trades when `tradeAmount` of the RFQ trades there. */
export const allocateRfqTrade = (
  rfq: Pick<RfqRecord, "settlementAccounts">,
  option: SettlementOption,
  tradeAmount: BigDecimal.BigDecimal,
  shape: TradeShape
): ReadonlyArray<AccountAllocation> => allocateTrade(tradeAmount, accountsOf(rfq, option), shape)

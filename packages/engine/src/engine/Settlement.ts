import { BigDecimal, Effect, Either, Option } from "effect"
import { AccountStore } from "../accounts/AccountStore.js"
import { accountAmounts } from "../domain/Allocation.js"
import type { SettlementOption } from "../domain/Primitives.js"
import { allocateRfqTrade, tradeShapeOf } from "../rfq/AllocationRules.js"
import { dec, decString } from "../rfq/Dec.js"
import { makerLegDirection } from "../rfq/QuoteRules.js"
import type { AllocationRecord, QuoteRecord, RfqRecord, RfqState, TradeRecord } from "../rfq/RfqRecord.js"
import { type BlockTradeLeg, type ExecutedBlockTrade, Venues } from "../services/Venues.js"
import { venueInstrumentOf } from "./QuoteBuilder.js"

/**
 * Settlement of an accepted quote: the accounts of the quote's settlement option, the split of the
 * traded amount on the venue's step, and one block trade per account, each under its own
 * idempotency key so that a retry (or a restart's reconciliation) never executes it twice.
 */
export const planTrade = (
  rfq: RfqRecord,
  quote: QuoteRecord,
  ids: { readonly tradeId: number; readonly allocationIds: ReadonlyArray<number>; readonly now: number }
) =>
  Effect.gen(function* () {
    const option = quote.settlementOption
    const accounts = rfq.settlementAccounts[option] ?? []
    const { shape } = yield* contractsAt(rfq, option)
    const amounts = allocateRfqTrade(rfq, option, dec(quote.amount), shape)
    const allocations: Array<AllocationRecord> = accounts.map((a, i) => ({
      id: ids.allocationIds[i]!,
      credentialsId: a.credentialsId,
      percentage: a.percentage,
      amount: decString(amounts[i]!.share),
      status: "pending",
      idempotencyKey: `rfq-${rfq.id}-trade-${ids.tradeId}-account-${a.credentialsId}`,
      updatedAt: ids.now
    }))
    const trade: TradeRecord = {
      id: ids.tradeId,
      rfqId: rfq.id,
      quoteId: quote.id,
      makerId: quote.makerId,
      makerDeskId: quote.makerDeskId,
      settlementOption: option,
      makerDirection: quote.direction,
      price: quote.price,
      amount: quote.amount,
      filledAmount: "0",
      createdAt: ids.now,
      allocations
    }
    return trade
  })

/** The venue contracts of the RFQ's legs and hedge on `option`, and the RFQ's shape there. */
const contractsAt = (rfq: RfqRecord, option: SettlementOption) =>
  Effect.gen(function* () {
    const legs = yield* Effect.forEach(rfq.legs, (leg) =>
      venueInstrumentOf(option, leg.instrumentName, leg.contracts[option])
    )
    const hedge =
      rfq.hedge === undefined
        ? undefined
        : yield* venueInstrumentOf(option, rfq.hedge.instrumentName, rfq.hedge.contracts[option])
    return { legs, hedge, shape: tradeShapeOf(rfq, legs, hedge) }
  })

/**
 * The legs of one allocation's block trade: every RFQ leg and the hedge, at the quote's prices, in
 * the amounts `accountAmounts` gives the allocation's share (the amounts the quote was checked
 * with), each on the maker's side.
 */
const blockTradeLegs = (
  rfq: RfqRecord,
  quote: QuoteRecord,
  contracts: Effect.Effect.Success<ReturnType<typeof contractsAt>>,
  allocation: AllocationRecord
): Array<BlockTradeLeg> => {
  const legs: Array<BlockTradeLeg> = []
  const { legs: instruments, hedge: hedgeInstrument, shape } = contracts
  const amounts = accountAmounts(dec(allocation.amount), shape)
  for (const [i, leg] of rfq.legs.entries()) {
    legs.push({
      instrument: instruments[i]!,
      direction: makerLegDirection(quote.direction, leg),
      price: dec(quote.legs[i]!.price),
      amount: amounts.legs[i]!
    })
  }
  if (rfq.hedge !== undefined && hedgeInstrument !== undefined && amounts.hedge !== undefined) {
    // A hedged RFQ always trades its hedge: an amount the venue refuses fails the allocation
    // rather than leaving the account unhedged.
    legs.push({
      instrument: hedgeInstrument,
      direction: makerLegDirection(quote.direction, rfq.hedge),
      price: dec(quote.hedge?.price ?? rfq.hedge.price),
      amount: amounts.hedge
    })
  }
  return legs
}

const settledAllocation = (
  a: AllocationRecord,
  executed: ExecutedBlockTrade,
  now: number
): AllocationRecord => ({
  ...a,
  status: "filled",
  exchangeTradeId: executed.blockTradeId,
  updatedAt: now
})

/**
 * Executes (or, after a crash, reconciles) every pending allocation of `trade` and returns the trade
 * with their outcomes. With `reconcile`, a pending allocation may have reached the venue before (a
 * command cut off, a restart): one the venue already executed under its key is taken as filled
 * without a second execution, one it never saw is executed now. Without it the allocations were
 * planned by this very command and their keys never sent anywhere, so nothing is looked up first.
 */
export const settleTrade = (
  rfq: RfqRecord,
  quote: QuoteRecord,
  trade: TradeRecord,
  now: () => Effect.Effect<number>,
  options: { readonly reconcile: boolean }
) =>
  Effect.gen(function* () {
    const venues = yield* Venues
    const accounts = yield* AccountStore
    const option = trade.settlementOption
    const makerRow = yield* accounts.credentials(quote.settlementCredentials)
    // The venue contracts once for every allocation (a contract no longer listed fails each of them).
    const contracts = yield* Effect.either(contractsAt(rfq, option))
    const allocations = yield* Effect.forEach(
      trade.allocations,
      (allocation) =>
        Effect.gen(function* () {
          if (allocation.status !== "pending") return allocation
          if (options.reconcile) {
            const known = yield* venues.findByKey(option, allocation.idempotencyKey)
            if (Option.isSome(known)) return settledAllocation(allocation, known.value, yield* now())
          }
          const takerRow = yield* accounts.credentials(allocation.credentialsId)
          if (Option.isNone(takerRow) || Option.isNone(makerRow)) {
            return {
              ...allocation,
              status: "failed" as const,
              reason: "settlement credentials no longer exist",
              updatedAt: yield* now()
            }
          }
          if (Either.isLeft(contracts)) {
            return {
              ...allocation,
              status: "failed" as const,
              reason: contracts.left.message,
              updatedAt: yield* now()
            }
          }
          const result = yield* venues
            .executeBlockTrade({
              venue: option,
              idempotencyKey: allocation.idempotencyKey,
              maker: { credentialsId: makerRow.value.id, clientId: makerRow.value.clientId },
              taker: { credentialsId: takerRow.value.id, clientId: takerRow.value.clientId },
              legs: blockTradeLegs(rfq, quote, contracts.right, allocation)
            })
            .pipe(Effect.either)
          const at = yield* now()
          return Either.isRight(result)
            ? settledAllocation(allocation, result.right, at)
            : { ...allocation, status: "failed" as const, reason: result.left.reason, updatedAt: at }
        }),
      // One account (no split) needs no fiber of its own.
      { concurrency: trade.allocations.length > 1 ? "unbounded" : 1 }
    )
    const filled = allocations
      .filter((a) => a.status === "filled")
      .reduce((acc, a) => BigDecimal.sum(acc, dec(a.amount)), BigDecimal.unsafeFromString("0"))
    return { ...trade, allocations, filledAmount: decString(filled) } satisfies TradeRecord
  })

/**
 * The trade an RFQ was left settling with (a command cut off, a write in doubt, a restart),
 * settled now: by the allocations' idempotency keys, so no block trade runs twice. Nothing when the
 * RFQ holds no trade to settle.
 */
export const finishTrade = (state: RfqState, now: () => Effect.Effect<number>) =>
  Effect.gen(function* () {
    const trade = state.trade
    const quote = trade === undefined ? undefined : state.quotes[trade.quoteId]
    if (trade === undefined || quote === undefined) return undefined
    return yield* settleTrade(state.rfq, quote, trade, now, { reconcile: true })
  })

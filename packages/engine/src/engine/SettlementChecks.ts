import { BigDecimal, Effect, Either } from "effect"
import type { CredentialsRow } from "../accounts/AccountStore.js"
import { allocateTrade, type TradeShape, validateMinimumBlockAmounts } from "../domain/Allocation.js"
import { isMultipleOf, roundToStep } from "../domain/Decimal.js"
import { apiError } from "../domain/Errors.js"
import type { Direction, SettlementOption } from "../domain/Primitives.js"
import { splitAmountStep } from "../domain/Split.js"
import { decString } from "../rfq/Dec.js"
import type { SettlementAccount } from "../rfq/RfqRecord.js"
import { Pricing } from "../services/Pricing.js"
import { type BlockTradeLeg, type VenueInstrument, Venues } from "../services/Venues.js"

/**
 * Split rules 4 and 5 of `POST /rfq/{id}`, the hedge included: when the whole RFQ amount trades,
 * every account of every settlement option meets the venue's minimum block amount and amount step
 * on every leg and on its share of the hedge (rule 4), and passes the venue's block-trade
 * simulation with exactly those amounts (rule 5). The amounts come from `allocateTrade`, the
 * arithmetic settlement books with.
 */

/** A leg (or the hedge) of the RFQ being created, with its contract on every chosen venue. */
export interface CheckedLeg {
  readonly instrumentName: string
  readonly direction: Direction
  readonly contracts: Partial<Record<SettlementOption, VenueInstrument>>
}

export interface SettlementCheckInput {
  /** The RFQ id being created (the simulation's idempotency key names it). */
  readonly rfqId: number
  readonly amount: BigDecimal.BigDecimal
  readonly options: ReadonlyArray<SettlementOption>
  /** True when the accounts came from `settlementAccounts`. */
  readonly split: boolean
  readonly legs: ReadonlyArray<CheckedLeg & { readonly ratio: BigDecimal.BigDecimal }>
  readonly hedge?: (CheckedLeg & { readonly amount: BigDecimal.BigDecimal }) | undefined
  readonly accounts: Partial<Record<SettlementOption, ReadonlyArray<SettlementAccount>>>
  /** The taker desk's credentials (every account was checked to be among them). */
  readonly desk: ReadonlyArray<CredentialsRow>
}

const shapeOn = (input: SettlementCheckInput, option: SettlementOption): TradeShape => ({
  rfqAmount: input.amount,
  legs: input.legs.map((l) => ({
    instrumentName: l.instrumentName,
    ratio: l.ratio,
    rules: l.contracts[option]!
  })),
  hedge:
    input.hedge === undefined
      ? undefined
      : {
          instrumentName: input.hedge.instrumentName,
          amount: input.hedge.amount,
          rules: input.hedge.contracts[option]!
        }
})

const splitAccountsOf = (input: SettlementCheckInput, option: SettlementOption) =>
  (input.accounts[option] ?? []).map((a) => ({
    credentialsId: a.credentialsId,
    percentage: BigDecimal.unsafeFromString(a.percentage)
  }))

/** A price the venue accepts for a simulation: the mark on the tick, inside the band. */
const simulationPrice = (contract: VenueInstrument) =>
  Effect.gen(function* () {
    const venues = yield* Venues
    const mark = yield* (yield* Pricing).mark(contract)
    const band = venues.priceBand(contract, mark)
    const onTick = roundToStep(mark, contract.tickSize)
    const price = BigDecimal.lessThan(onTick, band.low)
      ? band.low
      : BigDecimal.greaterThan(onTick, band.high)
        ? band.high
        : onTick
    return roundToStep(price, contract.tickSize)
  })

export const checkSettlementRules = (input: SettlementCheckInput) =>
  Effect.gen(function* () {
    const venues = yield* Venues
    const { amount, options } = input
    const rule4 = validateMinimumBlockAmounts(
      amount,
      options.map((option) => ({
        settlementOption: option,
        accounts: splitAccountsOf(input, option),
        shape: shapeOn(input, option),
        split: input.split
      }))
    )
    if (Either.isLeft(rule4)) return yield* Effect.fail(rule4.left)
    for (const option of options) {
      const step = splitAmountStep(input.legs.map((l) => l.contracts[option]!))
      if (!isMultipleOf(amount, step)) {
        return yield* Effect.fail(
          apiError("invalidRequest", `amount: must be a multiple of ${decString(step)} on ${option}`)
        )
      }
    }
    for (const option of options) {
      const shape = shapeOn(input, option)
      const allocations = allocateTrade(amount, splitAccountsOf(input, option), shape)
      for (const allocation of allocations) {
        const row = input.desk.find((c) => c.id === allocation.account.credentialsId)!
        const legs: Array<BlockTradeLeg> = []
        for (const [i, leg] of input.legs.entries()) {
          const contract = leg.contracts[option]!
          legs.push({
            instrument: contract,
            direction: leg.direction,
            price: yield* simulationPrice(contract),
            amount: allocation.legs[i]!
          })
        }
        if (input.hedge !== undefined && allocation.hedge !== undefined) {
          const contract = input.hedge.contracts[option]!
          legs.push({
            instrument: contract,
            direction: input.hedge.direction,
            price: yield* simulationPrice(contract),
            amount: allocation.hedge
          })
        }
        const simulated = yield* venues
          .simulateBlockTrade({
            venue: option,
            idempotencyKey: `simulation-${input.rfqId}-${row.id}`,
            maker: { credentialsId: 0, clientId: "" },
            taker: { credentialsId: row.id, clientId: row.clientId },
            legs
          })
          .pipe(Effect.either)
        if (Either.isLeft(simulated)) {
          return yield* Effect.fail(
            apiError(
              "invalidRequest",
              `settlementAccounts.${option}: credentialsId ${row.id} (${row.alias}) failed the venue's block trade simulation: ${simulated.left.reason}`
            )
          )
        }
      }
    }
  })

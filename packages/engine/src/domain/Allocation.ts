import { BigDecimal } from "effect"
import { commonScale, fromUnits, toScaledInteger } from "./Decimal.js"
import { allocateSplit, type SplitAccount, splitAmountStep, type VenueLegAmounts } from "./Split.js"

/**
 * What each settlement account trades when a quote of some amount is accepted: its share of the
 * trade amount, every leg (share × ratio) and its part of the hedge. Settlement books exactly these
 * amounts, and split rule 4 (`rfq/SplitRules.ts`), which refuses an RFQ at creation (at the full
 * amount) and a quote at quote time (at the quote's amount), reads the same numbers, so a quote that
 * was accepted never leaves an account below the venue's minimum or off its amount step at settlement.
 *
 * The hedge scales with the traded share of the RFQ: an account that trades `share` of an RFQ of
 * `rfqAmount` with hedge `H` hedges H × share / rfqAmount, rounded down to the hedge's amount step.
 * Each account's block trade is a hedged package of its own; the rounding never adds hedge.
 */

/** A leg of the RFQ and the venue's amount rules for its contract at one settlement option. */
export interface AllocationLeg {
  readonly instrumentName: string
  readonly ratio: BigDecimal.BigDecimal
  readonly rules: VenueLegAmounts
}

/** The RFQ's hedge: its amount for the whole RFQ amount, and the venue's rules for its contract. */
export interface AllocationHedge {
  readonly instrumentName: string
  readonly amount: BigDecimal.BigDecimal
  readonly rules: VenueLegAmounts
}

/** An RFQ as settlement on one venue sees it. */
export interface TradeShape {
  readonly rfqAmount: BigDecimal.BigDecimal
  readonly legs: ReadonlyArray<AllocationLeg>
  readonly hedge?: AllocationHedge | undefined
}

/** The amounts one account's block trade carries. */
export interface AccountAmounts {
  /** One per RFQ leg, in the RFQ's order. */
  readonly legs: ReadonlyArray<BigDecimal.BigDecimal>
  /** Present when the RFQ has a hedge. */
  readonly hedge?: BigDecimal.BigDecimal | undefined
}

export interface AccountAllocation extends AccountAmounts {
  readonly account: SplitAccount
  readonly share: BigDecimal.BigDecimal
}

/** ⌊a·b / (c·step)⌋·step for a, b ≥ 0 and c, step > 0, exact (integers at a common scale). */
const floorProductQuotient = (
  a: BigDecimal.BigDecimal,
  b: BigDecimal.BigDecimal,
  c: BigDecimal.BigDecimal,
  step: BigDecimal.BigDecimal
): BigDecimal.BigDecimal => {
  const scale = commonScale([a, b, c, step])
  const [ai, bi, ci, si] = [a, b, c, step].map((x) => toScaledInteger(x, scale)) as [
    bigint,
    bigint,
    bigint,
    bigint
  ]
  return fromUnits((ai * bi) / (ci * si), step)
}

/** The hedge an account trading `share` of the RFQ carries (see the module comment). */
export const hedgeAmountFor = (
  share: BigDecimal.BigDecimal,
  rfqAmount: BigDecimal.BigDecimal,
  hedge: AllocationHedge
): BigDecimal.BigDecimal => {
  if (!BigDecimal.isPositive(rfqAmount)) throw new RangeError("hedgeAmountFor: rfqAmount must be > 0")
  if (BigDecimal.isNegative(share) || BigDecimal.isNegative(hedge.amount)) {
    throw new RangeError("hedgeAmountFor: share and hedge amount must be >= 0")
  }
  return floorProductQuotient(hedge.amount, share, rfqAmount, hedge.rules.amountStep)
}

/** Every amount of the block trade of an account that trades `share`. */
export const accountAmounts = (share: BigDecimal.BigDecimal, shape: TradeShape): AccountAmounts => ({
  legs: shape.legs.map((leg) => BigDecimal.normalize(BigDecimal.multiply(share, leg.ratio))),
  hedge: shape.hedge === undefined ? undefined : hedgeAmountFor(share, shape.rfqAmount, shape.hedge)
})

/**
 * Splits `tradeAmount` over `accounts` the way settlement does (`allocateSplit` on the legs'
 * coarsest step) and gives each account its block trade's amounts. Preconditions: those of
 * `allocateSplit`, at least one leg.
 */
export const allocateTrade = (
  tradeAmount: BigDecimal.BigDecimal,
  accounts: ReadonlyArray<SplitAccount>,
  shape: TradeShape
): ReadonlyArray<AccountAllocation> => {
  const step = splitAmountStep(shape.legs.map((l) => l.rules))
  const shares = allocateSplit(tradeAmount, accounts, step)
  return accounts.map((account, i) => ({ account, share: shares[i]!, ...accountAmounts(shares[i]!, shape) }))
}

import { BigDecimal, Either } from "effect"
import { commonScale, fromUnits, isMultipleOf, sumDecimals, toScaledInteger } from "./Decimal.js"
import { type ApiError, apiError } from "./Errors.js"
import type { SettlementOption } from "./Primitives.js"
import { allocateSplit, type SplitAccount, splitAmountStep, type VenueLegAmounts } from "./Split.js"

/**
 * What each settlement account trades when a quote of some amount is accepted: its share of the
 * trade amount, every leg (share × ratio) and its part of the hedge. Settlement books exactly these
 * amounts, and the rules that refuse an RFQ at creation (split rule 4 at the full amount) and a
 * quote at quote time (at the quote's amount) read the same numbers, so a quote that was accepted
 * never leaves an account below the venue's minimum or off its amount step at settlement.
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

/** One amount of one account's block trade that the venue would refuse. */
export interface AllocationViolation {
  /** Position of the account in its settlement option's list. */
  readonly accountIndex: number
  readonly account: SplitAccount
  readonly share: BigDecimal.BigDecimal
  /** The RFQ leg's index, or "hedge". */
  readonly leg: number | "hedge"
  readonly instrumentName: string
  readonly amount: BigDecimal.BigDecimal
  readonly rule: "minimum" | "step"
  /** The minimum block amount or the amount step that `amount` breaks. */
  readonly limit: BigDecimal.BigDecimal
}

const violationOf = (
  amount: BigDecimal.BigDecimal,
  rules: VenueLegAmounts
): Pick<AllocationViolation, "rule" | "limit"> | undefined => {
  if (BigDecimal.lessThan(amount, rules.minBlockAmount) || !BigDecimal.isPositive(amount)) {
    return { rule: "minimum", limit: rules.minBlockAmount }
  }
  if (!isMultipleOf(amount, rules.amountStep)) return { rule: "step", limit: rules.amountStep }
  return undefined
}

/**
 * The amounts of `allocations` the venue's block-trade rules would refuse: below the minimum block
 * amount (or zero) or off the amount step, for every leg and the hedge of every account.
 */
export const allocationViolations = (
  allocations: ReadonlyArray<AccountAllocation>,
  shape: TradeShape
): ReadonlyArray<AllocationViolation> =>
  allocations.flatMap((a, accountIndex) => {
    const base = { accountIndex, account: a.account, share: a.share }
    const legs = shape.legs.flatMap((leg, l) => {
      const amount = a.legs[l]!
      const v = violationOf(amount, leg.rules)
      return v === undefined ? [] : [{ ...base, leg: l, instrumentName: leg.instrumentName, amount, ...v }]
    })
    if (shape.hedge === undefined || a.hedge === undefined) return legs
    const hedge = violationOf(a.hedge, shape.hedge.rules)
    return hedge === undefined
      ? legs
      : [
          ...legs,
          {
            ...base,
            leg: "hedge" as const,
            instrumentName: shape.hedge.instrumentName,
            amount: a.hedge,
            ...hedge
          }
        ]
  })

const fmt = BigDecimal.format

/** "would trade 24 of X (…), below the venue's minimum block amount 25", after a subject. */
export const describeViolation = (v: AllocationViolation, shape: TradeShape): string => {
  const how =
    v.leg === "hedge"
      ? `the hedge ${v.instrumentName} (hedge ${fmt(shape.hedge!.amount)} × share ${fmt(v.share)} / RFQ amount ${fmt(shape.rfqAmount)}, rounded down to the step)`
      : `${v.instrumentName} (share ${fmt(v.share)} × ratio ${fmt(shape.legs[v.leg]!.ratio)})`
  const broken =
    v.rule === "minimum"
      ? `below the venue's minimum block amount ${fmt(v.limit)}`
      : `not a multiple of the venue's amount step ${fmt(v.limit)}`
  return `would trade ${fmt(v.amount)} of ${how}, ${broken}`
}

/** One settlement option's accounts and what settlement on its venue looks like. */
export interface OptionAllocation {
  readonly settlementOption: SettlementOption
  readonly accounts: ReadonlyArray<SplitAccount>
  readonly shape: TradeShape
  /** False when the accounts are the single `settlementCredentials` (the reason names the amount). */
  readonly split?: boolean | undefined
}

const hundred = BigDecimal.fromBigInt(100n)

const isAllocatable = (accounts: ReadonlyArray<SplitAccount>): boolean =>
  accounts.length > 0 &&
  accounts.every((a) => BigDecimal.isPositive(a.percentage)) &&
  BigDecimal.equals(sumDecimals(accounts.map((a) => a.percentage)), hundred)

/**
 * Split rule 4 at creation, hedge included: every account's share of every leg and of the hedge,
 * when the whole RFQ amount trades, meets the venue's minimum block amount and amount step. Each
 * reason names the option and the account's credentials (the taker's own). Accounts that break
 * rules 1–3 are left to `validateSettlementAccounts`.
 */
export const minimumBlockViolations = (
  amount: BigDecimal.BigDecimal,
  split: OptionAllocation
): Array<string> => {
  const { shape } = split
  if (shape.legs.length === 0 || !isAllocatable(split.accounts) || !BigDecimal.isPositive(amount)) return []
  const option = split.settlementOption
  return allocationViolations(allocateTrade(amount, split.accounts, shape), shape).map((v) => {
    const field =
      split.split === false
        ? `${v.leg === "hedge" ? "hedge.amount" : "amount"}: on ${option},`
        : `settlementAccounts.${option}:`
    return `${field} credentialsId ${v.account.credentialsId} ${describeViolation(v, shape)}`
  })
}

/** Rule 4 over every settlement option of the RFQ, all violations collected. */
export const validateMinimumBlockAmounts = (
  amount: BigDecimal.BigDecimal,
  splits: ReadonlyArray<OptionAllocation>
): Either.Either<void, ApiError> => {
  const reasons = splits.flatMap((split) => minimumBlockViolations(amount, split))
  return reasons.length === 0 ? Either.void : Either.left(apiError("invalidRequest", reasons))
}

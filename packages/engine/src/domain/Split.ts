import { BigDecimal } from "effect"
import { fromUnits, sumDecimals } from "./Decimal.js"

/** One settlement account of a split: credentials and their share of every trade, in percent. */
export interface SplitAccount {
  readonly credentialsId: number
  readonly percentage: BigDecimal.BigDecimal
}

const hundred = BigDecimal.fromBigInt(100n)

/**
 * Splits `tradeAmount` across accounts: each gets tradeAmount × percentage / 100 rounded down to a
 * multiple of `amountStep`, and what rounding left over goes to the account with the largest
 * percentage (the first listed on a tie). The amounts, in input order, add up to `tradeAmount` exactly.
 *
 * If `tradeAmount` is itself off the step grid, the off-grid part lands in the remainder too: the
 * largest account's amount is then off the grid and the others stay on it, and the sum is still exact.
 *
 * Preconditions (checked; a violation throws a `RangeError`, as it is a programming error): at least
 * one account, percentages > 0 totalling exactly 100 (split rules 1–3, `rfq/SplitRules.ts`),
 * `tradeAmount` ≥ 0, `amountStep` > 0.
 */
export const allocateSplit = (
  tradeAmount: BigDecimal.BigDecimal,
  accounts: ReadonlyArray<SplitAccount>,
  amountStep: BigDecimal.BigDecimal
): ReadonlyArray<BigDecimal.BigDecimal> => {
  if (accounts.length === 0) throw new RangeError("allocateSplit: no accounts")
  if (!BigDecimal.isPositive(amountStep)) throw new RangeError("allocateSplit: amountStep must be > 0")
  if (BigDecimal.isNegative(tradeAmount)) throw new RangeError("allocateSplit: tradeAmount must be >= 0")
  if (accounts.some((a) => !BigDecimal.isPositive(a.percentage))) {
    throw new RangeError("allocateSplit: every percentage must be > 0")
  }
  if (!BigDecimal.equals(sumDecimals(accounts.map((a) => a.percentage)), hundred)) {
    throw new RangeError("allocateSplit: percentages must total exactly 100")
  }
  // ⌊T·p / (100·step)⌋ on integers: with T = t·10^−a, p = q·10^−b, step = s·10^−c this is
  // ⌊t·q·10^(c−a−b) / (100·s)⌋, every factor a non-negative bigint, so the floor is exact.
  const t = BigDecimal.normalize(tradeAmount)
  const s = BigDecimal.normalize(amountStep)
  const floors = accounts.map((account) => {
    const p = BigDecimal.normalize(account.percentage)
    const exponent = s.scale - t.scale - p.scale
    const num = t.value * p.value * (exponent > 0 ? 10n ** BigInt(exponent) : 1n)
    const den = 100n * s.value * (exponent < 0 ? 10n ** BigInt(-exponent) : 1n)
    return fromUnits(num / den, amountStep)
  })
  const remainder = BigDecimal.subtract(tradeAmount, sumDecimals(floors))
  const largest = indexOfLargestPercentage(accounts)
  return floors.map((amount, i) =>
    i === largest ? BigDecimal.normalize(BigDecimal.sum(amount, remainder)) : amount
  )
}

const indexOfLargestPercentage = (accounts: ReadonlyArray<SplitAccount>): number => {
  let best = 0
  accounts.forEach((account, i) => {
    if (BigDecimal.greaterThan(account.percentage, accounts[best]!.percentage)) best = i
  })
  return best
}

/** A venue's amount rules for one leg of an RFQ. */
export interface VenueLegAmounts {
  readonly minBlockAmount: BigDecimal.BigDecimal
  readonly amountStep: BigDecimal.BigDecimal
}

/**
 * The step an amount of this RFQ is split on at one venue: the coarsest amount step among its legs
 * (all legs of an option RFQ, or of a future RFQ, share one step, so in practice it is that step).
 * Settlement must split a trade on the same step that rule 4 checked.
 */
export const splitAmountStep = (legRules: ReadonlyArray<VenueLegAmounts>): BigDecimal.BigDecimal => {
  const [first, ...rest] = legRules
  if (first === undefined) throw new RangeError("splitAmountStep: no legs")
  return rest.reduce(
    (step, rule) => (BigDecimal.greaterThan(rule.amountStep, step) ? rule.amountStep : step),
    first.amountStep
  )
}

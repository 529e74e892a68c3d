import { BigDecimal, Either } from "effect"
import { fromUnits, sumDecimals } from "./Decimal.js"
import { type ApiError, apiError } from "./Errors.js"
import type { SettlementOption } from "./Primitives.js"

/** One settlement account of a split: credentials and their share of every trade, in percent. */
export interface SplitAccount {
  readonly credentialsId: number
  readonly percentage: BigDecimal.BigDecimal
}

/** The create-RFQ `settlementAccounts` field: settlement option → accounts. */
export type SettlementAccounts = Readonly<Partial<Record<string, ReadonlyArray<SplitAccount>>>>

const hundred = BigDecimal.fromBigInt(100n)
const fmt = BigDecimal.format

/**
 * Rules 1–3 of the spec for `settlementAccounts`, plus its shape against the RFQ's settlement options:
 * one non-empty entry for every option of the RFQ and none for any other. Every violation found is
 * reported, each as a reason naming the field.
 */
export const validateSettlementAccounts = (
  settlementAccounts: SettlementAccounts,
  settlementOptions: ReadonlyArray<SettlementOption>
): Either.Either<SettlementAccounts, ApiError> => {
  const reasons: Array<string> = []
  for (const option of settlementOptions) {
    if (settlementAccounts[option] === undefined) {
      reasons.push(
        `settlementAccounts.${option}: missing; every settlement option of the RFQ needs its accounts`
      )
    }
  }
  for (const [option, accounts] of Object.entries(settlementAccounts)) {
    if (accounts === undefined) continue
    const field = `settlementAccounts.${option}`
    if (!(settlementOptions as ReadonlyArray<string>).includes(option)) {
      reasons.push(`${field}: ${option} is not one of the RFQ's settlementOptions`)
    }
    if (accounts.length === 0) {
      reasons.push(`${field}: at least one account is required`)
      continue
    }
    const seen = new Set<number>()
    accounts.forEach((account, index) => {
      if (!BigDecimal.isPositive(account.percentage)) {
        reasons.push(`${field}[${index}]: percentage ${fmt(account.percentage)} must be greater than 0`)
      }
      if (seen.has(account.credentialsId)) {
        reasons.push(`${field}[${index}]: credentialsId ${account.credentialsId} appears more than once`)
      }
      seen.add(account.credentialsId)
    })
    const total = sumDecimals(accounts.map((a) => a.percentage))
    if (!BigDecimal.equals(total, hundred)) {
      reasons.push(`${field}: percentages total ${fmt(total)}, must total exactly 100`)
    }
  }
  return reasons.length === 0
    ? Either.right(settlementAccounts)
    : Either.left(apiError("invalidRequest", reasons))
}

/**
 * Splits `tradeAmount` across accounts: each gets tradeAmount × percentage / 100 rounded down to a
 * multiple of `amountStep`, and what rounding left over goes to the account with the largest
 * percentage (the first listed on a tie). The amounts, in input order, add up to `tradeAmount` exactly.
 *
 * If `tradeAmount` is itself off the step grid, the off-grid part lands in the remainder too: the
 * largest account's amount is then off the grid and the others stay on it, and the sum is still exact.
 *
 * Preconditions (checked; a violation throws a `RangeError`, as it is a programming error): at least
 * one account, percentages > 0 totalling exactly 100 (see `validateSettlementAccounts`),
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

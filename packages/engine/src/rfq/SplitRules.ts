import { BigDecimal, Effect, Either } from "effect"
import type { CredentialsRow } from "../accounts/AccountStore.js"
import { type AccountAllocation, allocateTrade, type TradeShape } from "../domain/Allocation.js"
import { isMultipleOf, roundToStep, sumDecimals } from "../domain/Decimal.js"
import { type ApiError, apiError } from "../domain/Errors.js"
import type { Direction, SettlementOption } from "../domain/Primitives.js"
import { type SplitAccount, splitAmountStep, type VenueLegAmounts } from "../domain/Split.js"
import { Pricing } from "../services/Pricing.js"
import { type BlockTradeLeg, type VenueInstrument, Venues } from "../services/Venues.js"
import { accountsOf } from "./AllocationRules.js"
import { decString } from "./Dec.js"
import type { RfqRecord, SettlementAccount } from "./RfqRecord.js"

/**
 * The spec's rules for `settlementAccounts` (POST /rfq/{id}), all five in this one module:
 *
 * 1. the percentages of a settlement option total exactly 100;
 * 2. every percentage is greater than 0 (and so at most 100);
 * 3. the same credentials appear at most once per option;
 * 4. every account's share of every leg, and of the hedge, meets the venue's minimum block amount
 *    and amount step: at creation for the whole RFQ amount, at quote time for the quote's amount;
 * 5. every account passes the venue's block-trade simulation with those amounts (at creation).
 *
 * Rules 1–3 run in the request schema (`SettlementAccountsInput` calls `settlementAccountsIssues`);
 * rules 4 and 5 at creation run in `buildRfq` (`checkSplitRulesAtCreation`), rule 4 at quote time
 * in the RFQ actor's `quoteRejection` (`allocationRejection`). The amounts are `allocateTrade`'s,
 * the arithmetic settlement books with, so the rules and settlement cannot disagree.
 *
 * Over ~300 lines on purpose: the issue asks for the five rules in one place.
 */

// ---- rules 1–3 ---------------------------------------------------------------------------------

/** A violation of rules 1–3 by one option's accounts; `index` is the account's position. */
type AccountsViolation =
  | {
      readonly rule: 2
      readonly index: number
      readonly percentage: BigDecimal.BigDecimal
      readonly atMost100: boolean
    }
  | { readonly rule: 3; readonly index: number; readonly credentialsId: number; readonly first: number }
  | { readonly rule: 1; readonly total: BigDecimal.BigDecimal }

const hundred = BigDecimal.fromBigInt(100n)
const fmt = BigDecimal.format

/** Every violation of rules 1–3, not only the first: percentages, then duplicates, then the total. */
const accountsViolations = (accounts: ReadonlyArray<SplitAccount>): Array<AccountsViolation> => {
  const found: Array<AccountsViolation> = []
  accounts.forEach((a, index) => {
    if (!BigDecimal.isPositive(a.percentage)) {
      found.push({ rule: 2, index, percentage: a.percentage, atMost100: false })
    } else if (BigDecimal.greaterThan(a.percentage, hundred)) {
      found.push({ rule: 2, index, percentage: a.percentage, atMost100: true })
    }
  })
  const seen = new Map<number, number>()
  accounts.forEach((a, index) => {
    const first = seen.get(a.credentialsId)
    if (first === undefined) seen.set(a.credentialsId, index)
    else found.push({ rule: 3, index, credentialsId: a.credentialsId, first })
  })
  const total = sumDecimals(accounts.map((a) => a.percentage))
  if (!BigDecimal.equals(total, hundred)) found.push({ rule: 1, total })
  return found
}

/** Rules 1–3 on one option's accounts as the request schema's issues (paths inside the list). */
export const settlementAccountsIssues = (
  accounts: ReadonlyArray<SplitAccount>
): ReadonlyArray<{ readonly path: ReadonlyArray<PropertyKey>; readonly message: string }> =>
  accountsViolations(accounts).map((v) =>
    v.rule === 2
      ? {
          path: [v.index, "percentage"],
          message: v.atMost100 ? "must be at most 100" : "must be greater than 0"
        }
      : v.rule === 3
        ? { path: [v.index, "credentialsId"], message: `duplicates element ${v.first}` }
        : { path: [], message: `percentages must total exactly 100, got ${fmt(v.total)}` }
  )

/** The create-RFQ `settlementAccounts` field: settlement option → accounts. */
export type SettlementAccounts = Readonly<Partial<Record<string, ReadonlyArray<SplitAccount>>>>

/**
 * Rules 1–3 over a whole `settlementAccounts` map, plus its shape against the RFQ's settlement
 * options (one non-empty entry for every option and none for any other), for callers without the
 * request schema. Every violation is a reason naming the field, per account in position order.
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
    const byPosition = accountsViolations(accounts).sort(
      (a, b) => (a.rule === 1 ? accounts.length : a.index) - (b.rule === 1 ? accounts.length : b.index)
    )
    for (const v of byPosition) {
      reasons.push(
        v.rule === 2
          ? `${field}[${v.index}]: percentage ${fmt(v.percentage)} must be ${v.atMost100 ? "at most 100" : "greater than 0"}`
          : v.rule === 3
            ? `${field}[${v.index}]: credentialsId ${v.credentialsId} appears more than once`
            : `${field}: percentages total ${fmt(v.total)}, must total exactly 100`
      )
    }
  }
  return reasons.length === 0
    ? Either.right(settlementAccounts)
    : Either.left(apiError("invalidRequest", reasons))
}

// ---- rule 4 ------------------------------------------------------------------------------------

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

const isAllocatable = (accounts: ReadonlyArray<SplitAccount>): boolean =>
  accounts.length > 0 &&
  accounts.every((a) => BigDecimal.isPositive(a.percentage)) &&
  BigDecimal.equals(sumDecimals(accounts.map((a) => a.percentage)), hundred)

/**
 * Rule 4 at creation, hedge included: every account's share of every leg and of the hedge, when
 * the whole RFQ amount trades, meets the venue's minimum block amount and amount step. Each reason
 * names the option and the account's credentials (the taker's own). Accounts that break rules 1–3
 * are left to those rules.
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

/**
 * Rule 4 at quote time: a quote of `amount` on `option` must leave every account of that option at
 * or above the venue's minimum block amount (and on its amount step) on every leg and on the hedge.
 * The maker is told which account by its position in the taker's list, never by the taker's
 * credentials id.
 */
export const allocationRejection = (
  rfq: Pick<RfqRecord, "settlementAccounts">,
  option: SettlementOption,
  amount: BigDecimal.BigDecimal,
  shape: TradeShape
): ApiError | undefined => {
  const accounts = accountsOf(rfq, option)
  if (accounts.length === 0 || !BigDecimal.isPositive(amount)) return undefined
  const violations = allocationViolations(allocateTrade(amount, accounts, shape), shape)
  if (violations.length === 0) return undefined
  const n = accounts.length
  return apiError(
    "invalidRequest",
    violations.map((v) => {
      const who = n === 1 ? "the trade" : `settlement account ${v.accountIndex + 1} of ${n} of the RFQ`
      return `amount: a quote of ${fmt(amount)} on ${option}: ${who} ${describeViolation(v, shape)}`
    })
  )
}

// ---- rules 4 and 5 at creation -----------------------------------------------------------------

/** A leg (or the hedge) of the RFQ being created, with its contract on every chosen venue. */
export interface CheckedLeg {
  readonly instrumentName: string
  readonly direction: Direction
  readonly contracts: Partial<Record<SettlementOption, VenueInstrument>>
}

export interface CreationSplitInput {
  /** The RFQ id being created (the simulation's idempotency key names it). */
  readonly rfqId: number
  readonly amount: BigDecimal.BigDecimal
  readonly options: ReadonlyArray<SettlementOption>
  /** True when the accounts came from `settlementAccounts`. */
  readonly split: boolean
  readonly legs: ReadonlyArray<CheckedLeg & { readonly ratio: BigDecimal.BigDecimal }>
  readonly hedge?: (CheckedLeg & { readonly amount: BigDecimal.BigDecimal }) | undefined
  readonly settlementAccounts: Partial<Record<SettlementOption, ReadonlyArray<SettlementAccount>>>
  /** The taker desk's credentials (every account was checked to be among them). */
  readonly desk: ReadonlyArray<CredentialsRow>
}

const shapeOn = (input: CreationSplitInput, option: SettlementOption): TradeShape => ({
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

/**
 * Rules 4 and 5 of `POST /rfq/{id}` when the whole RFQ amount trades: rule 4 on every option, then
 * the amount on each option's split step, then the venue's block-trade simulation of every
 * account with exactly the amounts settlement would book (rule 5), the hedge leg included.
 */
export const checkSplitRulesAtCreation = (input: CreationSplitInput) =>
  Effect.gen(function* () {
    const venues = yield* Venues
    const { amount, options } = input
    const rule4 = validateMinimumBlockAmounts(
      amount,
      options.map((option) => ({
        settlementOption: option,
        accounts: accountsOf(input, option),
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
      const allocations = allocateTrade(amount, accountsOf(input, option), shapeOn(input, option))
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

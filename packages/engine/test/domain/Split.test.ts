import { assert, describe, it } from "@effect/vitest"
import { BigDecimal, Either } from "effect"
import * as fc from "fast-check"
import { isMultipleOf, sumDecimals, unsafeDecimal } from "../../src/domain/Decimal.js"
import type { SettlementOption } from "../../src/domain/Primitives.js"
import { allocateSplit, type SplitAccount, splitAmountStep } from "../../src/domain/Split.js"
import { type SettlementAccounts, validateSettlementAccounts } from "../../src/rfq/SplitRules.js"

const MAX_ACCOUNTS = 6
/** Percentages have at most 2 decimals here; they are generated in hundredths of a percent. */
const HUNDREDTHS_IN_100 = 10_000
const MAX_CREDENTIALS_ID = 1_000
/** Trade amounts up to 10^9 steps. */
const MAX_UNITS = 10n ** 9n
const STEPS = ["0.1", "1", "10", "0.01", "0.0001", "2.5"].map(unsafeDecimal)
const OPTIONS: ReadonlyArray<SettlementOption> = ["BULL", "DBT"]

const d = unsafeDecimal
const eq = (actual: BigDecimal.BigDecimal, expected: BigDecimal.BigDecimal) =>
  assert.isTrue(
    BigDecimal.equals(actual, expected),
    `${BigDecimal.format(actual)} !== ${BigDecimal.format(expected)}`
  )

/** n positive percentages (2 decimals) totalling exactly 100: the gaps between n − 1 distinct cuts. */
const arbPercentages = (n: number): fc.Arbitrary<Array<BigDecimal.BigDecimal>> =>
  fc
    .uniqueArray(fc.integer({ min: 1, max: HUNDREDTHS_IN_100 - 1 }), { minLength: n - 1, maxLength: n - 1 })
    .map((cuts) => {
      const points = [0, ...cuts.sort((x, y) => x - y), HUNDREDTHS_IN_100]
      return points.slice(1).map((p, i) => BigDecimal.normalize(BigDecimal.make(BigInt(p - points[i]!), 2)))
    })

const arbAccounts: fc.Arbitrary<Array<SplitAccount>> = fc
  .integer({ min: 1, max: MAX_ACCOUNTS })
  .chain((n) =>
    fc.tuple(
      fc.uniqueArray(fc.integer({ min: 1, max: MAX_CREDENTIALS_ID }), { minLength: n, maxLength: n }),
      arbPercentages(n)
    )
  )
  .map(([ids, pcts]) => ids.map((credentialsId, i) => ({ credentialsId, percentage: pcts[i]! })))

/** A valid create-RFQ input: some settlement options, each with a valid split. */
const arbValidSplit = fc
  .subarray([...OPTIONS], { minLength: 1 })
  .chain((options) =>
    fc.tuple(
      fc.constant(options),
      fc.array(arbAccounts, { minLength: options.length, maxLength: options.length })
    )
  )
  .map(([options, lists]) => ({
    options,
    accounts: Object.fromEntries(options.map((o, i) => [o, lists[i]!])) as Record<string, Array<SplitAccount>>
  }))

const arbStep = fc.constantFrom(...STEPS)
const arbOnStepAmount = (step: BigDecimal.BigDecimal) =>
  fc
    .bigInt({ min: 0n, max: MAX_UNITS })
    .map((u) => BigDecimal.normalize(BigDecimal.multiply(BigDecimal.fromBigInt(u), step)))

const exactShare = (amount: BigDecimal.BigDecimal, pct: BigDecimal.BigDecimal) =>
  BigDecimal.unsafeDivide(BigDecimal.multiply(amount, pct), BigDecimal.fromBigInt(100n))

/** The account the contract gives the remainder to: the largest percentage, first listed on a tie. */
const remainderIndex = (accounts: ReadonlyArray<SplitAccount>) =>
  accounts.reduce(
    (best, a, i) => (BigDecimal.greaterThan(a.percentage, accounts[best]!.percentage) ? i : best),
    0
  )

const reasonsOf = (result: Either.Either<unknown, { readonly reason?: ReadonlyArray<string> | undefined }>) =>
  Either.match(result, { onLeft: (e) => e.reason ?? [], onRight: () => [] as ReadonlyArray<string> })

const rejectedWith = (
  accounts: SettlementAccounts,
  options: ReadonlyArray<SettlementOption>,
  pattern: RegExp
): void => {
  const result = validateSettlementAccounts(accounts, options)
  assert.isTrue(Either.isLeft(result), "expected a rejection")
  if (Either.isLeft(result)) {
    assert.strictEqual(result.left.status, 400)
    assert.strictEqual(result.left.message, "invalid request")
  }
  const reasons = reasonsOf(result)
  assert.isTrue(
    reasons.some((r) => pattern.test(r)),
    `no reason matches ${pattern}: ${JSON.stringify(reasons)}`
  )
}

describe("allocateSplit", () => {
  const arbCase = arbStep.chain((step) =>
    fc.record({ step: fc.constant(step), amount: arbOnStepAmount(step), accounts: arbAccounts })
  )

  it("allocations add up to the trade amount exactly", () => {
    fc.assert(
      fc.property(arbCase, ({ step, amount, accounts }) =>
        eq(sumDecimals(allocateSplit(amount, accounts, step)), amount)
      )
    )
  })

  it("every account but the remainder account gets its exact share rounded down to the step", () => {
    fc.assert(
      fc.property(arbCase, ({ step, amount, accounts }) => {
        const amounts = allocateSplit(amount, accounts, step)
        const keeper = remainderIndex(accounts)
        accounts.forEach((account, i) => {
          if (i === keeper) return
          const got = amounts[i]!
          const gap = BigDecimal.subtract(exactShare(amount, account.percentage), got)
          assert.isTrue(isMultipleOf(got, step) && !BigDecimal.isNegative(got))
          assert.isTrue(
            !BigDecimal.isNegative(gap) && BigDecimal.lessThan(gap, step),
            "off its share by a step or more"
          )
        })
      })
    )
  })

  it("the remainder account gets its share plus less than one step per account", () => {
    fc.assert(
      fc.property(arbCase, ({ step, amount, accounts }) => {
        const keeper = remainderIndex(accounts)
        const got = allocateSplit(amount, accounts, step)[keeper]!
        const extra = BigDecimal.subtract(got, exactShare(amount, accounts[keeper]!.percentage))
        const bound = BigDecimal.multiply(step, BigDecimal.fromBigInt(BigInt(accounts.length)))
        assert.isTrue(isMultipleOf(got, step))
        assert.isTrue(!BigDecimal.isNegative(extra) && BigDecimal.lessThan(extra, bound))
      })
    )
  })

  it("an amount off the step still adds up exactly; only the remainder account leaves the step", () => {
    fc.assert(
      fc.property(arbCase, fc.bigInt({ min: 1n, max: 999n }), ({ step, amount, accounts }, thousandths) => {
        const offStep = BigDecimal.sum(amount, BigDecimal.multiply(step, BigDecimal.make(thousandths, 3)))
        const amounts = allocateSplit(offStep, accounts, step)
        eq(sumDecimals(amounts), offStep)
        const keeper = remainderIndex(accounts)
        amounts.forEach((a, i) => {
          assert.isTrue(i === keeper || isMultipleOf(a, step))
        })
        assert.isFalse(isMultipleOf(amounts[keeper]!, step))
      })
    )
  })

  it("returns the amounts in input order: reordering accounts reorders the amounts", () => {
    const distinctMax = arbCase.filter(({ accounts }) => {
      const top = accounts[remainderIndex(accounts)]!.percentage
      return accounts.filter((a) => BigDecimal.equals(a.percentage, top)).length === 1
    })
    fc.assert(
      fc.property(distinctMax, ({ step, amount, accounts }) => {
        const reversed = [...accounts].reverse()
        const forward = allocateSplit(amount, accounts, step)
        const backward = allocateSplit(amount, reversed, step)
        forward.forEach((a, i) => {
          eq(backward[accounts.length - 1 - i]!, a)
        })
      })
    )
  })

  it("splits 10.3 BTC 50/30/20 on a 0.1 step as 5.3 / 3 / 2", () => {
    const accounts = [
      { credentialsId: 1, percentage: d("50") },
      { credentialsId: 2, percentage: d("30") },
      { credentialsId: 3, percentage: d("20") }
    ]
    const amounts = allocateSplit(d("10.3"), accounts, d("0.1"))
    // exact 5.15 / 3.09 / 2.06 → floors 5.1 / 3.0 / 2.0 (10.1) → remainder 0.2 to the 50 % account
    ;[d("5.3"), d("3"), d("2")].forEach((expected, i) => {
      eq(amounts[i]!, expected)
    })
  })

  it("gives the remainder to the first listed account on a percentage tie", () => {
    const amounts = allocateSplit(
      d("0.3"),
      [
        { credentialsId: 7, percentage: d("50") },
        { credentialsId: 8, percentage: d("50") }
      ],
      d("0.1")
    )
    eq(amounts[0]!, d("0.2"))
    eq(amounts[1]!, d("0.1"))
    const thirds = allocateSplit(
      d("1"),
      [
        { credentialsId: 1, percentage: d("33.33") },
        { credentialsId: 2, percentage: d("33.33") },
        { credentialsId: 3, percentage: d("33.34") }
      ],
      d("0.1")
    )
    ;[d("0.3"), d("0.3"), d("0.4")].forEach((expected, i) => {
      eq(thirds[i]!, expected)
    })
  })

  it("refuses inputs that break its preconditions", () => {
    const ok = [{ credentialsId: 1, percentage: d("100") }]
    assert.throws(() => allocateSplit(d("1"), [], d("0.1")))
    assert.throws(() => allocateSplit(d("1"), ok, d("0")))
    assert.throws(() => allocateSplit(d("-1"), ok, d("0.1")))
    assert.throws(() => allocateSplit(d("1"), [{ credentialsId: 1, percentage: d("90") }], d("0.1")))
    assert.throws(() =>
      allocateSplit(
        d("1"),
        [
          { credentialsId: 1, percentage: d("110") },
          { credentialsId: 2, percentage: d("-10") }
        ],
        d("0.1")
      )
    )
  })
})

describe("validateSettlementAccounts", () => {
  it("accepts every valid split", () => {
    fc.assert(
      fc.property(arbValidSplit, ({ options, accounts }) =>
        assert.isTrue(Either.isRight(validateSettlementAccounts(accounts, options)))
      )
    )
  })

  /** A valid input, one of its options and one of that option's accounts, by position. */
  const arbTarget = arbValidSplit.chain((split) =>
    fc.record({
      split: fc.constant(split),
      option: fc.constantFrom(...split.options),
      position: fc.nat()
    })
  )

  it("rejects percentages that do not total exactly 100 (rule 1)", () => {
    fc.assert(
      fc.property(
        arbTarget,
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.boolean(),
        ({ split, option, position }, hundredths, up) => {
          const list = split.accounts[option]!
          const i = position % list.length
          const delta = BigDecimal.make(BigInt(hundredths), 4)
          // Keep the changed percentage positive so that only rule 1 is broken.
          const changed =
            up || !BigDecimal.greaterThan(list[i]!.percentage, delta)
              ? BigDecimal.sum(list[i]!.percentage, delta)
              : BigDecimal.subtract(list[i]!.percentage, delta)
          const mutated = list.map((a, k) => (k === i ? { ...a, percentage: changed } : a))
          rejectedWith(
            { ...split.accounts, [option]: mutated },
            split.options,
            new RegExp(`^settlementAccounts\\.${option}: percentages total [0-9.]+, must total exactly 100$`)
          )
        }
      )
    )
  })

  it("rejects a percentage that is not greater than 0 (rule 2)", () => {
    fc.assert(
      fc.property(arbTarget, fc.integer({ min: 0, max: 10_000 }), ({ split, option, position }, minus) => {
        const list = split.accounts[option]!
        const i = position % list.length
        const bad = BigDecimal.make(BigInt(-minus), 2)
        const mutated = list.map((a, k) => (k === i ? { ...a, percentage: bad } : a))
        rejectedWith(
          { ...split.accounts, [option]: mutated },
          split.options,
          new RegExp(
            `^settlementAccounts\\.${option}\\[${i}\\]: percentage -?[0-9.]+ must be greater than 0$`
          )
        )
      })
    )
  })

  it("rejects the same credentials twice for one option (rule 3)", () => {
    const withTwo = arbTarget.filter(({ split, option }) => split.accounts[option]!.length >= 2)
    fc.assert(
      fc.property(withTwo, fc.nat(), ({ split, option, position }, other) => {
        const list = split.accounts[option]!
        const i = position % list.length
        const j = (i + 1 + (other % (list.length - 1))) % list.length
        const mutated = list.map((a, k) => (k === j ? { ...a, credentialsId: list[i]!.credentialsId } : a))
        rejectedWith(
          { ...split.accounts, [option]: mutated },
          split.options,
          new RegExp(
            `^settlementAccounts\\.${option}\\[\\d+\\]: credentialsId ${list[i]!.credentialsId} appears more than once$`
          )
        )
      })
    )
  })

  it("rejects a settlement option of the RFQ that has no accounts", () => {
    fc.assert(
      fc.property(arbTarget, ({ split, option }) => {
        const { [option]: _dropped, ...rest } = split.accounts
        rejectedWith(rest, split.options, new RegExp(`^settlementAccounts\\.${option}: missing`))
      })
    )
  })

  it("rejects accounts for an option the RFQ does not settle on", () => {
    fc.assert(
      fc.property(
        arbValidSplit.filter(({ options }) => options.length < OPTIONS.length),
        arbAccounts,
        ({ options, accounts }, extra) => {
          const outsider = OPTIONS.find((o) => !options.includes(o))!
          rejectedWith(
            { ...accounts, [outsider]: extra },
            options,
            new RegExp(
              `^settlementAccounts\\.${outsider}: ${outsider} is not one of the RFQ's settlementOptions$`
            )
          )
        }
      )
    )
  })

  it("rejects an empty account list", () => {
    fc.assert(
      fc.property(arbTarget, ({ split, option }) =>
        rejectedWith(
          { ...split.accounts, [option]: [] },
          split.options,
          new RegExp(`^settlementAccounts\\.${option}: at least one account is required$`)
        )
      )
    )
  })

  it("reports every violation, not only the first", () => {
    const result = validateSettlementAccounts(
      {
        DBT: [
          { credentialsId: 1, percentage: d("60") },
          { credentialsId: 1, percentage: d("30") }
        ],
        BULL: [
          { credentialsId: 2, percentage: d("0") },
          { credentialsId: 3, percentage: d("100") }
        ]
      },
      ["DBT", "BULL"]
    )
    assert.deepStrictEqual(reasonsOf(result), [
      "settlementAccounts.DBT[1]: credentialsId 1 appears more than once",
      "settlementAccounts.DBT: percentages total 90, must total exactly 100",
      "settlementAccounts.BULL[0]: percentage 0 must be greater than 0"
    ])
  })
})

describe("splitAmountStep", () => {
  it("splits on the coarsest amount step of the legs", () => {
    eq(splitAmountStep([{ minBlockAmount: d("25"), amountStep: d("0.1") }]), d("0.1"))
    eq(
      splitAmountStep([
        { minBlockAmount: d("25"), amountStep: d("0.1") },
        { minBlockAmount: d("200000"), amountStep: d("10") }
      ]),
      d("10")
    )
    // On a step of 10, 65 / 35 of 100 floors to 60 / 30; the remainder 10 goes to the 65 % account.
    const amounts = allocateSplit(
      d("100"),
      [
        { credentialsId: 1, percentage: d("65") },
        { credentialsId: 2, percentage: d("35") }
      ],
      d("10")
    )
    eq(amounts[0]!, d("70"))
    eq(amounts[1]!, d("30"))
  })
})

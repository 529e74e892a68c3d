import { assert, describe, it } from "@effect/vitest"
import { BigDecimal, Either } from "effect"
import * as fc from "fast-check"
import { allocateTrade, hedgeAmountFor, type TradeShape } from "../../src/domain/Allocation.js"
import { isMultipleOf, sumDecimals, unsafeDecimal } from "../../src/domain/Decimal.js"
import { allocateSplit, type SplitAccount } from "../../src/domain/Split.js"
import {
  allocationViolations,
  minimumBlockViolations,
  validateMinimumBlockAmounts
} from "../../src/rfq/SplitRules.js"

const d = unsafeDecimal
const btcOption = { minBlockAmount: d("25"), amountStep: d("0.1") }
const btcPerpetual = { minBlockAmount: d("200000"), amountStep: d("10") }

const reasonsOf = (result: Either.Either<unknown, { readonly reason?: ReadonlyArray<string> | undefined }>) =>
  Either.match(result, { onLeft: (e) => e.reason ?? [], onRight: () => [] as ReadonlyArray<string> })

const shapeOf = (
  rfqAmount: string,
  ratios: ReadonlyArray<string>,
  hedge?: { readonly amount: string }
): TradeShape => ({
  rfqAmount: d(rfqAmount),
  legs: ratios.map((r, i) => ({
    instrumentName: `BTC-27DEC30-${100000 + i * 10000}-C`,
    ratio: d(r),
    rules: btcOption
  })),
  hedge:
    hedge === undefined
      ? undefined
      : { instrumentName: "BTC-PERPETUAL", amount: d(hedge.amount), rules: btcPerpetual }
})

const accounts = (...pcts: ReadonlyArray<number>): Array<SplitAccount> =>
  pcts.map((p, i) => ({ credentialsId: 11 + i, percentage: d(String(p)) }))

/** n positive percentages (2 decimals) totalling exactly 100. */
const arbAccounts: fc.Arbitrary<Array<SplitAccount>> = fc
  .integer({ min: 1, max: 5 })
  .chain((n) => fc.uniqueArray(fc.integer({ min: 1, max: 9_999 }), { minLength: n - 1, maxLength: n - 1 }))
  .map((cuts) => {
    const points = [0, ...cuts.sort((x, y) => x - y), 10_000]
    return points.slice(1).map((p, i) => ({
      credentialsId: i + 1,
      percentage: BigDecimal.normalize(BigDecimal.make(BigInt(p - points[i]!), 2))
    }))
  })

describe("split rule 4 at creation (minimumBlockViolations)", () => {
  it("names the account, leg and minimum of a share below the venue's minimum", () => {
    const result = validateMinimumBlockAmounts(d("100"), [
      { settlementOption: "DBT", accounts: accounts(50, 30, 20), shape: shapeOf("100", ["1", "2"]) }
    ])
    // Shares 50 / 30 / 20: only 20 × ratio 1 falls below 25; 20 × 2 = 40 does not.
    assert.deepStrictEqual(reasonsOf(result), [
      "settlementAccounts.DBT: credentialsId 13 would trade 20 of BTC-27DEC30-100000-C (share 20 × ratio 1), " +
        "below the venue's minimum block amount 25"
    ])
  })

  it("accepts shares that all meet the minimum, on every option", () => {
    const result = validateMinimumBlockAmounts(d("100"), [
      { settlementOption: "DBT", accounts: accounts(60, 40), shape: shapeOf("100", ["1", "2"]) },
      { settlementOption: "BULL", accounts: accounts(100), shape: shapeOf("100", ["1", "2"]) }
    ])
    assert.isTrue(Either.isRight(result))
  })

  it("refuses a hedge below the venue's minimum, naming the hedge amount when there is no split", () => {
    const reasons = minimumBlockViolations(d("100"), {
      settlementOption: "DBT",
      accounts: accounts(100),
      shape: shapeOf("100", ["1"], { amount: "10" }),
      split: false
    })
    assert.strictEqual(reasons.length, 1)
    assert.match(
      reasons[0]!,
      /^hedge\.amount: on DBT, credentialsId 11 would trade 10 of the hedge BTC-PERPETUAL/
    )
    assert.include(reasons[0]!, "below the venue's minimum block amount 200000")
  })

  it("checks each account's share of the hedge: a hedge fine as a whole can be too small for one account", () => {
    // 300,000 hedges 100: the 70 % account hedges 210,000, the 30 % account 90,000 < 200,000.
    const reasons = minimumBlockViolations(d("100"), {
      settlementOption: "DBT",
      accounts: accounts(70, 30),
      shape: shapeOf("100", ["1"], { amount: "300000" })
    })
    assert.deepStrictEqual(reasons, [
      "settlementAccounts.DBT: credentialsId 12 would trade 90000 of the hedge BTC-PERPETUAL " +
        "(hedge 300000 × share 30 / RFQ amount 100, rounded down to the step), below the venue's minimum block amount 200000"
    ])
    assert.deepStrictEqual(
      minimumBlockViolations(d("100"), {
        settlementOption: "DBT",
        accounts: accounts(100),
        shape: shapeOf("100", ["1"], { amount: "300000" })
      }),
      []
    )
  })

  it("flags exactly the account and leg pairs whose allocated share × ratio is below the minimum", () => {
    const arbRatios = fc.array(
      fc.integer({ min: 1, max: 50 }).map((tenths) => BigDecimal.format(BigDecimal.make(BigInt(tenths), 1))),
      { minLength: 1, maxLength: 4 }
    )
    fc.assert(
      fc.property(arbAccounts, arbRatios, fc.integer({ min: 1, max: 100_000 }), (list, ratios, tenths) => {
        const amount = BigDecimal.make(BigInt(tenths), 1)
        const shape = shapeOf(BigDecimal.format(amount), ratios)
        const reasons = minimumBlockViolations(amount, { settlementOption: "DBT", accounts: list, shape })
        const shares = allocateSplit(amount, list, d("0.1"))
        const expected = list.flatMap((account, a) =>
          shape.legs.flatMap((leg) => {
            const legAmount = BigDecimal.multiply(shares[a]!, leg.ratio)
            if (BigDecimal.lessThan(legAmount, btcOption.minBlockAmount) || !BigDecimal.isPositive(legAmount))
              return [`${account.credentialsId} ${leg.instrumentName} minimum`]
            if (!isMultipleOf(legAmount, btcOption.amountStep))
              return [`${account.credentialsId} ${leg.instrumentName} step`]
            return []
          })
        )
        const named = reasons.map((r) => {
          const m = /credentialsId (\d+) would trade \S+ of (\S+) .*, (below|not a multiple)/.exec(r)
          return m === null ? r : `${m[1]} ${m[2]} ${m[3] === "below" ? "minimum" : "step"}`
        })
        assert.deepStrictEqual(named, expected)
      })
    )
  })
})

describe("hedgeAmountFor", () => {
  const arbCase = fc.record({
    rfqTenths: fc.integer({ min: 1, max: 1_000_000 }),
    shareOfTenths: fc.integer({ min: 0, max: 1_000_000 }),
    hedgeSteps: fc.integer({ min: 0, max: 1_000_000 })
  })

  it("is H × share / rfqAmount rounded down to the hedge's step, exactly", () => {
    fc.assert(
      fc.property(arbCase, ({ rfqTenths, shareOfTenths, hedgeSteps }) => {
        const rfqAmount = BigDecimal.make(BigInt(rfqTenths), 1)
        const share = BigDecimal.make(BigInt(Math.min(shareOfTenths, rfqTenths)), 1)
        const hedge = { instrumentName: "BTC-PERPETUAL", amount: d(hedgeSteps * 10), rules: btcPerpetual }
        const got = hedgeAmountFor(share, rfqAmount, hedge)
        // got ≤ H·share/A < got + step, checked on integers: got·A ≤ H·share < (got + step)·A.
        const lhs = BigDecimal.multiply(got, rfqAmount)
        const exact = BigDecimal.multiply(hedge.amount, share)
        assert.isTrue(isMultipleOf(got, btcPerpetual.amountStep))
        assert.isFalse(BigDecimal.greaterThan(lhs, exact))
        assert.isTrue(
          BigDecimal.lessThan(
            exact,
            BigDecimal.multiply(BigDecimal.sum(got, btcPerpetual.amountStep), rfqAmount)
          )
        )
      })
    )
  })

  it("the whole RFQ amount carries the whole hedge", () => {
    const hedge = { instrumentName: "BTC-PERPETUAL", amount: d("250000"), rules: btcPerpetual }
    assert.isTrue(BigDecimal.equals(hedgeAmountFor(d("33.3"), d("33.3"), hedge), d("250000")))
  })
})

describe("allocateTrade", () => {
  it("never hedges more in total than the traded share of the hedge", () => {
    fc.assert(
      fc.property(
        arbAccounts,
        fc.integer({ min: 250, max: 10_000 }),
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 20_000, max: 200_000 }),
        (list, rfqTenths, quoteTenths, hedgeSteps) => {
          const rfqAmount = BigDecimal.make(BigInt(rfqTenths), 1)
          const traded = BigDecimal.make(BigInt(Math.min(quoteTenths, rfqTenths)), 1)
          const shape = shapeOf(BigDecimal.format(rfqAmount), ["1"], { amount: String(hedgeSteps * 10) })
          const allocations = allocateTrade(traded, list, shape)
          const hedged = sumDecimals(allocations.map((a) => a.hedge!))
          const exact = BigDecimal.multiply(shape.hedge!.amount, traded)
          assert.isFalse(BigDecimal.greaterThan(BigDecimal.multiply(hedged, rfqAmount), exact))
          assert.isTrue(BigDecimal.equals(sumDecimals(allocations.map((a) => a.share)), traded))
        }
      )
    )
  })

  it("reports the 30 % account of a 70/30 split when a quote of 80 leaves it 24 (issue 12, class 4)", () => {
    const shape = shapeOf("100", ["1"])
    const violations = allocationViolations(allocateTrade(d("80"), accounts(70, 30), shape), shape)
    assert.deepStrictEqual(
      violations.map((v) => [v.accountIndex, v.leg, BigDecimal.format(v.amount), v.rule]),
      [[1, 0, "24", "minimum"]]
    )
    assert.deepStrictEqual(allocationViolations(allocateTrade(d("90"), accounts(70, 30), shape), shape), [])
  })
})

import { assert, describe, it } from "@effect/vitest"
import { CreateRfqRequest } from "../../src/api/RfqRequests.js"
import { decodeErr, decodeOk } from "./support.js"

/**
 * Split rules 1–3 (docs/algorithms.md): every violation is reported, one reason each, not only the
 * first. Issue 12: a percentage of 0 used to hide the duplicate credentials and the wrong total.
 */

const body = (settlementAccounts: Record<string, unknown>) => ({
  baseCurrency: "BTC",
  amount: 25,
  anonymous: false,
  settlementOptions: ["DBT", "BULL"],
  makers: { DBT: ["maker-1"], BULL: ["maker-1"] },
  legs: [{ direction: "buy", instrumentName: "BTC-27DEC30-100000-C", ratio: 1 }],
  settlementAccounts
})

const reasonsOf = (settlementAccounts: Record<string, unknown>) =>
  [...(decodeErr(CreateRfqRequest, body(settlementAccounts)).reason ?? [])].sort()

describe("SettlementAccountsInput: split rules 1–3", () => {
  it("reports a zero percentage, a duplicate and the total of one option together", () => {
    assert.deepStrictEqual(
      reasonsOf({
        DBT: [
          { credentialsId: 7, percentage: 0 },
          { credentialsId: 7, percentage: 90 }
        ],
        BULL: [{ credentialsId: 8, percentage: 100 }]
      }),
      [
        "settlementAccounts.DBT: percentages must total exactly 100, got 90",
        "settlementAccounts.DBT[0].percentage: must be greater than 0",
        "settlementAccounts.DBT[1].credentialsId: duplicates element 0"
      ]
    )
  })

  it("reports every violation of every option, ranges included", () => {
    assert.deepStrictEqual(
      reasonsOf({
        DBT: [
          { credentialsId: 7, percentage: -5 },
          { credentialsId: 9, percentage: 50 },
          { credentialsId: 7, percentage: 50 },
          { credentialsId: 9, percentage: 0 }
        ],
        BULL: [
          { credentialsId: 8, percentage: 150 },
          { credentialsId: 10, percentage: 30 }
        ]
      }),
      [
        "settlementAccounts.BULL: percentages must total exactly 100, got 180",
        "settlementAccounts.BULL[0].percentage: must be at most 100",
        "settlementAccounts.DBT: percentages must total exactly 100, got 95",
        "settlementAccounts.DBT[0].percentage: must be greater than 0",
        "settlementAccounts.DBT[2].credentialsId: duplicates element 0",
        "settlementAccounts.DBT[3].credentialsId: duplicates element 1",
        "settlementAccounts.DBT[3].percentage: must be greater than 0"
      ]
    )
  })

  it("still accepts a valid split, summed exactly", () => {
    const rfq = decodeOk(
      CreateRfqRequest,
      body({
        DBT: [
          { credentialsId: 7, percentage: 33.33 },
          { credentialsId: 9, percentage: 33.33 },
          { credentialsId: 11, percentage: 33.34 }
        ],
        BULL: [{ credentialsId: 8, percentage: 100 }]
      })
    )
    assert.strictEqual(rfq.settlementAccounts?.DBT?.length, 3)
    assert.deepStrictEqual(
      reasonsOf({
        DBT: [
          { credentialsId: 7, percentage: 33.3 },
          { credentialsId: 9, percentage: 33.3 },
          { credentialsId: 11, percentage: 33.3 }
        ],
        BULL: [{ credentialsId: 8, percentage: 100 }]
      }),
      ["settlementAccounts.DBT: percentages must total exactly 100, got 99.9"]
    )
  })
})

import { expect } from "vitest"
import { createRfq, farOption, getRfq, quoteBody, rfqBody, split, trade } from "../Fixtures.js"
import { group, scenario } from "../Scenario.js"
import { expectError, expectOk } from "../Shapes.js"
import type { World } from "../World.js"

/**
 * Rules that keep money safe at creation and quote time (issue 12, classes 4 and 8): a quote that
 * would leave an account of the taker's split below the venue's minimum is refused on create and
 * on update, a hedge below the venue's minimum (as a whole or for one account's share) is refused
 * at creation, and every settlement option needs invited makers.
 */

const PERPETUAL = "BTC-PERPETUAL"
const invalid = { status: 400, message: "invalid request" } as const

/** The perpetual's mark, on its 0.5 tick: the markPrice of a one-leg perpetual RFQ, cancelled at once. */
const perpetualMark = async (w: World): Promise<number> => {
  const rfqId = await createRfq(
    w,
    "taker",
    rfqBody(w, "taker", {
      amount: 200_000,
      legs: [{ direction: "buy", instrumentName: PERPETUAL, ratio: 1 }]
    })
  )
  const mark = (await getRfq(w, "taker", rfqId)).markPrice
  expectOk(
    await w.api.post("/v1/rfq/cancel", { token: w.token("taker"), json: { rfqId } }),
    "CancelRfqResponse"
  )
  return Math.round(mark * 2) / 2
}

const postQuote = (w: World, body: unknown) =>
  w.api.post("/v1/rfq/quote", { token: w.token("maker1"), json: body })

const putQuote = (w: World, body: unknown) =>
  w.api.put("/v1/rfq/quote", { token: w.token("maker1"), json: body })

const oneCall = [{ direction: "buy", instrumentName: farOption(90000), ratio: 1 }]

export const moneyRules = group("money rules", [
  scenario(
    "split rule 4 at quote time: 80 of a 70/30 split of 100 is refused on create and update; 90 trades in full",
    async (w) => {
      const rfqId = await createRfq(
        w,
        "taker",
        rfqBody(w, "taker", {
          legs: oneCall,
          settlementAccounts: split(w, [
            ["dbt-main", 70],
            ["dbt-alt", 30]
          ])
        })
      )
      const label = `rule4-${w.tag}`
      const body = await quoteBody(w, "maker1", rfqId, { direction: "sell", amount: 80, label })
      const refused = await postQuote(w, body)
      expectError(refused, {
        ...invalid,
        reasonIncludes: ["settlement account 2 of 2", "would trade 24 of", "minimum block amount 25"]
      })
      // The taker's credentials ids are not the maker's business.
      expect(refused.text).not.toContain("credentialsId")
      expect(refused.text).not.toMatch(/\b30 ?%/)
      const { rfqQuoteId } = expectOk<{ rfqQuoteId: number }>(
        await postQuote(w, { ...body, amount: 100 }),
        "CreateQuoteResponse"
      )
      const update = { label, amount: 80, settlementOption: "DBT", legs: body.legs }
      expectError(await putQuote(w, update), { ...invalid, reasonIncludes: ["settlement account 2 of 2"] })
      const book = expectOk<Array<{ asks: Array<{ rfqQuoteId: number; amount: number }> }>>(
        await w.api.get(`/v1/rfq/${rfqId}/quote`, { token: w.token("taker") }),
        "TakerQuotesResponse"
      )
      expect(book[0]?.asks).toMatchObject([{ rfqQuoteId, amount: 100 }])
      expectOk(await putQuote(w, { ...update, amount: 90 }), "UpdateQuoteResponse")
      const answer = await trade(w, "taker", rfqQuoteId)
      expect(answer.allocations?.map((a) => [a.amount, a.status])).toEqual([
        [63, "filled"],
        [27, "filled"]
      ])
      expect(await getRfq(w, "taker", rfqId)).toMatchObject({ status: "filled", filledAmount: 90 })
    }
  ),

  scenario(
    "a hedge below the venue's minimum, as a whole or for one account, is refused at creation",
    async (w) => {
      const price = await perpetualMark(w)
      const hedge = (amount: number) => ({ direction: "sell", instrumentName: PERPETUAL, amount, price })
      // The case: a BTC-PERPETUAL hedge of 10 could never trade (minimum 200,000).
      expectError(
        await w.api.post("/v1/rfq/0", {
          token: w.token("taker"),
          json: rfqBody(w, "taker", { legs: oneCall, hedge: hedge(10) })
        }),
        {
          ...invalid,
          reasonIncludes: ["hedge.amount", PERPETUAL, "minimum block amount 200000"]
        }
      )
      // 300,000 over 70/30: the 30 % account would hedge 90,000.
      const split7030 = split(w, [
        ["dbt-main", 70],
        ["dbt-alt", 30]
      ])
      expectError(
        await w.api.post("/v1/rfq/0", {
          token: w.token("taker"),
          json: rfqBody(w, "taker", { legs: oneCall, settlementAccounts: split7030, hedge: hedge(300_000) })
        }),
        { ...invalid, reasonIncludes: ["would trade 90000 of the hedge"] }
      )
      // 500,000 over 50/50 is fine for the whole amount; a quote of 70 would hedge 175,000 each.
      const rfqId = await createRfq(
        w,
        "taker",
        rfqBody(w, "taker", {
          legs: oneCall,
          settlementAccounts: split(w, [
            ["dbt-main", 50],
            ["dbt-alt", 50]
          ]),
          hedge: hedge(500_000)
        })
      )
      const body = {
        ...(await quoteBody(w, "maker1", rfqId, { direction: "sell", amount: 70 })),
        hedge: { instrumentName: PERPETUAL, price }
      }
      expectError(await postQuote(w, body), { ...invalid, reasonIncludes: ["of the hedge BTC-PERPETUAL"] })
      const { rfqQuoteId } = expectOk<{ rfqQuoteId: number }>(
        await postQuote(w, { ...body, amount: 100 }),
        "CreateQuoteResponse"
      )
      const answer = await trade(w, "taker", rfqQuoteId)
      expect(answer.allocations?.map((a) => a.status)).toEqual(["filled", "filled"])
    }
  ),

  scenario("a settlement option nobody is invited on is refused, naming the option", async (w) => {
    const both = {
      settlementOptions: ["DBT", "BULL"],
      settlementCredentials: {
        DBT: w.credentialsId("taker", "dbt-main"),
        BULL: w.credentialsId("taker", "bull-main")
      }
    }
    expectError(
      await w.api.post("/v1/rfq/0", {
        token: w.token("taker"),
        json: rfqBody(w, "taker", { ...both, makers: { DBT: ["maker-1"] } })
      }),
      { ...invalid, reasonIncludes: ["makers.BULL", "no invited makers"] }
    )
    expectError(
      await w.api.post("/v1/rfq/0", {
        token: w.token("taker"),
        json: rfqBody(w, "taker", { ...both, makers: { DBT: ["maker-1"], BULL: [] } })
      }),
      { ...invalid, reasonIncludes: ["makers.BULL"] }
    )
    await createRfq(
      w,
      "taker",
      rfqBody(w, "taker", { ...both, makers: { DBT: ["maker-1"], BULL: ["maker-2"] } })
    )
  })
])

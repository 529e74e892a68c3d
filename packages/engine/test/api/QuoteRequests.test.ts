import { assert, describe, it } from "@effect/vitest"
import {
  CancelAllQuotesRequest,
  CreateQuoteRequest,
  DeleteQuoteRequest,
  UpdateQuoteRequest
} from "../../src/api/QuoteRequests.js"
import { assertBad, assertDecimal, type BadCase, decodeOk, withFields } from "./support.js"

const call = "BTC-27DEC30-100000-C"
const put = "BTC-27DEC30-90000-P"
const invalid = "invalid request"

const createBody = {
  rfqId: 12,
  label: "q-1",
  amount: 25.5,
  direction: "sell",
  settlementOption: "DBT",
  settlementCredentials: 3,
  legs: [
    { instrumentName: call, price: 0.0125 },
    { instrumentName: put, price: 0 }
  ],
  hedge: { instrumentName: "BTC-PERPETUAL", price: 65000 }
}

describe("CreateQuoteRequest", () => {
  it("decodes a full quote exactly", () => {
    const quote = decodeOk(CreateQuoteRequest, { ...createBody, status: "filled", makerId: "maker-9" })
    assert.strictEqual(quote.rfqId, 12)
    assert.strictEqual(quote.label, "q-1")
    assertDecimal(quote.amount, "25.5")
    assert.strictEqual(quote.direction, "sell")
    assert.strictEqual(quote.settlementOption, "DBT")
    assert.strictEqual(quote.settlementCredentials, 3)
    assertDecimal(quote.legs[0]?.price, "0.0125")
    assertDecimal(quote.legs[1]?.price, "0")
    assertDecimal(quote.hedge?.price, "65000")
    assert.deepStrictEqual(Object.keys(quote).sort(), [
      "amount",
      "direction",
      "hedge",
      "label",
      "legs",
      "rfqId",
      "settlementCredentials",
      "settlementOption"
    ])
  })

  it("needs no label, settlement credentials or hedge", () => {
    const quote = decodeOk(
      CreateQuoteRequest,
      withFields(createBody, { label: undefined, settlementCredentials: undefined, hedge: undefined })
    )
    assert.isFalse("label" in quote)
    assert.isFalse("hedge" in quote)
  })

  const rows: ReadonlyArray<BadCase> = [
    {
      name: "rfqId missing",
      input: withFields(createBody, { rfqId: undefined }),
      message: invalid,
      reason: "rfqId: is missing"
    },
    {
      name: "amount 0",
      input: { ...createBody, amount: 0 },
      message: invalid,
      reason: "amount: must be greater than 0"
    },
    {
      name: "direction bid",
      input: { ...createBody, direction: "bid" },
      message: invalid,
      reason: 'direction: must be "buy" or "sell"'
    },
    {
      name: "lower-case settlement option",
      input: { ...createBody, settlementOption: "dbt" },
      message: invalid,
      reason: 'settlementOption: must be "BULL" or "DBT"'
    },
    {
      name: "empty label",
      input: { ...createBody, label: "" },
      message: "empty value",
      reason: "label: must not be empty"
    },
    {
      name: "negative option price",
      input: { ...createBody, legs: [{ instrumentName: call, price: -0.0005 }] },
      message: invalid,
      reason: "legs[0].price: must not be negative (only a future spread can be priced below 0)"
    },
    {
      name: "leg price missing",
      input: { ...createBody, legs: [{ instrumentName: call }] },
      message: invalid,
      reason: "legs[0].price: is missing"
    },
    {
      name: "no legs",
      input: { ...createBody, legs: [] },
      message: invalid,
      reason: "legs: must not be empty"
    },
    {
      name: "hedge price 0",
      input: { ...createBody, hedge: { instrumentName: "BTC-PERPETUAL", price: 0 } },
      message: invalid,
      reason: "hedge.price: must be greater than 0"
    },
    {
      name: "credentials as string",
      input: { ...createBody, settlementCredentials: "3" },
      message: invalid,
      reason: 'settlementCredentials: expected a positive integer, got "3"'
    }
  ]
  for (const row of rows) it(row.name, () => assertBad(CreateQuoteRequest, row))
})

const updateBody = {
  rfqQuoteId: 7,
  amount: 30,
  settlementOption: "BULL",
  legs: [{ instrumentName: call, price: 1500 }]
}

describe("UpdateQuoteRequest", () => {
  it("identifies the quote by id or by label", () => {
    assert.strictEqual(decodeOk(UpdateQuoteRequest, updateBody).rfqQuoteId, 7)
    const byLabel = decodeOk(
      UpdateQuoteRequest,
      withFields(updateBody, { rfqQuoteId: undefined, label: "q-1" })
    )
    assert.strictEqual(byLabel.label, "q-1")
    assert.isFalse("rfqQuoteId" in byLabel)
  })

  it("ignores a direction (a quote's side is fixed at creation)", () => {
    assert.isFalse("direction" in decodeOk(UpdateQuoteRequest, { ...updateBody, direction: "buy" }))
  })

  const rows: ReadonlyArray<BadCase> = [
    {
      name: "neither id nor label",
      input: withFields(updateBody, { rfqQuoteId: undefined }),
      message: invalid,
      reason: "rfqQuoteId or label is required"
    },
    {
      name: "amount missing",
      input: withFields(updateBody, { amount: undefined }),
      message: invalid,
      reason: "amount: is missing"
    },
    {
      name: "settlement option missing",
      input: withFields(updateBody, { settlementOption: undefined }),
      message: invalid,
      reason: "settlementOption: is missing"
    }
  ]
  for (const row of rows) it(row.name, () => assertBad(UpdateQuoteRequest, row))
})

describe("DeleteQuoteRequest", () => {
  it("accepts a label, an id or both", () => {
    assert.deepStrictEqual(decodeOk(DeleteQuoteRequest, { label: "q-1" }), { label: "q-1" })
    assert.strictEqual(decodeOk(DeleteQuoteRequest, { rfqQuoteId: 2 }).rfqQuoteId, 2)
    assert.strictEqual(decodeOk(DeleteQuoteRequest, { rfqQuoteId: 2, label: "q" }).label, "q")
  })
  it("refuses a body naming no quote", () =>
    assertBad(DeleteQuoteRequest, {
      name: "empty",
      input: { rfqId: 3 },
      message: invalid,
      reason: "rfqQuoteId or label is required"
    }))
  it("an empty label is an empty value", () =>
    assertBad(DeleteQuoteRequest, {
      name: "empty label",
      input: { label: "" },
      message: "empty value",
      reason: "label: must not be empty"
    }))
})

describe("CancelAllQuotesRequest", () => {
  it("accepts an empty body and each filter", () => {
    assert.deepStrictEqual(decodeOk(CancelAllQuotesRequest, {}), {})
    assert.deepStrictEqual(decodeOk(CancelAllQuotesRequest, { rfqId: 4, baseCurrency: "ETH" }), {
      rfqId: 4,
      baseCurrency: "ETH"
    } as never)
  })
  it("refuses an unknown base currency", () =>
    assertBad(CancelAllQuotesRequest, {
      name: "SOL",
      input: { baseCurrency: "SOL" },
      message: invalid,
      reason: 'baseCurrency: must be "BTC" or "ETH"'
    }))
})

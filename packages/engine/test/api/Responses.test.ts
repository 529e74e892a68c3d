import { assert, describe, it } from "@effect/vitest"
import { BigDecimal, Either, JSONSchema, Option, Schema, SchemaAST } from "effect"
import { BulkBlockTradeResult, ExchangeCredentialsDetail } from "../../src/api/AccountResponses.js"
import { ErrorBody, TokenErrorBody } from "../../src/api/AuthResponses.js"
import { TakerQuotes } from "../../src/api/QuoteResponses.js"
import { MakerRfq, Rfq, RfqListItem, RfqPage, Trade } from "../../src/api/RfqResponses.js"
import { apiError } from "../../src/domain/Errors.js"
import type { CredentialsId, MakerId, QuoteId, RfqId, TradeId } from "../../src/domain/Primitives.js"
import { examples } from "./examples.js"
import { requestSchemas, responseSchemas } from "./schemas.js"

const d = BigDecimal.unsafeFromString

const takerRfq: typeof Rfq.Type = {
  rfqId: 7 as RfqId,
  productId: 1,
  label: "my-structure",
  kind: "option",
  strategy: "Call Spread",
  description: "BTC 27DEC30 90000/110000 Call Spread",
  status: "filledPartial",
  baseCurrency: "BTC",
  quoteCurrency: "BTC",
  quoteCurrencies: { DBT: "BTC", BULL: "USDC" },
  amount: d("0.1"),
  anonymous: false,
  role: "taker",
  markPrice: d("0.0123"),
  tradeDirection: "buy",
  tradePrice: d("0.0125"),
  tradeAmount: d("0.1"),
  tradeCreatedAt: 1700000000000,
  tradeId: 3 as TradeId,
  filledAmount: d("0.06"),
  legs: [
    {
      instrumentId: 11,
      instrumentName: "BTC-27DEC30-90000-C",
      direction: "buy",
      ratio: d("1"),
      expiry: "27DEC30",
      amount: d("0.1")
    },
    {
      instrumentId: 12,
      instrumentName: "BTC-27DEC30-110000-C",
      direction: "sell",
      ratio: d("1"),
      expiry: "27DEC30",
      amount: d("0.1")
    }
  ],
  hedge: { amount: d("1000"), direction: "sell", instrumentName: "BTC-PERPETUAL", price: d("65000.5") },
  settlementCredentials: [
    { settlementOption: "DBT", credentialsId: 1 as CredentialsId, percentage: d("60") },
    { settlementOption: "DBT", credentialsId: 2 as CredentialsId, percentage: d("40") }
  ],
  tradeAllocations: [
    {
      credentialsId: 1 as CredentialsId,
      percentage: d("60"),
      amount: d("0.06"),
      status: "filled",
      exchangeTradeId: "DBT-1"
    },
    {
      credentialsId: 2 as CredentialsId,
      percentage: d("40"),
      amount: d("0.04"),
      status: "failed",
      reason: "rejected"
    }
  ],
  settlementOptions: ["DBT", "BULL"],
  quotes: [
    {
      rfqQuoteId: 5 as QuoteId,
      price: d("0.0125"),
      amount: d("0.1"),
      makers: ["maker-1" as MakerId],
      createdAt: 1
    }
  ],
  trades: [
    { direction: "buy", price: d("0.0125"), amount: d("0.06"), exchangeTradeId: "DBT-1", createdAt: 2 }
  ],
  createdAt: 1699999999000,
  expiresAt: 1700000299000
}

describe("response encoding", () => {
  it("encodes decimals as the exact JSON numbers", () => {
    const json = Schema.encodeSync(Rfq)(takerRfq) as Record<string, any>
    assert.strictEqual(json["amount"], 0.1)
    assert.strictEqual(json["filledAmount"], 0.06)
    assert.strictEqual(json["hedge"].price, 65000.5)
    assert.strictEqual(json["legs"][0].ratio, 1)
    assert.strictEqual(json["tradeAllocations"][1].status, "failed")
    assert.strictEqual(JSON.parse(JSON.stringify(json))["markPrice"], 0.0123)
  })

  it("round-trips an RFQ through JSON", () => {
    const encoded = Schema.encodeSync(Rfq)(takerRfq)
    const decoded = Schema.decodeUnknownSync(Rfq)(JSON.parse(JSON.stringify(encoded)))
    assert.deepStrictEqual(Schema.encodeSync(Rfq)(decoded), encoded)
    assert.isTrue(BigDecimal.equals(decoded.amount, takerRfq.amount))
  })

  it("a list item never carries settlement accounts or allocations", () => {
    const json = Schema.encodeSync(RfqListItem)(takerRfq) as Record<string, unknown>
    assert.isFalse("settlementCredentials" in json)
    assert.isFalse("tradeAllocations" in json)
    assert.strictEqual(json["label"], "my-structure")
  })

  it("a maker's view never carries the taker's label, accounts or allocations", () => {
    const json = Schema.encodeSync(MakerRfq)({ ...takerRfq, role: "maker" }) as Record<string, unknown>
    for (const key of ["label", "settlementCredentials", "tradeAllocations"]) assert.isFalse(key in json, key)
    assert.strictEqual(json["role"], "maker")
  })

  it("a page wraps list items with totalResults and cursor", () => {
    const json = Schema.encodeSync(RfqPage)({ totalResults: 1, cursor: 0, results: [takerRfq] })
    assert.strictEqual(json.results.length, 1)
    assert.isFalse("settlementCredentials" in (json.results[0] ?? {}))
  })

  it("refuses to encode a decimal that is not a finite JSON number", () => {
    const trade = {
      direction: "buy",
      price: d("1e400"),
      amount: d("1"),
      exchangeTradeId: "x",
      createdAt: 1
    } as const
    assert.isTrue(Either.isLeft(Schema.encodeEither(Trade)(trade)))
  })

  it("the error body of an ApiError matches ErrorBody", () => {
    const body = apiError("invalidRequest", ["amount: must be greater than 0"]).toBody()
    assert.deepStrictEqual(Schema.encodeSync(ErrorBody)(body), {
      code: 400,
      message: "invalid request",
      reason: ["amount: must be greater than 0"]
    })
    assert.deepStrictEqual(
      Schema.encodeSync(TokenErrorBody)({ code: 401, message: "invalid client ID", error: "invalid_client" }),
      {
        code: 401,
        message: "invalid client ID",
        error: "invalid_client"
      }
    )
  })

  it("drops fields a response object does not declare", () => {
    const detail = Schema.encodeSync(ExchangeCredentialsDetail)({
      alias: "dbt-main",
      clientId: "id",
      clientSecret: "secret",
      credentialsId: 1 as CredentialsId,
      exchangeId: 1,
      isExchangeDefault: true,
      exchange: "Deribit",
      deskId: 9
    } as never) as Record<string, unknown>
    assert.isFalse("exchange" in detail)
    assert.isFalse("deskId" in detail)
    const result = Schema.encodeSync(BulkBlockTradeResult)({
      nonce: "n",
      exchangeError: { message: "rejected" }
    })
    assert.deepStrictEqual(result, { nonce: "n", exchangeError: { message: "rejected" } })
    const ladder = Schema.encodeSync(TakerQuotes)({
      rfqId: 7 as RfqId,
      settlementOption: "BULL",
      quoteCurrency: "USDC",
      bids: [],
      asks: []
    })
    assert.deepStrictEqual(ladder, {
      rfqId: 7,
      settlementOption: "BULL",
      quoteCurrency: "USDC",
      bids: [],
      asks: []
    })
  })
})

describe("JSON Schema generation", () => {
  const identifierOf = (schema: Schema.Schema.Any) =>
    Option.getOrUndefined(SchemaAST.getIdentifierAnnotation(schema.ast))

  it("works for every request and response schema", () => {
    for (const [name, schema] of [...requestSchemas, ...responseSchemas]) {
      const document = JSONSchema.make(schema)
      const text = JSON.stringify(document)
      assert.isString(text, name)
      assert.deepStrictEqual(JSON.parse(text), document, name)
    }
  })

  it("names every request and response object after its export, with a description", () => {
    const named = [...requestSchemas, ...responseSchemas].filter(
      ([, schema]) => identifierOf(schema) !== undefined
    )
    for (const [name, schema] of named) {
      assert.strictEqual(identifierOf(schema), name)
      const document = JSONSchema.make(schema) as { $defs?: Record<string, { description?: string }> }
      assert.isString(document.$defs?.[name]?.description, name)
    }
    for (const { name, schema } of examples) {
      const document = JSONSchema.make(schema) as {
        $ref?: string
        $defs?: Record<string, { description?: string }>
      }
      assert.strictEqual(document.$ref, `#/$defs/${name}`)
      assert.isString(document.$defs?.[name]?.description, name)
    }
    const responseObjects = responseSchemas.filter(([, schema]) => {
      const ast = schema.ast
      return SchemaAST.isTypeLiteral(ast) || SchemaAST.isTupleType(ast)
    })
    for (const [name, schema] of responseObjects) assert.strictEqual(identifierOf(schema), name)
  })
})

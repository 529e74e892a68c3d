import { assert, describe, it } from "@effect/vitest"
import { BigDecimal, Effect } from "effect"
import { decodeRequest } from "../../src/api/Decode.js"
import {
  CancelRfqRequest,
  CreateRfqBody,
  CreateRfqRequest,
  DeleteRfqRequest,
  GetRfqRequest,
  LegPricesRequest,
  rfqRequestLimits,
  TakerQuotesRequest,
  TradeRequest
} from "../../src/api/RfqRequests.js"
import type { CredentialsId, RfqId } from "../../src/domain/Primitives.js"
import { assertBad, assertDecimal, type BadCase, decodeErr, decodeOk, withFields } from "./support.js"

const call = "BTC-27DEC30-100000-C"
const put = "BTC-27DEC30-90000-P"

/** A minimal valid body. */
const minimal = {
  baseCurrency: "BTC",
  amount: 25,
  anonymous: false,
  settlementOptions: ["DBT"],
  makers: { DBT: ["maker-1"] },
  legs: [{ direction: "buy", instrumentName: call, ratio: 1 }]
}

const full = {
  baseCurrency: "BTC",
  quoteCurrency: "USDC",
  amount: 0.1,
  anonymous: true,
  settlementOptions: ["DBT", "BULL"],
  settlementCredentials: { DBT: 11, BULL: 12 },
  settlementAccounts: {
    DBT: [
      { credentialsId: 11, percentage: 33.33 },
      { credentialsId: 13, percentage: 33.33 },
      { credentialsId: 14, percentage: 33.34 }
    ],
    BULL: [{ credentialsId: 12, percentage: 100 }]
  },
  makers: { DBT: ["maker-1", "maker-2"], BULL: ["maker-1"] },
  legs: [
    { direction: "buy", instrumentName: call, ratio: 1, price: 0.0125 },
    { direction: "sell", instrumentName: put, ratio: 1.5 }
  ],
  hedge: { direction: "sell", instrumentName: "BTC-PERPETUAL", amount: 10000, price: 65000.5 },
  label: "my-structure-1"
}

describe("CreateRfqRequest: valid bodies", () => {
  it.effect("decodes every field of a full body exactly", () =>
    Effect.gen(function* () {
      const rfq = yield* decodeRequest(CreateRfqRequest, { ...full, id: "42" })
      assert.strictEqual(rfq.requestId, 42)
      assert.strictEqual(rfq.baseCurrency, "BTC")
      assert.strictEqual(rfq.quoteCurrency, "USDC")
      assertDecimal(rfq.amount, "0.1")
      assert.strictEqual(BigDecimal.format(rfq.amount), "0.1")
      assert.isTrue(rfq.anonymous)
      assert.deepStrictEqual(rfq.settlementOptions, ["DBT", "BULL"])
      assert.deepStrictEqual(rfq.settlementCredentials, {
        DBT: 11 as CredentialsId,
        BULL: 12 as CredentialsId
      })
      const dbt = rfq.settlementAccounts?.DBT ?? []
      assert.deepStrictEqual(
        dbt.map((a) => [a.credentialsId, BigDecimal.format(a.percentage)]),
        [
          [11, "33.33"],
          [13, "33.33"],
          [14, "33.34"]
        ]
      )
      assert.deepStrictEqual<unknown>(rfq.makers, { DBT: ["maker-1", "maker-2"], BULL: ["maker-1"] })
      assert.strictEqual(rfq.legs.length, 2)
      assert.strictEqual(rfq.legs[0]?.direction, "buy")
      assertDecimal(rfq.legs[0]?.price, "0.0125")
      assertDecimal(rfq.legs[1]?.ratio, "1.5")
      assert.isFalse("price" in (rfq.legs[1] ?? {}))
      assertDecimal(rfq.hedge?.amount, "10000")
      assertDecimal(rfq.hedge?.price, "65000.5")
      assert.strictEqual(rfq.label, "my-structure-1")
    })
  )

  it("defaults the request id to 0 and leaves optional fields absent", () => {
    const rfq = decodeOk(CreateRfqRequest, minimal)
    assert.strictEqual(rfq.requestId, 0)
    assert.deepStrictEqual(Object.keys(rfq).sort(), [
      "amount",
      "anonymous",
      "baseCurrency",
      "legs",
      "makers",
      "requestId",
      "settlementOptions"
    ])
  })

  it("accepts a JSON number as the id (JSON-RPC) and 0 as 'no key'", () => {
    assert.strictEqual(decodeOk(CreateRfqRequest, { ...minimal, id: 9 }).requestId, 9)
    assert.strictEqual(decodeOk(CreateRfqRequest, { ...minimal, id: "0" }).requestId, 0)
  })

  it("keeps decimals exact across magnitudes", () => {
    for (const [amount, expected] of [
      [0.1, "0.1"],
      [0.3, "0.3"],
      [1e-7, "0.0000001"],
      [1e21, "1000000000000000000000"],
      [123456.789, "123456.789"]
    ] as const) {
      const rfq = decodeOk(CreateRfqRequest, { ...minimal, amount })
      assertDecimal(rfq.amount, expected)
    }
  })

  it("allows a negative price only on a future spread leg", () => {
    const rfq = decodeOk(CreateRfqRequest, {
      ...minimal,
      legs: [{ direction: "buy", instrumentName: "BTC-FS-27DEC30_PERP", ratio: 1, price: -12.5 }]
    })
    assertDecimal(rfq.legs[0]?.price, "-12.5")
    assertBad(CreateRfqRequest, {
      name: "negative option price",
      input: { ...minimal, legs: [{ direction: "buy", instrumentName: call, ratio: 1, price: -0.01 }] },
      message: "invalid request",
      reason: "legs[0].price: must not be negative (only a future spread can be priced below 0)"
    })
  })

  it("drops unknown fields at every level, including status, deskId and __proto__", () => {
    const body = JSON.parse(
      JSON.stringify({
        ...minimal,
        status: "filled",
        deskId: 99,
        rfqId: 5,
        legs: [{ direction: "buy", instrumentName: call, ratio: 1, instrumentId: 7 }]
      }).replace("{", '{"__proto__":{"polluted":true},')
    )
    assert.isTrue(Object.hasOwn(body, "__proto__"))
    const rfq = decodeOk(CreateRfqRequest, body)
    for (const key of ["status", "deskId", "rfqId", "__proto__"]) assert.isFalse(Object.hasOwn(rfq, key), key)
    assert.strictEqual(Object.getPrototypeOf(rfq), Object.prototype)
    assert.isUndefined((rfq as Record<string, unknown>)["polluted"])
    assert.isUndefined(({} as Record<string, unknown>)["polluted"])
    assert.deepStrictEqual(Object.keys(rfq.legs[0] ?? {}).sort(), ["direction", "instrumentName", "ratio"])
  })

  it("CreateRfqBody is the same body without the path id", () => {
    const body = decodeOk(CreateRfqBody, { ...minimal, id: 5 })
    assert.isFalse(Object.hasOwn(body, "requestId"))
    assert.isFalse(Object.hasOwn(body, "id"))
  })
})

const leg = (patch: Record<string, unknown>) => ({
  direction: "buy",
  instrumentName: call,
  ratio: 1,
  ...patch
})
const invalid = "invalid request"

const badBodies: ReadonlyArray<BadCase> = [
  {
    name: "amount 0",
    input: { ...minimal, amount: 0 },
    message: invalid,
    reason: "amount: must be greater than 0"
  },
  {
    name: "amount < 0",
    input: { ...minimal, amount: -1 },
    message: invalid,
    reason: "amount: must be greater than 0"
  },
  {
    name: "amount -0",
    input: { ...minimal, amount: -0 },
    message: invalid,
    reason: "amount: must be greater than 0"
  },
  {
    name: "amount as string",
    input: { ...minimal, amount: "1" },
    message: invalid,
    reason: 'amount: expected a number, got "1"'
  },
  {
    name: "amount Infinity (1e400)",
    input: JSON.parse(JSON.stringify(minimal).replace('"amount":25', '"amount":1e400')),
    message: invalid,
    reason: "amount: must be a finite number"
  },
  {
    name: "amount missing",
    input: withFields(minimal, { amount: undefined }),
    message: invalid,
    reason: "amount: is missing"
  },
  {
    name: "baseCurrency unknown",
    input: { ...minimal, baseCurrency: "SOL" },
    message: invalid,
    reason: 'baseCurrency: must be "BTC" or "ETH"'
  },
  {
    name: "baseCurrency empty",
    input: { ...minimal, baseCurrency: "" },
    message: "empty value",
    reason: "baseCurrency: must not be empty"
  },
  {
    name: "direction blank",
    input: { ...minimal, legs: [leg({ direction: " " })] },
    message: "empty value",
    reason: "legs[0].direction: must not be empty"
  },
  {
    name: "anonymous as string",
    input: { ...minimal, anonymous: "false" },
    message: invalid,
    reason: 'anonymous: expected a boolean, got "false"'
  },
  {
    name: "direction bid",
    input: { ...minimal, legs: [leg({ direction: "bid" })] },
    message: invalid,
    reason: 'legs[0].direction: must be "buy" or "sell"'
  },
  {
    name: "ratio not a number",
    input: { ...minimal, legs: [leg({}), leg({ instrumentName: put, ratio: "x" })] },
    message: invalid,
    reason: 'legs[1].ratio: expected a number, got "x"'
  },
  {
    name: "ratio 0",
    input: { ...minimal, legs: [leg({ ratio: 0 })] },
    message: invalid,
    reason: "legs[0].ratio: must be greater than 0"
  },
  {
    name: "ratio with 3 decimals",
    input: { ...minimal, legs: [leg({ ratio: 0.125 })] },
    message: "failed to convert ratio to int",
    reason: "legs[0].ratio: must have at most 2 decimal places"
  },
  {
    name: "empty instrument name",
    input: { ...minimal, legs: [leg({ instrumentName: "" })] },
    message: "empty value",
    reason: "legs[0].instrumentName: must not be empty"
  },
  {
    name: "blank instrument name",
    input: { ...minimal, legs: [leg({ instrumentName: "   " })] },
    message: "empty value",
    reason: "legs[0].instrumentName: must not be empty"
  },
  {
    name: "empty label",
    input: { ...minimal, label: "" },
    message: "empty value",
    reason: "label: must not be empty"
  },
  {
    name: "overlong label",
    input: { ...minimal, label: "x".repeat(65) },
    message: invalid,
    reason: "label: must be at most 64 characters"
  },
  { name: "no legs", input: { ...minimal, legs: [] }, message: invalid, reason: "legs: must not be empty" },
  {
    name: "legs missing",
    input: withFields(minimal, { legs: undefined }),
    message: invalid,
    reason: "legs: is missing"
  },
  {
    name: "too many legs",
    input: {
      ...minimal,
      legs: Array.from({ length: rfqRequestLimits.legs + 1 }, (_, i) =>
        leg({ instrumentName: `BTC-27DEC30-${i + 1}000-C` })
      )
    },
    message: invalid,
    reason: `legs: must have at most ${rfqRequestLimits.legs} elements`
  },
  {
    name: "same instrument twice",
    input: { ...minimal, legs: [leg({}), leg({ direction: "sell" })] },
    message: invalid,
    reason: "legs[1].instrumentName: duplicates element 0"
  },
  {
    name: "legs not an array",
    input: { ...minimal, legs: { direction: "buy" } },
    message: invalid,
    reason: "legs: expected an array, got an object"
  },
  {
    name: "no settlement option",
    input: { ...minimal, settlementOptions: [] },
    message: invalid,
    reason: "settlementOptions: must not be empty"
  },
  {
    name: "unknown settlement option",
    input: { ...minimal, settlementOptions: ["dbt"] },
    message: invalid,
    reason: 'settlementOptions[0]: must be "BULL" or "DBT"'
  },
  {
    name: "settlement option twice",
    input: { ...minimal, settlementOptions: ["DBT", "DBT"] },
    message: invalid,
    reason: "settlementOptions[1]: duplicates element 0"
  },
  {
    name: "makers keyed by an unknown option",
    input: { ...minimal, makers: { DBT: ["maker-1"], FOO: ["maker-2"] } },
    message: invalid,
    reason: 'makers.FOO: is not allowed (expected "BULL" or "DBT")'
  },
  {
    name: "makers keyed by __proto__",
    input: JSON.parse('{"baseCurrency":"BTC","makers":{"__proto__":["maker-1"],"DBT":["maker-1"]}}'),
    message: invalid,
    reason: 'makers.__proto__: is not allowed (expected "BULL" or "DBT")'
  },
  {
    name: "makers empty",
    input: { ...minimal, makers: {} },
    message: invalid,
    reason: "makers: must name at least one maker"
  },
  {
    name: "makers for an option not offered",
    input: { ...minimal, makers: { DBT: ["maker-1"], BULL: ["maker-2"] } },
    message: invalid,
    reason: "makers.BULL: is not one of settlementOptions"
  },
  {
    // Issue 12, class 8: an option nobody is invited on could never be quoted.
    name: "a settlement option without makers",
    input: { ...minimal, settlementOptions: ["DBT", "BULL"], makers: { DBT: ["maker-1"] } },
    message: invalid,
    reason:
      "makers.BULL: settlement option BULL has no invited makers; invite at least one or drop the option"
  },
  {
    name: "a settlement option with an empty maker list",
    input: { ...minimal, settlementOptions: ["DBT", "BULL"], makers: { DBT: ["maker-1"], BULL: [] } },
    message: invalid,
    reason: "makers.BULL: must not be empty"
  },
  {
    name: "maker listed twice",
    input: { ...minimal, makers: { DBT: ["maker-1", "maker-1"] } },
    message: invalid,
    reason: "makers.DBT[1]: duplicates element 0"
  },
  {
    name: "empty maker id",
    input: { ...minimal, makers: { DBT: [""] } },
    message: "empty value",
    reason: "makers.DBT[0]: must not be empty"
  },
  {
    name: "percentages not totalling 100",
    input: {
      ...minimal,
      settlementAccounts: {
        DBT: [
          { credentialsId: 1, percentage: 50 },
          { credentialsId: 2, percentage: 49.99 }
        ]
      }
    },
    message: invalid,
    reason: "settlementAccounts.DBT: percentages must total exactly 100, got 99.99"
  },
  {
    name: "percentage 0",
    input: {
      ...minimal,
      settlementAccounts: {
        DBT: [
          { credentialsId: 1, percentage: 100 },
          { credentialsId: 2, percentage: 0 }
        ]
      }
    },
    message: invalid,
    reason: "settlementAccounts.DBT[1].percentage: must be greater than 0"
  },
  {
    name: "percentage over 100",
    input: { ...minimal, settlementAccounts: { DBT: [{ credentialsId: 1, percentage: 100.5 }] } },
    message: invalid,
    reason: "settlementAccounts.DBT[0].percentage: must be at most 100"
  },
  {
    name: "same credentials twice",
    input: {
      ...minimal,
      settlementAccounts: {
        DBT: [
          { credentialsId: 1, percentage: 50 },
          { credentialsId: 1, percentage: 50 }
        ]
      }
    },
    message: invalid,
    reason: "settlementAccounts.DBT[1].credentialsId: duplicates element 0"
  },
  {
    name: "no accounts for an option",
    input: { ...minimal, settlementAccounts: { DBT: [] } },
    message: invalid,
    reason: "settlementAccounts.DBT: must not be empty"
  },
  {
    name: "credentials id as string",
    input: { ...minimal, settlementCredentials: { DBT: "11" } },
    message: invalid,
    reason: 'settlementCredentials.DBT: expected a positive integer, got "11"'
  },
  {
    name: "credentials id fractional",
    input: { ...minimal, settlementCredentials: { DBT: 1.5 } },
    message: invalid,
    reason: "settlementCredentials.DBT: must be a positive integer"
  },
  {
    name: "credentials id beyond the safe range",
    input: { ...minimal, settlementCredentials: { DBT: 2 ** 53 } },
    message: invalid,
    reason: "settlementCredentials.DBT: must be a positive integer"
  },
  {
    name: "credentials for an option not offered",
    input: { ...minimal, settlementCredentials: { BULL: 3 } },
    message: invalid,
    reason: "settlementCredentials.BULL: is not one of settlementOptions"
  },
  {
    name: "hedge price 0",
    input: { ...minimal, hedge: { direction: "sell", instrumentName: "BTC-PERPETUAL", amount: 1, price: 0 } },
    message: invalid,
    reason: "hedge.price: must be greater than 0"
  },
  {
    name: "hedge without instrument",
    input: { ...minimal, hedge: { direction: "sell", amount: 1, price: 1 } },
    message: invalid,
    reason: "hedge.instrumentName: is missing"
  },
  {
    name: "quote currency of another base",
    input: { ...minimal, quoteCurrency: "ETH" },
    message: invalid,
    reason: 'quoteCurrency: must be "BTC" or "USDC"'
  },
  {
    name: "id with junk",
    input: { ...minimal, id: "12abc" },
    message: invalid,
    reason: 'id: expected a non-negative integer, got "12abc"'
  },
  {
    name: "negative id",
    input: { ...minimal, id: "-1" },
    message: invalid,
    reason: 'id: expected a non-negative integer, got "-1"'
  },
  {
    name: "id beyond the safe range",
    input: { ...minimal, id: "9007199254740993" },
    message: invalid,
    reason: "id: must be a non-negative integer"
  },
  { name: "body null", input: null, message: invalid, reason: "expected an object, got null" },
  { name: "body an array", input: [minimal], message: invalid, reason: "expected an object, got an array" }
]

describe("CreateRfqRequest: bad bodies", () => {
  for (const row of badBodies) it(row.name, () => assertBad(CreateRfqRequest, row))

  it("lists every problem at once", () => {
    const error = decodeErr(CreateRfqRequest, {
      ...minimal,
      amount: 0,
      baseCurrency: "X",
      legs: [leg({ direction: "up" })]
    })
    const reasons = [...(error.reason ?? [])]
    assert.includeMembers(reasons, [
      "amount: must be greater than 0",
      'baseCurrency: must be "BTC" or "ETH"',
      'legs[0].direction: must be "buy" or "sell"'
    ])
  })
})

describe("RFQ path ids", () => {
  for (const [name, schema] of [
    ["GetRfqRequest", GetRfqRequest],
    ["DeleteRfqRequest", DeleteRfqRequest],
    ["TakerQuotesRequest", TakerQuotesRequest]
  ] as const) {
    it(`${name} decodes a path string or a JSON integer`, () => {
      const fromPath: RfqId = decodeOk(schema, { id: "17" }).id
      assert.strictEqual(fromPath, 17)
      assert.strictEqual(decodeOk(schema, { id: 17 }).id, 17)
    })
    it(`${name} refuses ids that are not positive integers`, () => {
      for (const [id, reason] of [
        ["0", "id: must be a positive integer"],
        ["abc", 'id: expected a positive integer, got "abc"'],
        ["12abc", 'id: expected a positive integer, got "12abc"'],
        ["1e3", 'id: expected a positive integer, got "1e3"'],
        [" 12", 'id: expected a positive integer, got " 12"'],
        ["9007199254740992", "id: must be a positive integer"],
        [1.5, "id: must be a positive integer"],
        [true, "id: expected a positive integer, got true"]
      ] as const) {
        assertBad(schema, { name: String(id), input: { id }, message: invalid, reason })
      }
      assertBad(schema, { name: "missing", input: {}, message: invalid, reason: "id: is missing" })
    })
  }
})

describe("CancelRfqRequest and TradeRequest", () => {
  it("decode their integer ids", () => {
    assert.strictEqual(decodeOk(CancelRfqRequest, { rfqId: 3, extra: 1 }).rfqId, 3)
    assert.deepStrictEqual(decodeOk(TradeRequest, { rfqQuoteId: 8, rfqId: 1 }), { rfqQuoteId: 8 } as never)
  })
  const rows: ReadonlyArray<BadCase> = [
    { name: "missing", input: {}, message: invalid, reason: "rfqId: is missing" },
    {
      name: "string",
      input: { rfqId: "3" },
      message: invalid,
      reason: 'rfqId: expected a positive integer, got "3"'
    },
    { name: "-0", input: { rfqId: -0 }, message: invalid, reason: "rfqId: must be a positive integer" },
    {
      name: "null",
      input: { rfqId: null },
      message: invalid,
      reason: "rfqId: expected a positive integer, got null"
    },
    { name: "huge", input: { rfqId: 1e300 }, message: invalid, reason: "rfqId: must be a positive integer" }
  ]
  for (const row of rows) it(`CancelRfqRequest: ${row.name}`, () => assertBad(CancelRfqRequest, row))
  it("TradeRequest names the quote id", () =>
    assertBad(TradeRequest, {
      name: "missing",
      input: {},
      message: invalid,
      reason: "rfqQuoteId: is missing"
    }))
})

describe("LegPricesRequest", () => {
  it("decodes a negative strategy price (a credit)", () => {
    const request = decodeOk(LegPricesRequest, {
      rfqId: 4,
      price: -0.0015,
      legs: [
        { direction: "buy", instrumentName: call, ratio: 1 },
        { direction: "sell", instrumentName: put, ratio: 2 }
      ]
    })
    assertDecimal(request.price, "-0.0015")
    assertDecimal(request.legs[1]?.ratio, "2")
  })
  const base = { rfqId: 4, price: 1, legs: [{ direction: "buy", instrumentName: call, ratio: 1 }] }
  const rows: ReadonlyArray<BadCase> = [
    {
      name: "price missing",
      input: withFields(base, { price: undefined }),
      message: invalid,
      reason: "price: is missing"
    },
    {
      name: "price string",
      input: { ...base, price: "1" },
      message: invalid,
      reason: 'price: expected a number, got "1"'
    },
    {
      name: "direction missing",
      input: { ...base, legs: [{ instrumentName: call, ratio: 1 }] },
      message: invalid,
      reason: "legs[0].direction: is missing"
    },
    {
      name: "ratio missing",
      input: { ...base, legs: [{ direction: "buy", instrumentName: call }] },
      message: invalid,
      reason: "legs[0].ratio: is missing"
    }
  ]
  for (const row of rows) it(row.name, () => assertBad(LegPricesRequest, row))
})

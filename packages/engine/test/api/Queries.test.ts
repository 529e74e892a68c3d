import { assert, describe, it } from "@effect/vitest"
import { InstrumentsQuery, ListQuotesQuery, ListRfqsQuery } from "../../src/api/Queries.js"
import { assertBad, type BadCase, decodeOk } from "./support.js"

const invalid = "invalid request"

describe("ListRfqsQuery", () => {
  it("defaults the limit to 100 and nothing else", () => {
    assert.deepStrictEqual(decodeOk(ListRfqsQuery, {}), { limit: 100 })
  })

  it("decodes query-string values", () => {
    const query = decodeOk(ListRfqsQuery, {
      startTime: "1700000000000",
      endTime: "1700000360000",
      cursor: "42",
      limit: "1000",
      role: "maker",
      baseCurrency: "ETH",
      status: "open,traded,open,filledPartial"
    })
    assert.deepStrictEqual(query, {
      startTime: 1700000000000,
      endTime: 1700000360000,
      cursor: 42,
      limit: 1000,
      role: "maker",
      baseCurrency: "ETH",
      status: ["open", "traded", "filledPartial"]
    })
  })

  it("decodes JSON-RPC values (numbers, status array)", () => {
    const query = decodeOk(ListRfqsQuery, { limit: 1, startTime: 0, status: ["cancelled", "expired"] })
    assert.deepStrictEqual(query, { limit: 1, startTime: 0, status: ["cancelled", "expired"] })
  })

  it("turns -0 into 0", () => {
    assert.isTrue(Object.is(decodeOk(ListRfqsQuery, { startTime: -0 }).startTime, 0))
  })

  const rows: ReadonlyArray<BadCase> = [
    {
      name: "limit 0",
      input: { limit: "0" },
      message: invalid,
      reason: "limit: must be an integer from 1 to 1000"
    },
    {
      name: "limit 1001",
      input: { limit: "1001" },
      message: invalid,
      reason: "limit: must be an integer from 1 to 1000"
    },
    {
      name: "limit with junk",
      input: { limit: "12abc" },
      message: invalid,
      reason: 'limit: expected an integer from 1 to 1000, got "12abc"'
    },
    {
      name: "limit in exponent form",
      input: { limit: "1e2" },
      message: invalid,
      reason: 'limit: expected an integer from 1 to 1000, got "1e2"'
    },
    {
      name: "limit with leading zero",
      input: { limit: "010" },
      message: invalid,
      reason: 'limit: expected an integer from 1 to 1000, got "010"'
    },
    {
      name: "limit empty",
      input: { limit: "" },
      message: "empty value",
      reason: "limit: must not be empty"
    },
    {
      name: "limit fractional",
      input: { limit: 2.5 },
      message: invalid,
      reason: "limit: must be an integer from 1 to 1000"
    },
    {
      name: "negative start",
      input: { startTime: "-5" },
      message: invalid,
      reason: 'startTime: expected a non-negative integer, got "-5"'
    },
    {
      name: "cursor with junk",
      input: { cursor: "abc" },
      message: invalid,
      reason: 'cursor: expected a non-negative integer, got "abc"'
    },
    {
      name: "role sent empty",
      input: { role: "" },
      message: "empty value",
      reason: "role: must not be empty"
    },
    {
      name: "role unknown",
      input: { role: "admin" },
      message: invalid,
      reason: 'role: must be "taker" or "maker"'
    },
    {
      name: "unknown status",
      input: { status: "open,done" },
      message: invalid,
      reason: 'status[1]: must be one of "open", "traded", "filled", "filledPartial", "cancelled", "expired"'
    },
    {
      name: "empty element",
      input: { status: "open,,filled" },
      message: "empty value",
      reason: "status[1]: must not be empty"
    },
    {
      name: "empty status",
      input: { status: "" },
      message: "empty value",
      reason: "status: must not be empty"
    },
    {
      name: "empty status list",
      input: { status: [] },
      message: invalid,
      reason: "status: must name at least one status"
    },
    {
      name: "status a number",
      input: { status: 5 },
      message: invalid,
      reason: "status: expected a comma-separated list of statuses, got 5"
    },
    { name: "not an object", input: "limit=5", message: invalid, reason: 'expected an object, got "limit=5"' }
  ]
  for (const row of rows) it(row.name, () => assertBad(ListRfqsQuery, row))
})

describe("ListQuotesQuery", () => {
  it("decodes rfqId and paging", () => {
    assert.deepStrictEqual(
      decodeOk(ListQuotesQuery, { rfqId: "9", limit: "5", cursor: "0", status: "open" }),
      {
        rfqId: 9,
        limit: 5,
        cursor: 0
      } as never
    )
  })
  it("refuses rfqId 0", () =>
    assertBad(ListQuotesQuery, {
      name: "0",
      input: { rfqId: "0" },
      message: invalid,
      reason: "rfqId: must be a positive integer"
    }))
})

describe("InstrumentsQuery", () => {
  it("decodes exchange, base currency and kind", () => {
    assert.deepStrictEqual(decodeOk(InstrumentsQuery, { exchange: "DBT", baseCurrency: "BTC" }), {
      exchange: "DBT",
      baseCurrency: "BTC"
    })
    assert.strictEqual(
      decodeOk(InstrumentsQuery, { exchange: "BULL", baseCurrency: "ETH", kind: "future" }).kind,
      "future"
    )
  })
  it("an unknown exchange alone is the spec's 404 exchange not found", () =>
    assertBad(InstrumentsQuery, {
      name: "FOO",
      input: { exchange: "FOO", baseCurrency: "BTC" },
      status: 404,
      message: "exchange not found",
      reason: 'exchange: must be "BULL" or "DBT"'
    }))
  it("an unknown exchange among other problems is an invalid request", () =>
    assertBad(InstrumentsQuery, {
      name: "FOO and bad kind",
      input: { exchange: "FOO", baseCurrency: "BTC", kind: "perpetual" },
      message: invalid,
      reason: 'kind: must be "option" or "future"'
    }))
  it("needs a base currency", () =>
    assertBad(InstrumentsQuery, {
      name: "missing",
      input: { exchange: "DBT" },
      message: invalid,
      reason: "baseCurrency: is missing"
    }))
})

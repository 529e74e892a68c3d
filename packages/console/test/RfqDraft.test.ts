import { decodeRequestEither, endpoints } from "@rfq/engine/api"
import { describe, expect, it } from "vitest"
import { createRequest, draftFor, type MakerRfq, quoteIssues } from "../src/maker/QuoteDraft.js"
import {
  type AccountDraft,
  emptyDraft,
  newRequestId,
  numeric,
  type RfqDraft,
  requestIssues,
  requestOf,
  splitIssues,
  structureOf
} from "../src/taker/RfqDraft.js"

/** The form's checks as the user types: the service's own schema and classifier, no network. */

const accounts = (...rows: ReadonlyArray<readonly [string, string]>): ReadonlyArray<AccountDraft> =>
  rows.map(([credentialsId, percentage], key) => ({ key, credentialsId, percentage }))

const callSpread = (): RfqDraft => ({
  ...emptyDraft(),
  amount: "100",
  legs: [
    { key: 1, direction: "buy", instrumentName: "BTC-27DEC30-90000-C", ratio: "1" },
    { key: 2, direction: "sell", instrumentName: "BTC-27DEC30-110000-C", ratio: "1" }
  ],
  accounts: { DBT: accounts(["3", "50"], ["1", "50"]) },
  makers: { DBT: ["maker-1"] }
})

describe("the taker's draft", () => {
  it("a complete call spread decodes, names its strategy and sends exact JSON numbers", () => {
    const draft = callSpread()
    expect(requestIssues(draft)).toEqual([])
    expect(structureOf(draft)).toEqual({
      strategy: "Call Spread",
      description: "BTC 27DEC30 90000/110000 Call Spread"
    })
    expect(requestOf(draft)).toMatchObject({
      id: 0,
      amount: 100,
      quoteCurrency: "BTC",
      settlementAccounts: {
        DBT: [
          { credentialsId: 3, percentage: 50 },
          { credentialsId: 1, percentage: 50 }
        ]
      },
      makers: { DBT: ["maker-1"] }
    })
  })

  it("a send carries its idempotency key, a valid request id the service accepts", () => {
    const ids = new Set(Array.from({ length: 100 }, newRequestId))
    expect(ids.size).toBe(100)
    for (const id of ids) {
      expect(Number.isSafeInteger(id) && id > 0).toBe(true)
      const request = requestOf(callSpread(), id)
      expect(request).toMatchObject({ id })
      expect(decodeRequestEither(endpoints["v1/rfq/create"].input, request)._tag).toBe("Right")
    }
  })

  it("split rules 1–3 as the service words them", () => {
    expect(splitIssues(accounts(["3", "50"], ["1", "50"]))).toEqual([])
    expect(splitIssues(accounts(["3", "60"], ["1", "50"])).join("\n")).toMatch(/100/)
    expect(splitIssues(accounts(["3", "0"], ["1", "100"])).join("\n")).toMatch(/must be greater than 0/)
    expect(splitIssues(accounts(["1", "50"], ["1", "50"])).join("\n")).toMatch(/duplicates element 0/)
    expect(splitIssues(accounts(["", "100"])).length).toBeGreaterThan(0)
  })

  it("names what is missing or wrong, and the strategy changes with the legs", () => {
    const draft = callSpread()
    expect(requestIssues({ ...draft, amount: "abc" }).join("\n")).toMatch(
      /amount: expected a number, got "abc"/
    )
    expect(requestIssues({ ...draft, makers: {} }).join("\n")).toMatch(/makers/)
    const ratio = { ...draft, legs: draft.legs.map((l) => ({ ...l, ratio: "1.234" })) }
    expect(requestIssues(ratio).join("\n")).toMatch(/at most 2 decimal places/)
    expect(structureOf(ratio)).toEqual({ problem: expect.stringMatching(/^leg 1: .*2 decimal places/) })
    expect(
      structureOf({
        ...draft,
        legs: [draft.legs[0]!, { ...draft.legs[1]!, instrumentName: "BTC-27DEC30-110000-P" }]
      })
    ).toMatchObject({ strategy: "Risk Reversal" })
    expect(structureOf({ ...draft, legs: [{ ...draft.legs[0]!, instrumentName: "nonsense" }] })).toEqual({
      problem: expect.stringMatching(/^leg 1: /)
    })
  })

  it("numbers are sent as typed, or as text for the service to refuse", () => {
    expect(numeric(" 0.0055 ")).toBe(0.0055)
    expect(numeric("1e3")).toBe(1000)
    expect(numeric("12abc")).toBe("12abc")
    expect(numeric("")).toBe("")
  })
})

describe("the maker's quote draft", () => {
  const rfq = {
    rfqId: 7,
    amount: 100,
    markPrice: 0.0688,
    settlementOptions: ["DBT"],
    quoteCurrencies: { DBT: "BTC" },
    legs: [
      { instrumentId: 1, instrumentName: "BTC-27DEC30-90000-C", direction: "buy", ratio: 1, amount: 100 },
      { instrumentId: 2, instrumentName: "BTC-27DEC30-110000-C", direction: "sell", ratio: 1, amount: 100 }
    ]
  } as unknown as MakerRfq

  it("an ask with a price per leg decodes; an empty price is named", () => {
    const draft = {
      ...draftFor(rfq),
      legPrices: { "BTC-27DEC30-90000-C": "0.669", "BTC-27DEC30-110000-C": "0.6002" }
    }
    expect(quoteIssues(rfq, draft, 1_000)).toEqual([])
    expect(createRequest(rfq, draft, 1_000)).toEqual({
      rfqId: 7,
      direction: "sell",
      amount: 100,
      settlementOption: "DBT",
      legs: [
        { instrumentName: "BTC-27DEC30-90000-C", price: 0.669 },
        { instrumentName: "BTC-27DEC30-110000-C", price: 0.6002 }
      ]
    })
    expect(quoteIssues(rfq, draftFor(rfq), 1_000).join("\n")).toMatch(/legs\[0\]\.price: expected a number/)
    expect(createRequest(rfq, { ...draft, validFor: "30" }, 1_000)).toMatchObject({ validUntil: 31_000 })
    expect(quoteIssues(rfq, { ...draft, validFor: "soon" }, 1_000).join("\n")).toMatch(/validUntil/)
  })
})

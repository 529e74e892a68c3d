import { expect } from "vitest"
import { callSpread, createRfq, farOption, getRfq, placeQuote, rfqBody } from "../Fixtures.js"
import { group, scenario } from "../Scenario.js"
import { type ErrorExpectation, expectError, expectOk } from "../Shapes.js"
import type { World } from "../World.js"

/**
 * Creating, reading, cancelling and deleting RFQs; the validation and RFQ messages of the spec.
 * Over 300 lines on purpose: one scenario per message of the spec's RFQ table, read as that table.
 */

const post = (w: World, body: unknown, requestId: number | string = 0) =>
  w.api.post(`/v1/rfq/${requestId}`, { token: w.token("taker"), json: body })

const withLeg = (w: World, instrumentName: string, ratio = 1) =>
  rfqBody(w, "taker", { legs: [{ direction: "buy", instrumentName, ratio }] })

export const rfqs = group("RFQs", [
  scenario("a created RFQ is open and reads back with the spec's fields", async (w) => {
    const label = `fields-${w.tag}`
    const rfqId = await createRfq(w, "taker", rfqBody(w, "taker", { label }))
    const rfq = await getRfq(w, "taker", rfqId)
    expect(rfq).toMatchObject({
      rfqId,
      label,
      kind: "option",
      strategy: "Call Spread",
      description: "BTC 27DEC30 90000/110000 Call Spread",
      status: "open",
      baseCurrency: "BTC",
      quoteCurrency: "BTC",
      quoteCurrencies: { DBT: "BTC" },
      amount: 100,
      anonymous: false,
      role: "taker",
      settlementOptions: ["DBT"]
    })
    expect(rfq.legs).toMatchObject(
      callSpread.map((l) => ({ ...l, expiry: "27DEC30", amount: 100, instrumentId: expect.any(Number) }))
    )
    expect(rfq.expiresAt).toBeGreaterThan(rfq.createdAt)
    expect(rfq.quotes).toEqual([])
  }),

  scenario(
    "quote currencies follow the spec's rules: BTC → DBT BTC and BULL USDC; USDC → both USDC",
    async (w) => {
      const both = {
        settlementOptions: ["DBT", "BULL"],
        settlementCredentials: {
          DBT: w.credentialsId("taker", "dbt-main"),
          BULL: w.credentialsId("taker", "bull-main")
        },
        makers: { DBT: ["maker-1"], BULL: ["maker-2"] }
      }
      const inverse = await getRfq(w, "taker", await createRfq(w, "taker", rfqBody(w, "taker", both)))
      expect(inverse).toMatchObject({ quoteCurrency: "BTC", quoteCurrencies: { DBT: "BTC", BULL: "USDC" } })
      const linear = await getRfq(
        w,
        "taker",
        await createRfq(w, "taker", rfqBody(w, "taker", { ...both, quoteCurrency: "USDC" }))
      )
      expect(linear).toMatchObject({ quoteCurrency: "USDC", quoteCurrencies: { DBT: "USDC", BULL: "USDC" } })
    }
  ),

  scenario("a hedge is part of the RFQ", async (w) => {
    const hedge = { direction: "sell", instrumentName: "BTC-PERPETUAL", amount: 250000, price: 100000 }
    const rfq = await getRfq(w, "taker", await createRfq(w, "taker", rfqBody(w, "taker", { hedge })))
    expect(rfq.hedge).toMatchObject({ ...hedge, instrumentId: expect.any(Number) })
  }),

  scenario(
    "idempotent creation: same id and body → same rfqId; same id, other body → 400; id 0 → always new",
    async (w) => {
      const requestId = w.nextRequestId()
      const body = rfqBody(w, "taker", { label: `idem-${w.tag}` })
      const first = await createRfq(w, "taker", body, requestId)
      expect(await createRfq(w, "taker", body, requestId)).toBe(first)
      expectError(await post(w, { ...body, amount: 200 }, requestId), {
        status: 400,
        message: "invalid request"
      })
      expect(await createRfq(w, "taker", body, requestId)).toBe(first)

      // The key is the user's: another user with the same id creates its own RFQ.
      const other = await createRfq(
        w,
        "maker1",
        rfqBody(w, "maker1", { makers: { DBT: ["maker-2"] } }),
        requestId
      )
      expect(other).not.toBe(first)

      const fresh = [await createRfq(w, "taker", body, 0), await createRfq(w, "taker", body, 0)]
      expect(new Set([first, ...fresh]).size).toBe(3)
    }
  ),

  scenario(
    "invalid request lists a reason per problem: missing fields, wrong types, bad values",
    async (w) => {
      expectError(await post(w, {}), {
        status: 400,
        message: "invalid request",
        reasonIncludes: [
          "baseCurrency: is missing",
          "amount: is missing",
          "makers: is missing",
          "legs: is missing"
        ]
      })
      expectError(await post(w, rfqBody(w, "taker", { amount: "100", anonymous: "no" })), {
        status: 400,
        message: "invalid request",
        reasonIncludes: ["amount: expected a number", "anonymous: expected a boolean"]
      })
      expectError(await post(w, rfqBody(w, "taker", { amount: 0 })), {
        status: 400,
        message: "invalid request",
        reasonIncludes: ["amount: must be greater than 0"]
      })
      expectError(await post(w, rfqBody(w, "taker", { legs: [{ ...callSpread[0], direction: "long" }] })), {
        status: 400,
        message: "invalid request",
        reasonIncludes: ["legs[0].direction"]
      })
      expectError(await post(w, rfqBody(w, "taker", { settlementOptions: ["FTX"] })), {
        status: 400,
        message: "invalid request",
        reasonIncludes: ["settlementOptions[0]"]
      })
      expectError(await post(w, rfqBody(w, "taker"), "abc"), {
        status: 400,
        message: "invalid request",
        reasonIncludes: ["id"]
      })
    }
  ),

  scenario("empty value for an empty or blank string", async (w) => {
    expectError(await post(w, withLeg(w, "")), {
      status: 400,
      message: "empty value",
      reasonIncludes: ["legs[0].instrumentName"]
    })
    expectError(await post(w, rfqBody(w, "taker", { label: "   " })), {
      status: 400,
      message: "empty value",
      reasonIncludes: ["label"]
    })
  }),

  scenario("instrument names: each format message of the spec", async (w) => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["BTC27DEC30", "invalid instrument format"],
      ["BTC-27DEC30-abc-C", "invalid option format"],
      ["BTC-27DEC30-90000-X", "invalid option format"],
      ["BTC-32DEC30-90000-C", "invalid expiry date format"],
      ["BTC-27XYZ30", "invalid expiry date format"],
      ["BTC-27DEC30_PERP", "invalid future spread format"],
      ["BTC-FS-27DEC30", "invalid future spread format"],
      ["BTC-FS-27DEC30_27DEC29", "invalid future spread dates format"],
      ["XRP-27DEC30-90000-C", "unable to parse instrument"]
    ]
    for (const [name, message] of cases) {
      expectError(await post(w, withLeg(w, name)), { status: 400, message, reasonIncludes: [name] })
    }
  }),

  scenario(
    "instrument not found for leg / for hedge: well-formed names the venue does not list",
    async (w) => {
      expectError(await post(w, withLeg(w, farOption(90001))), {
        status: 400,
        message: "instrument not found for leg",
        reasonIncludes: [farOption(90001)]
      })
      expectError(await post(w, withLeg(w, "BTC-28DEC30-90000-C")), {
        status: 400,
        message: "instrument not found for leg"
      })
      const hedge = { direction: "sell", instrumentName: "BTC-28DEC30", amount: 250000, price: 100000 }
      expectError(await post(w, rfqBody(w, "taker", { hedge })), {
        status: 400,
        message: "instrument not found for hedge"
      })
    }
  ),

  scenario("failed to convert ratio to int: a ratio with more than 2 decimals", async (w) => {
    expectError(await post(w, withLeg(w, farOption(90000), 1.234)), {
      status: 400,
      message: "failed to convert ratio to int",
      reasonIncludes: ["legs[0].ratio"]
    })
    // Two decimals are fine.
    const rfq = await getRfq(w, "taker", await createRfq(w, "taker", withLeg(w, farOption(90000), 0.25)))
    expect(rfq.legs[0]).toMatchObject({ ratio: 0.25, amount: 25 })
  }),

  scenario("maker not found and credentials not found", async (w) => {
    expectError(await post(w, rfqBody(w, "taker", { makers: { DBT: ["maker-1", `nobody-${w.tag}`] } })), {
      status: 404,
      message: "maker not found",
      reasonIncludes: [`nobody-${w.tag}`]
    })
    expectError(await post(w, rfqBody(w, "taker", { settlementCredentials: { DBT: 2_000_000_000 } })), {
      status: 404,
      message: "credentials not found"
    })
    // Another desk's credentials are not the caller's.
    expectError(
      await post(
        w,
        rfqBody(w, "taker", { settlementCredentials: { DBT: w.credentialsId("maker1", "dbt-main") } })
      ),
      {
        status: 404,
        message: "credentials not found"
      }
    )
  }),

  scenario("settlement split rules 1–4 refuse the creation", async (w) => {
    const accounts = (list: ReadonlyArray<readonly [string, number]>) => ({
      settlementAccounts: {
        DBT: list.map(([alias, percentage]) => ({
          credentialsId: w.credentialsId("taker", alias),
          percentage
        }))
      }
    })
    const refused: ReadonlyArray<readonly [Record<string, unknown>, ErrorExpectation]> = [
      [
        accounts([
          ["dbt-main", 60],
          ["dbt-alt", 30]
        ]),
        { status: 400, message: "invalid request", reasonIncludes: ["total exactly 100"] }
      ],
      [
        accounts([
          ["dbt-main", 100],
          ["dbt-alt", 0]
        ]),
        { status: 400, message: "invalid request", reasonIncludes: ["greater than 0"] }
      ],
      [
        accounts([
          ["dbt-main", 50],
          ["dbt-main", 50]
        ]),
        { status: 400, message: "invalid request", reasonIncludes: ["credentialsId"] }
      ],
      // 10 % of 100 is below the venue's minimum block amount of 25.
      [
        accounts([
          ["dbt-main", 90],
          ["dbt-alt", 10]
        ]),
        { status: 400, message: "invalid request", reasonIncludes: ["minimum"] }
      ]
    ]
    for (const [overrides, expected] of refused)
      expectError(await post(w, rfqBody(w, "taker", overrides)), expected)
  }),

  scenario("cancel an open RFQ; cancel again; delete; the deleted RFQ is gone", async (w) => {
    const rfqId = await createRfq(w, "taker", rfqBody(w, "taker"))
    const quoteId = await placeQuote(w, "maker1", rfqId, { direction: "sell", amount: 100 })
    expectError(await w.api.delete(`/v1/rfq/${rfqId}`, { token: w.token("taker") }), {
      status: 400,
      message: "can only delete a draft or cancelled RFQ"
    })
    expect(
      expectOk(
        await w.api.post("/v1/rfq/cancel", { token: w.token("taker"), json: { rfqId } }),
        "CancelRfqResponse"
      )
    ).toEqual({ id: rfqId })
    expect((await getRfq(w, "taker", rfqId)).status).toBe("cancelled")
    expectError(await w.api.post("/v1/rfq/cancel", { token: w.token("taker"), json: { rfqId } }), {
      status: 400,
      message: "can only cancel an in progress RFQ"
    })
    // Cancelling the RFQ cancelled its quotes.
    const quotes = expectOk<{ results: Array<{ rfqQuoteId: number; status: string }> }>(
      await w.api.get("/v1/rfq/quotes", { token: w.token("maker1"), query: { rfqId } }),
      "QuotePage"
    )
    expect(quotes.results.find((q) => q.rfqQuoteId === quoteId)?.status).toBe("cancelled")
    // Its taker is told why the quote cannot trade: the RFQ is no longer open.
    expectError(
      await w.api.post("/v1/rfq/trade", { token: w.token("taker"), json: { rfqQuoteId: quoteId } }),
      {
        status: 400,
        message: "invalid request"
      }
    )

    expect(
      expectOk(await w.api.delete(`/v1/rfq/${rfqId}`, { token: w.token("taker") }), "DeleteRfqResponse")
    ).toEqual({ rfqId })
    expectError(await w.api.get(`/v1/rfq/${rfqId}`, { token: w.token("taker") }), {
      status: 404,
      message: "rfq not found"
    })
    expectError(await w.api.delete(`/v1/rfq/${rfqId}`, { token: w.token("taker") }), {
      status: 404,
      message: "rfq not found"
    })
  }),

  scenario("a filled RFQ can be neither cancelled nor deleted", async (w) => {
    const rfqId = await createRfq(w, "taker", rfqBody(w, "taker"))
    const quoteId = await placeQuote(w, "maker1", rfqId, { direction: "buy", amount: 100 })
    expectOk(
      await w.api.post("/v1/rfq/trade", { token: w.token("taker"), json: { rfqQuoteId: quoteId } }),
      "TradeResponse"
    )
    expectError(await w.api.post("/v1/rfq/cancel", { token: w.token("taker"), json: { rfqId } }), {
      status: 400,
      message: "can only cancel an in progress RFQ"
    })
    expectError(await w.api.delete(`/v1/rfq/${rfqId}`, { token: w.token("taker") }), {
      status: 400,
      message: "can only delete a draft or cancelled RFQ"
    })
  }),

  scenario(
    "only the taker cancels or deletes: an invited maker gets 403 and the RFQ stays open",
    async (w) => {
      const rfqId = await createRfq(w, "taker", rfqBody(w, "taker"))
      const denied = { status: 403, message: "insufficient permissions" } as const
      expectError(await w.api.post("/v1/rfq/cancel", { token: w.token("maker1"), json: { rfqId } }), denied)
      expectError(await w.api.delete(`/v1/rfq/${rfqId}`, { token: w.token("maker1") }), denied)
      expect((await getRfq(w, "taker", rfqId)).status).toBe("open")
    }
  )
])

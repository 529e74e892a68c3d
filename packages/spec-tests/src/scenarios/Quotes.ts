import { BigDecimal, Option } from "effect"
import { expect } from "vitest"
import { createRfq, getRfq, legPricesAtMark, placeQuote, quoteBody, rfqBody } from "../Fixtures.js"
import { group, scenario } from "../Scenario.js"
import { expectError, expectOk } from "../Shapes.js"
import type { World } from "../World.js"

/**
 * The maker's quote endpoints and the taker's quote book. Over 300 lines on purpose: one scenario
 * per quote rule of the spec and the contract, read as that list.
 */

/** A JSON number as the exact decimal it was written as. */
const decimal = (n: number) => Option.getOrThrow(BigDecimal.safeFromNumber(n))

interface QuoteItem {
  rfqQuoteId: number
  rfqId: number
  status: string
  label?: string
  direction: string
  price: number
  amount: number
  settlementOption: string
  quoteCurrency: string
}

const makerQuotes = async (w: World, maker: "maker1" | "maker2", rfqId: number) =>
  expectOk<{ totalResults: number; results: Array<QuoteItem> }>(
    await w.api.get("/v1/rfq/quotes", { token: w.token(maker), query: { rfqId } }),
    "QuotePage"
  )

interface BookSide {
  rfqQuoteId: number
  price: number
  amount: number
  makers: Array<string>
}
interface Book {
  rfqId: number
  settlementOption: string
  quoteCurrency: string
  bids: Array<BookSide>
  asks: Array<BookSide>
}

const book = async (w: World, rfqId: number) =>
  expectOk<Array<Book>>(
    await w.api.get(`/v1/rfq/${rfqId}/quote`, { token: w.token("taker") }),
    "TakerQuotesResponse"
  )

/** Adds `ticks` ticks of 0.0001 BTC to the first leg's price: a different but valid quote. */
const shifted = async (w: World, rfqId: number, maker: "maker1" | "maker2", ticks: number) => {
  const rfq = await getRfq(w, maker, rfqId)
  const legs = await legPricesAtMark(w, maker, rfq, "DBT")
  return legs.map((l, i) => (i === 0 ? { ...l, price: Number((l.price + ticks * 0.0001).toFixed(4)) } : l))
}

export const quotes = group("quotes", [
  scenario(
    "create, list, update by label, delete by id; the maker's list shows each quote's status",
    async (w) => {
      const rfqId = await createRfq(w, "taker", rfqBody(w, "taker"))
      const label = `q-${w.tag}-1`
      const quoteId = await placeQuote(w, "maker1", rfqId, { direction: "sell", amount: 100, label })
      const listed = await makerQuotes(w, "maker1", rfqId)
      expect(listed.totalResults).toBe(1)
      expect(listed.results[0]).toMatchObject({
        rfqQuoteId: quoteId,
        rfqId,
        label,
        status: "active",
        direction: "sell",
        amount: 100,
        settlementOption: "DBT",
        quoteCurrency: "BTC",
        settlementCredentials: w.credentialsId("maker1", "dbt-main")
      })

      const legs = await shifted(w, rfqId, "maker1", 1)
      const updated = expectOk<{ price: number }>(
        await w.api.put("/v1/rfq/quote", {
          token: w.token("maker1"),
          json: { label, amount: 50, settlementOption: "DBT", legs }
        }),
        "UpdateQuoteResponse"
      )
      expect(updated).toMatchObject({ rfqQuoteId: quoteId, rfqId, label, direction: "sell" })
      // The structure price is Σ sᵢ·ratioᵢ·pᵢ of the new leg prices.
      expect(updated.price).toBeCloseTo(legs[0]!.price - legs[1]!.price, 8)
      expect((await makerQuotes(w, "maker1", rfqId)).results[0]).toMatchObject({
        amount: 50,
        price: updated.price
      })

      const deleted = expectOk<{ message: string }>(
        await w.api.delete("/v1/rfq/quote", { token: w.token("maker1"), json: { rfqQuoteId: quoteId } }),
        "DeleteQuoteResponse"
      )
      expect(deleted.message).toEqual(expect.any(String))
      expect((await makerQuotes(w, "maker1", rfqId)).results[0]?.status).toBe("cancelled")
      expect(await book(w, rfqId)).toEqual([])
      // Gone: neither update nor delete finds it.
      expectError(
        await w.api.delete("/v1/rfq/quote", { token: w.token("maker1"), json: { rfqQuoteId: quoteId } }),
        {
          status: 404,
          message: "record not found"
        }
      )
      expectError(
        await w.api.put("/v1/rfq/quote", {
          token: w.token("maker1"),
          json: { rfqQuoteId: quoteId, amount: 50, settlementOption: "DBT", legs }
        }),
        { status: 404, message: "record not found" }
      )
    }
  ),

  scenario(
    "the taker's book: one element per settlement option, bids highest first, asks lowest first",
    async (w) => {
      const rfqId = await createRfq(w, "taker", rfqBody(w, "taker"))
      const bidLow = await shifted(w, rfqId, "maker1", -2)
      const bidHigh = await shifted(w, rfqId, "maker2", -1)
      const askLow = await shifted(w, rfqId, "maker1", 1)
      const askHigh = await shifted(w, rfqId, "maker2", 2)
      const put = async (maker: "maker1" | "maker2", direction: string, legs: unknown) =>
        expectOk<{ rfqQuoteId: number }>(
          await w.api.post("/v1/rfq/quote", {
            token: w.token(maker),
            json: { rfqId, direction, amount: 100, settlementOption: "DBT", legs }
          }),
          "CreateQuoteResponse"
        ).rfqQuoteId
      const ids = {
        bidLow: await put("maker1", "buy", bidLow),
        askHigh: await put("maker2", "sell", askHigh),
        bidHigh: await put("maker2", "buy", bidHigh),
        askLow: await put("maker1", "sell", askLow)
      }
      const [only, ...rest] = await book(w, rfqId)
      expect(rest).toEqual([])
      expect(only).toMatchObject({ rfqId, settlementOption: "DBT", quoteCurrency: "BTC" })
      expect(only!.bids.map((q) => q.rfqQuoteId)).toEqual([ids.bidHigh, ids.bidLow])
      expect(only!.asks.map((q) => q.rfqQuoteId)).toEqual([ids.askLow, ids.askHigh])
      expect(only!.bids[0]!.makers).toEqual(["maker-2"])
      expect(only!.asks[0]!.makers).toEqual(["maker-1"])
    }
  ),

  scenario(
    "a quote with the same clientQuoteId already exists: a label is unique among the maker's active quotes",
    async (w) => {
      const label = `dup-${w.tag}`
      const first = await createRfq(w, "taker", rfqBody(w, "taker"))
      const second = await createRfq(w, "taker", rfqBody(w, "taker"))
      await placeQuote(w, "maker1", first, { direction: "sell", amount: 100, label })
      const again = await quoteBody(w, "maker1", second, { direction: "sell", amount: 100, label })
      expectError(await w.api.post("/v1/rfq/quote", { token: w.token("maker1"), json: again }), {
        status: 400,
        message: "a quote with the same clientQuoteId already exists"
      })
      // Another desk may use the same label.
      await placeQuote(w, "maker2", second, { direction: "sell", amount: 100, label })
      // Once the first quote is gone, the label is free again.
      expectOk(
        await w.api.delete("/v1/rfq/quote", { token: w.token("maker1"), json: { label } }),
        "DeleteQuoteResponse"
      )
      await placeQuote(w, "maker1", second, { direction: "sell", amount: 100, label })
    }
  ),

  scenario(
    "multiple quotes found for the same RFQ: rfqQuoteId and label naming different quotes",
    async (w) => {
      const rfqId = await createRfq(w, "taker", rfqBody(w, "taker"))
      const a = await placeQuote(w, "maker1", rfqId, { direction: "sell", amount: 100, label: `a-${w.tag}` })
      await placeQuote(w, "maker1", rfqId, { direction: "buy", amount: 100, label: `b-${w.tag}` })
      expectError(
        await w.api.delete("/v1/rfq/quote", {
          token: w.token("maker1"),
          json: { rfqQuoteId: a, label: `b-${w.tag}` }
        }),
        { status: 400, message: "multiple quotes found for the same RFQ" }
      )
    }
  ),

  scenario("invalid price (off the tick), price is too low, price is too high", async (w) => {
    const rfqId = await createRfq(w, "taker", rfqBody(w, "taker"))
    const body = await quoteBody(w, "maker1", rfqId, { direction: "sell", amount: 100 })
    const withFirst = (price: number) => ({
      ...body,
      legs: body.legs.map((l, i) => (i === 0 ? { ...l, price } : l))
    })
    const send = (json: unknown) => w.api.post("/v1/rfq/quote", { token: w.token("maker1"), json })
    const first = body.legs[0]!
    expectError(await send(withFirst(first.price + 0.00005)), {
      status: 400,
      message: "invalid price",
      reasonIncludes: [first.instrumentName]
    })
    expectError(await send(withFirst(0.0001)), {
      status: 400,
      message: "price is too low",
      reasonIncludes: [first.instrumentName]
    })
    expectError(await send(withFirst(50)), {
      status: 400,
      message: "price is too high",
      reasonIncludes: [first.instrumentName]
    })
  }),

  scenario("a quote must match the RFQ: legs, settlement option, amount", async (w) => {
    const rfqId = await createRfq(w, "taker", rfqBody(w, "taker"))
    const body = await quoteBody(w, "maker1", rfqId, { direction: "sell", amount: 100 })
    const send = (json: unknown) => w.api.post("/v1/rfq/quote", { token: w.token("maker1"), json })
    const invalid = { status: 400, message: "invalid request" } as const
    expectError(await send({ ...body, legs: body.legs.slice(0, 1) }), invalid)
    expectError(await send({ ...body, settlementOption: "BULL" }), invalid)
    expectError(await send({ ...body, amount: 200 }), { ...invalid, reasonIncludes: ["amount"] })
    expectError(await send({ ...body, amount: 50.05 }), { ...invalid, reasonIncludes: ["amount step"] })
    expectError(await send({ ...body, amount: 10 }), { ...invalid, reasonIncludes: ["minimum"] })
    expectError(await send({ ...body, direction: "bid" }), { ...invalid, reasonIncludes: ["direction"] })
    expectError(
      await send({
        ...body,
        legs: [{ ...body.legs[0], instrumentName: "BTC-27DEC30-100000-C" }, body.legs[1]]
      }),
      { ...invalid, reasonIncludes: ["BTC-27DEC30-100000-C"] }
    )
  }),

  scenario("can't quote on own RFQ: a maker desk quoting on an RFQ it created", async (w) => {
    // A desk cannot invite itself; maker-1 asks maker-2 and then tries to answer its own RFQ.
    const rfqId = await createRfq(w, "maker1", rfqBody(w, "maker1", { makers: { DBT: ["maker-2"] } }))
    const body = await quoteBody(w, "maker2", rfqId, { direction: "sell", amount: 100 })
    expectError(await w.api.post("/v1/rfq/quote", { token: w.token("maker1"), json: body }), {
      status: 400,
      message: "can't quote on own RFQ"
    })
  }),

  scenario("can't quote on own RFQ: the taker desk (no maker id) quoting on its own RFQ", async (w) => {
    const rfqId = await createRfq(w, "taker", rfqBody(w, "taker"))
    const body = await quoteBody(w, "maker1", rfqId, { direction: "sell", amount: 100 })
    expectError(await w.api.post("/v1/rfq/quote", { token: w.token("taker"), json: body }), {
      status: 400,
      message: "can't quote on own RFQ"
    })
  }),

  scenario("a quote can be created only while its RFQ is open", async (w) => {
    const rfqId = await createRfq(w, "taker", rfqBody(w, "taker"))
    const body = await quoteBody(w, "maker1", rfqId, { direction: "sell", amount: 100 })
    expectOk(
      await w.api.post("/v1/rfq/cancel", { token: w.token("taker"), json: { rfqId } }),
      "CancelRfqResponse"
    )
    const refused = await w.api.post("/v1/rfq/quote", { token: w.token("maker1"), json: body })
    expectError(refused, { status: 400, message: "invalid request", reasonIncludes: ["cancelled"] })
  }),

  scenario("cancel-all: by rfqId, by base currency, and everything", async (w) => {
    const [r1, r2] = [
      await createRfq(w, "taker", rfqBody(w, "taker")),
      await createRfq(w, "taker", rfqBody(w, "taker"))
    ]
    await placeQuote(w, "maker2", r1, { direction: "sell", amount: 100 })
    await placeQuote(w, "maker2", r1, { direction: "buy", amount: 100 })
    await placeQuote(w, "maker2", r2, { direction: "sell", amount: 100 })
    const cancelAll = async (json: unknown) =>
      expectOk<{ cancelledCount: number; message: string }>(
        await w.api.post("/v1/rfq/quote/cancel-all", { token: w.token("maker2"), json }),
        "CancelAllQuotesResponse"
      )
    expect((await cancelAll({ rfqId: r1 })).cancelledCount).toBe(2)
    expect((await makerQuotes(w, "maker2", r2)).results.map((q) => q.status)).toEqual(["active"])
    expect((await cancelAll({ rfqId: r1 })).cancelledCount).toBe(0)
    expect((await cancelAll({ baseCurrency: "ETH" })).cancelledCount).toBe(0)
    expect((await cancelAll({ baseCurrency: "BTC" })).cancelledCount).toBeGreaterThanOrEqual(1)
    expect((await makerQuotes(w, "maker2", r2)).results.map((q) => q.status)).toEqual(["cancelled"])
    await placeQuote(w, "maker2", r2, { direction: "buy", amount: 100 })
    expect((await cancelAll({})).cancelledCount).toBeGreaterThanOrEqual(1)
    expect(await book(w, r2)).toEqual([])
  }),

  scenario("a trade on a quote that is not active is record not found", async (w) => {
    expectError(
      await w.api.post("/v1/rfq/trade", { token: w.token("taker"), json: { rfqQuoteId: 9007199254740991 } }),
      {
        status: 404,
        message: "record not found"
      }
    )
  }),

  scenario("leg prices sit on the tick and reproduce the strategy price up to priceDifference", async (w) => {
    const rfqId = await createRfq(w, "taker", rfqBody(w, "taker"))
    const rfq = await getRfq(w, "maker1", rfqId)
    const request = {
      rfqId,
      price: rfq.markPrice,
      legs: rfq.legs.map((l) => ({
        direction: l.direction,
        instrumentName: l.instrumentName,
        ratio: l.ratio
      }))
    }
    const answer = expectOk<{
      legs: Array<{ price: number; direction: string; ratio: number }>
      priceDifference: number
    }>(
      await w.api.post("/v1/rfq/leg-prices", { token: w.token("maker1"), json: request }),
      "LegPricesResponse"
    )
    // Exact decimal arithmetic: each price on the BTC option tick, and the structure price they
    // make differs from the requested one by exactly priceDifference.
    const tick = decimal(0.0001)
    for (const l of answer.legs) {
      expect(
        BigDecimal.equals(Option.getOrThrow(BigDecimal.remainder(decimal(l.price), tick)), decimal(0))
      ).toBe(true)
    }
    const structure = BigDecimal.sumAll(
      answer.legs.map((l) => {
        const term = BigDecimal.multiply(decimal(l.ratio), decimal(l.price))
        return l.direction === "buy" ? term : BigDecimal.negate(term)
      })
    )
    const difference = BigDecimal.subtract(structure, decimal(request.price))
    expect(BigDecimal.format(BigDecimal.normalize(difference))).toBe(
      BigDecimal.format(BigDecimal.normalize(decimal(answer.priceDifference)))
    )
    expect(answer.legs.map((l) => l.direction)).toEqual(request.legs.map((l) => l.direction))
    // The same structure quoted at those prices is accepted (inside the band).
    expectOk(
      await w.api.post("/v1/rfq/quote", {
        token: w.token("maker1"),
        json: {
          rfqId,
          direction: "sell",
          amount: 100,
          settlementOption: "DBT",
          legs: answer.legs.map((l, i) => ({
            instrumentName: request.legs[i]!.instrumentName,
            price: l.price
          }))
        }
      }),
      "CreateQuoteResponse"
    )
  })
])

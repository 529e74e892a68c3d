import { expectOk } from "./Shapes.js"
import type { MakerParty, Party, TraderParty, World } from "./World.js"

/**
 * Building blocks of the scenarios: RFQ bodies on instruments that always resolve (far quarterly
 * expiries), creation, reads, and quotes priced inside the venue's band through the service's own
 * `POST /rfq/leg-prices`, so nothing depends on today's marks.
 */

export type Direction = "buy" | "sell"
export type SettlementOption = "DBT" | "BULL"

export interface LegInput {
  readonly direction: Direction
  readonly instrumentName: string
  readonly ratio: number
}

export const FAR_EXPIRY = "27DEC30"
export const farOption = (strike: number, type: "C" | "P" = "C", base = "BTC") =>
  `${base}-${FAR_EXPIRY}-${strike}-${type}`

/** A BTC call spread: the structure most scenarios trade. */
export const callSpread: ReadonlyArray<LegInput> = [
  { direction: "buy", instrumentName: farOption(90000), ratio: 1 },
  { direction: "sell", instrumentName: farOption(110000), ratio: 1 }
]

export type RfqBody = Record<string, unknown>

/** A BTC call spread of 100 settled on the taker's `dbt-main`, sent to makers 1 and 2 on DBT. */
export const rfqBody = (w: World, taker: TraderParty, overrides: RfqBody = {}): RfqBody => ({
  baseCurrency: "BTC",
  amount: 100,
  anonymous: false,
  settlementOptions: ["DBT"],
  settlementCredentials: { DBT: w.credentialsId(taker, "dbt-main") },
  makers: { DBT: ["maker-1", "maker-2"] },
  legs: callSpread,
  ...overrides
})

/** Settlement accounts of the demo taker on DBT by alias and percentage. */
export const split = (w: World, accounts: ReadonlyArray<readonly [alias: string, percentage: number]>) => ({
  DBT: accounts.map(([alias, percentage]) => ({ credentialsId: w.credentialsId("taker", alias), percentage }))
})

export const createRfq = async (
  w: World,
  taker: TraderParty,
  body: RfqBody,
  requestId = 0
): Promise<number> =>
  expectOk<{ rfqId: number }>(
    await w.api.post(`/v1/rfq/${requestId}`, { token: w.token(taker), json: body }),
    "CreateRfqResponse"
  ).rfqId

export interface RfqView {
  readonly rfqId: number
  readonly status: string
  readonly role: string
  readonly markPrice: number
  readonly createdAt: number
  readonly expiresAt: number
  readonly quoteCurrency: string
  readonly quoteCurrencies: Record<string, string>
  readonly legs: ReadonlyArray<LegInput & { amount: number; instrumentId: number; expiry?: string }>
  readonly [field: string]: unknown
}

export const getRfq = async (w: World, party: Party, rfqId: number): Promise<RfqView> =>
  expectOk<RfqView>(await w.api.get(`/v1/rfq/${rfqId}`, { token: w.token(party) }), "Rfq")

export interface QuoteOptions {
  readonly direction: Direction
  readonly amount: number
  readonly settlementOption?: SettlementOption
  readonly label?: string
  readonly settlementCredentials?: number
}

/**
 * Leg prices at the RFQ's mark from `POST /rfq/leg-prices`: on the tick and inside the band. The
 * mark is in the RFQ's own quote currency, so the settlement option must use that currency.
 */
export const legPricesAtMark = async (
  w: World,
  maker: MakerParty,
  rfq: RfqView,
  option: SettlementOption
) => {
  if (rfq.quoteCurrencies[option] !== rfq.quoteCurrency) {
    throw new Error(`the mark is in ${rfq.quoteCurrency}; ${option} quotes in ${rfq.quoteCurrencies[option]}`)
  }
  const answer = expectOk<{ legs: Array<{ instrumentName: string; price: number }> }>(
    await w.api.post("/v1/rfq/leg-prices", {
      token: w.token(maker),
      json: {
        rfqId: rfq.rfqId,
        price: rfq.markPrice,
        legs: rfq.legs.map((l) => ({
          direction: l.direction,
          instrumentName: l.instrumentName,
          ratio: l.ratio
        }))
      }
    }),
    "LegPricesResponse"
  )
  return answer.legs.map((l) => ({ instrumentName: l.instrumentName, price: l.price }))
}

/** The body of a quote at the mark (`POST /rfq/quote`). */
export const quoteBody = async (w: World, maker: MakerParty, rfqId: number, options: QuoteOptions) => {
  const rfq = await getRfq(w, maker, rfqId)
  const settlementOption = options.settlementOption ?? "DBT"
  return {
    rfqId,
    direction: options.direction,
    amount: options.amount,
    settlementOption,
    legs: await legPricesAtMark(w, maker, rfq, settlementOption),
    ...(options.label === undefined ? {} : { label: options.label }),
    ...(options.settlementCredentials === undefined
      ? {}
      : { settlementCredentials: options.settlementCredentials })
  }
}

export const placeQuote = async (
  w: World,
  maker: MakerParty,
  rfqId: number,
  options: QuoteOptions
): Promise<number> =>
  expectOk<{ rfqQuoteId: number }>(
    await w.api.post("/v1/rfq/quote", {
      token: w.token(maker),
      json: await quoteBody(w, maker, rfqId, options)
    }),
    "CreateQuoteResponse"
  ).rfqQuoteId

export interface TradeAnswer {
  readonly rfqTradeId: number
  readonly rfqId: number
  readonly trades: ReadonlyArray<{
    direction: Direction
    price: number
    amount: number
    exchangeTradeId: string
    createdAt: number
  }>
  readonly allocations?: ReadonlyArray<{
    credentialsId: number
    percentage: number
    amount: number
    status: string
    exchangeTradeId?: string
    reason?: string
  }>
}

export const trade = async (w: World, taker: TraderParty, rfqQuoteId: number): Promise<TradeAnswer> =>
  expectOk<TradeAnswer>(
    await w.api.post("/v1/rfq/trade", { token: w.token(taker), json: { rfqQuoteId } }),
    "TradeResponse"
  )

/** An RFQ with one ask of `amount` from maker-1 on DBT, traded by the taker. */
export const tradedRfq = async (w: World, body: RfqBody, amount = 100) => {
  const rfqId = await createRfq(w, "taker", body)
  const quoteId = await placeQuote(w, "maker1", rfqId, { direction: "sell", amount })
  const answer = await trade(w, "taker", quoteId)
  return { rfqId, quoteId, answer }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

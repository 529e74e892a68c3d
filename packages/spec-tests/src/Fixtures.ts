import { type EndpointInput, type EndpointName, type EndpointOutput, RfqClient, RfqError } from "@rfq/client"
import { assertShape, type ShapeName } from "./Shapes.js"
import type { MakerParty, Party, TraderParty, World } from "./World.js"

/**
 * Building blocks of the scenarios: RFQ bodies on instruments that always resolve (far quarterly
 * expiries), creation, reads, and quotes priced inside the venue's band through the service's own
 * `POST /rfq/leg-prices`, so nothing depends on today's marks.
 *
 * The steps go through the typed client (`@rfq/client`) and each answer is still checked against
 * its documented shape; a refusal fails the scenario with the service's status, message and reasons.
 */

const clients = new Map<string, RfqClient>()

/**
 * The party's typed client on the world's current address and token (a restarted host has a new
 * port, a relogin new tokens: each pair gets its own client). It waits out a 429 as `w.api` does.
 */
export const clientOf = (w: World, party: Party): RfqClient => {
  const key = `${w.api.baseUrl} ${w.token(party)}`
  let client = clients.get(key)
  if (client === undefined) {
    client = new RfqClient({
      baseUrl: w.api.baseUrl,
      accessToken: w.token(party),
      maxRateLimitRetries: w.api.options.retryOnRateLimit === true ? 3 : 0
    })
    clients.set(key, client)
  }
  return client
}

/** One operation that must succeed, as `party`, its answer checked against `shape`. */
export const typedCall = async <K extends EndpointName>(
  w: World,
  party: Party,
  name: K,
  input: EndpointInput<K>,
  shape: ShapeName
): Promise<EndpointOutput<K>> => {
  try {
    return assertShape<EndpointOutput<K>>(shape, await clientOf(w, party).call(name, input))
  } catch (error) {
    if (!(error instanceof RfqError)) throw error
    throw new Error(
      `${name} as ${party}: ${error.status} ${error.message} ${JSON.stringify(error.reason ?? [])}`
    )
  }
}

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
  (
    await typedCall(
      w,
      taker,
      "v1/rfq/create",
      { ...body, id: requestId } as EndpointInput<"v1/rfq/create">,
      "CreateRfqResponse"
    )
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
  (await typedCall(w, party, "v1/rfq/get", { id: rfqId }, "Rfq")) as unknown as RfqView

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
  const answer = await typedCall(
    w,
    maker,
    "v1/rfq/leg-prices",
    {
      rfqId: rfq.rfqId,
      price: rfq.markPrice,
      legs: rfq.legs.map((l) => ({
        direction: l.direction,
        instrumentName: l.instrumentName,
        ratio: l.ratio
      }))
    },
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
  (
    await typedCall(
      w,
      maker,
      "v1/quote/create",
      (await quoteBody(w, maker, rfqId, options)) as EndpointInput<"v1/quote/create">,
      "CreateQuoteResponse"
    )
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
  (await typedCall(w, taker, "v1/rfq/trade", { rfqQuoteId }, "TradeResponse")) as unknown as TradeAnswer

/** An RFQ with one ask of `amount` from maker-1 on DBT, traded by the taker. */
export const tradedRfq = async (w: World, body: RfqBody, amount = 100) => {
  const rfqId = await createRfq(w, "taker", body)
  const quoteId = await placeQuote(w, "maker1", rfqId, { direction: "sell", amount })
  const answer = await trade(w, "taker", quoteId)
  return { rfqId, quoteId, answer }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

import { call, ok, tokenFor } from "./Http.js"

/**
 * The RFQ lifecycle over REST with the demo desks, as the reliability runs drive it: create an RFQ
 * (single account, a split, or a split with the failing `dbt-flaky` account), price it with the
 * leg-price helper at the RFQ's mark, quote it, accept or cancel it.
 */
export const TAKER = "demo-taker"
export const MAKERS = ["demo-maker-1", "demo-maker-2", "demo-maker-3"] as const
export const MAKER_IDS: Record<string, string> = {
  "demo-maker-1": "maker-1",
  "demo-maker-2": "maker-2",
  "demo-maker-3": "maker-3"
}

export const CALL_SPREAD = [
  { direction: "buy", instrumentName: "BTC-27DEC30-90000-C", ratio: 1 },
  { direction: "sell", instrumentName: "BTC-27DEC30-110000-C", ratio: 1 }
] as const

export interface Credentials {
  readonly credentialsId: number
  readonly alias: string
  readonly exchange: string
}

export type Split = "single" | "split" | "flaky"

export interface TradeAnswer {
  readonly rfqTradeId: number
  readonly rfqId: number
  readonly trades: ReadonlyArray<{ readonly exchangeTradeId: string; readonly amount: number }>
  readonly allocations?: ReadonlyArray<{ readonly status: string; readonly credentialsId?: number }>
}

export interface RfqAnswer {
  readonly rfqId: number
  readonly status: string
  readonly markPrice: number
  readonly legs: ReadonlyArray<{ instrumentName: string; direction: string; ratio: number }>
  readonly tradeId?: number
  readonly filledAmount?: number
  readonly tradeAllocations?: ReadonlyArray<{ status: string }>
  readonly quotes?: ReadonlyArray<{ rfqQuoteId: number }>
}

/** One authenticated desk user. */
export class Desk {
  private constructor(
    readonly base: string,
    readonly clientId: string,
    readonly token: string
  ) {}

  static async login(base: string, clientId: string): Promise<Desk> {
    return new Desk(base, clientId, await tokenFor(base, clientId))
  }

  /** The same identity against another process (a restarted host with the same secrets). */
  at(base: string): Desk {
    return new Desk(base, this.clientId, this.token)
  }

  request(method: string, path: string, body?: unknown) {
    return call(this.base, method, path, { token: this.token, ...(body === undefined ? {} : { body }) })
  }
}

export const credentialsOf = (desk: Desk) =>
  ok<ReadonlyArray<Credentials>>("credentials", desk.request("GET", "/v1/account/exchange-credentials"))

export const aliasId = (list: ReadonlyArray<Credentials>, alias: string): number => {
  const found = list.find((c) => c.alias === alias)
  if (found === undefined) throw new Error(`no credentials with alias ${alias}`)
  return found.credentialsId
}

/** The body of an RFQ on DBT for `makers`; a split uses two taker accounts at 60/40 or 50/50. */
export const rfqBody = (
  split: Split,
  takerCredentials: ReadonlyArray<Credentials>,
  makerIds: ReadonlyArray<string>
): Record<string, unknown> => {
  const base = {
    baseCurrency: "BTC",
    anonymous: false,
    settlementOptions: ["DBT"],
    makers: { DBT: makerIds },
    legs: CALL_SPREAD
  }
  const main = aliasId(takerCredentials, "dbt-main")
  switch (split) {
    case "single":
      return { ...base, amount: 50 }
    case "split":
      return {
        ...base,
        amount: 100,
        settlementAccounts: {
          DBT: [
            { credentialsId: main, percentage: 60 },
            { credentialsId: aliasId(takerCredentials, "dbt-alt"), percentage: 40 }
          ]
        }
      }
    case "flaky":
      return {
        ...base,
        amount: 60,
        settlementAccounts: {
          DBT: [
            { credentialsId: main, percentage: 50 },
            { credentialsId: aliasId(takerCredentials, "dbt-flaky"), percentage: 50 }
          ]
        }
      }
  }
}

export const createRfq = async (taker: Desk, body: Record<string, unknown>, requestId = 0) =>
  (await ok<{ rfqId: number }>("create rfq", taker.request("POST", `/v1/rfq/${requestId}`, body))).rfqId

export const getRfq = (desk: Desk, rfqId: number) =>
  ok<RfqAnswer>("get rfq", desk.request("GET", `/v1/rfq/${rfqId}`))

const tick = (price: number) => Math.round(price * 10_000) / 10_000

/** The leg prices a maker would send for the RFQ's mark (on the tick, inside the bands). */
export const legPricesFor = async (maker: Desk, rfqId: number) => {
  const rfq = await getRfq(maker, rfqId)
  const priced = await ok<{ legs: ReadonlyArray<{ instrumentName: string; price: number }> }>(
    "leg prices",
    maker.request("POST", "/v1/rfq/leg-prices", {
      rfqId,
      price: tick(rfq.markPrice),
      legs: rfq.legs.map(({ instrumentName, direction, ratio }) => ({ instrumentName, direction, ratio }))
    })
  )
  return priced.legs.map((l) => ({ instrumentName: l.instrumentName, price: l.price }))
}

export const quoteBody = (
  rfqId: number,
  amount: number,
  legs: ReadonlyArray<{ instrumentName: string; price: number }>,
  label?: string
) => ({
  rfqId,
  direction: "sell",
  amount,
  settlementOption: "DBT",
  legs,
  ...(label === undefined ? {} : { label })
})

export const createQuote = async (maker: Desk, rfqId: number, amount: number, label?: string) => {
  const legs = await legPricesFor(maker, rfqId)
  return (
    await ok<{ rfqQuoteId: number }>(
      "create quote",
      maker.request("POST", "/v1/rfq/quote", quoteBody(rfqId, amount, legs, label))
    )
  ).rfqQuoteId
}

export const amountOf = (split: Split): number => (split === "single" ? 50 : split === "split" ? 100 : 60)

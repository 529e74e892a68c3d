import type { Schema } from "effect"
import * as AccountRequests from "../../src/api/AccountRequests.js"
import * as AuthRequests from "../../src/api/AuthRequests.js"
import * as Queries from "../../src/api/Queries.js"
import * as QuoteRequests from "../../src/api/QuoteRequests.js"
import * as RfqRequests from "../../src/api/RfqRequests.js"

const call = "BTC-27DEC30-100000-C"
const put = "BTC-27DEC30-90000-P"

export interface Example {
  readonly name: string
  readonly schema: Schema.Schema<any, any>
  /** A valid input, as JSON would deliver it. */
  readonly input: Record<string, unknown>
}

/** One valid input for every top-level request schema. */
export const examples: ReadonlyArray<Example> = [
  {
    name: "CreateRfqRequest",
    schema: RfqRequests.CreateRfqRequest,
    input: {
      id: "3",
      baseCurrency: "BTC",
      quoteCurrency: "BTC",
      amount: 25,
      anonymous: false,
      settlementOptions: ["DBT", "BULL"],
      settlementCredentials: { DBT: 1, BULL: 2 },
      settlementAccounts: {
        DBT: [
          { credentialsId: 1, percentage: 60 },
          { credentialsId: 3, percentage: 40 }
        ]
      },
      makers: { DBT: ["maker-1", "maker-2"], BULL: ["maker-1"] },
      legs: [
        { direction: "buy", instrumentName: call, ratio: 1, price: 0.01 },
        { direction: "sell", instrumentName: put, ratio: 1 }
      ],
      hedge: { direction: "buy", instrumentName: "BTC-PERPETUAL", amount: 1000, price: 65000 },
      label: "s-1"
    }
  },
  { name: "GetRfqRequest", schema: RfqRequests.GetRfqRequest, input: { id: "5" } },
  { name: "DeleteRfqRequest", schema: RfqRequests.DeleteRfqRequest, input: { id: "5" } },
  { name: "TakerQuotesRequest", schema: RfqRequests.TakerQuotesRequest, input: { id: 5 } },
  { name: "CancelRfqRequest", schema: RfqRequests.CancelRfqRequest, input: { rfqId: 5 } },
  { name: "TradeRequest", schema: RfqRequests.TradeRequest, input: { rfqQuoteId: 9 } },
  {
    name: "LegPricesRequest",
    schema: RfqRequests.LegPricesRequest,
    input: {
      rfqId: 5,
      price: -0.002,
      legs: [
        { direction: "buy", instrumentName: call, ratio: 1 },
        { direction: "sell", instrumentName: put, ratio: 2 }
      ]
    }
  },
  {
    name: "CreateQuoteRequest",
    schema: QuoteRequests.CreateQuoteRequest,
    input: {
      rfqId: 5,
      label: "q",
      amount: 25,
      direction: "sell",
      settlementOption: "DBT",
      settlementCredentials: 1,
      legs: [
        { instrumentName: call, price: 0.01 },
        { instrumentName: put, price: 0.02 }
      ],
      hedge: { instrumentName: "BTC-PERPETUAL", price: 65000 }
    }
  },
  {
    name: "UpdateQuoteRequest",
    schema: QuoteRequests.UpdateQuoteRequest,
    input: { label: "q", amount: 20, settlementOption: "BULL", legs: [{ instrumentName: call, price: 1500 }] }
  },
  {
    name: "DeleteQuoteRequest",
    schema: QuoteRequests.DeleteQuoteRequest,
    input: { rfqQuoteId: 4, label: "q" }
  },
  {
    name: "CancelAllQuotesRequest",
    schema: QuoteRequests.CancelAllQuotesRequest,
    input: { rfqId: 4, baseCurrency: "BTC" }
  },
  {
    name: "ListRfqsQuery",
    schema: Queries.ListRfqsQuery,
    input: {
      startTime: "1",
      endTime: "2",
      cursor: "3",
      limit: "4",
      role: "taker",
      baseCurrency: "BTC",
      status: "open,traded"
    }
  },
  {
    name: "ListQuotesQuery",
    schema: Queries.ListQuotesQuery,
    input: { rfqId: "1", startTime: "0", limit: "10" }
  },
  {
    name: "InstrumentsQuery",
    schema: Queries.InstrumentsQuery,
    input: { exchange: "DBT", baseCurrency: "ETH", kind: "option" }
  },
  {
    name: "CreateExchangeCredentialsRequest",
    schema: AccountRequests.CreateExchangeCredentialsRequest,
    input: { alias: "a", exchange: "BULL", clientId: "c", clientSecret: "s", isExchangeDefault: false }
  },
  {
    name: "GetExchangeCredentialsRequest",
    schema: AccountRequests.GetExchangeCredentialsRequest,
    input: { id: "2" }
  },
  {
    name: "DeleteExchangeCredentialsRequest",
    schema: AccountRequests.DeleteExchangeCredentialsRequest,
    input: { id: "2" }
  },
  {
    name: "BulkBlockTradeRequest",
    schema: AccountRequests.BulkBlockTradeRequest,
    input: {
      timestamp: 1700000000000,
      blockTrades: [
        {
          nonce: "n1",
          makerExchangeCredentials: "dbt-main",
          takerExchangeCredentials: "dbt-alt",
          trades: [{ direction: "sell", instrumentName: call, price: 0.01, amount: 25 }]
        }
      ]
    }
  },
  {
    name: "OAuthTokenRequest",
    schema: AuthRequests.OAuthTokenRequest,
    input: { grant_type: "client_credentials", client_id: "c", client_secret: "s" }
  },
  { name: "AuthRequest", schema: AuthRequests.AuthRequest, input: { clientId: "c", clientSecret: "s" } },
  { name: "WsAuthParams", schema: AuthRequests.WsAuthParams, input: { clientId: "c", clientSecret: "s" } },
  { name: "WsAuthRefreshParams", schema: AuthRequests.WsAuthRefreshParams, input: { refreshToken: "r" } },
  { name: "SubscribeParams", schema: AuthRequests.SubscribeParams, input: { channels: ["rfq.maker"] } }
]

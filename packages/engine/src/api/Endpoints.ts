import { Schema } from "effect"
import type { Access } from "../auth/Roles.js"
import {
  BulkBlockTradeRequest,
  CreateExchangeCredentialsRequest,
  DeleteExchangeCredentialsRequest,
  GetExchangeCredentialsRequest
} from "./AccountRequests.js"
import {
  BulkBlockTradeResponse,
  CreateExchangeCredentialsResponse,
  DeleteExchangeCredentialsResponse,
  ExchangeCredentialsDetail,
  ExchangeCredentialsList,
  InstrumentListings,
  MakerList,
  OtcCounterpartyList
} from "./AccountResponses.js"
import { MmpConfigRequest, MmpCurrencyRequest } from "./MmpRequests.js"
import { MmpConfig, MmpConfigList, MmpDeleteResponse, MmpStatus, MmpStatusList } from "./MmpResponses.js"
import { InstrumentsQuery, ListQuotesQuery, ListRfqsQuery } from "./Queries.js"
import {
  CancelAllQuotesRequest,
  CreateQuoteRequest,
  DeleteQuoteRequest,
  UpdateQuoteRequest
} from "./QuoteRequests.js"
import {
  CancelAllQuotesResponse,
  CreateQuoteResponse,
  DeleteQuoteResponse,
  QuotePage,
  TakerQuotesResponse,
  UpdateQuoteResponse
} from "./QuoteResponses.js"
import {
  CancelRfqRequest,
  CreateRfqRequest,
  DeleteRfqRequest,
  GetRfqRequest,
  LegPricesRequest,
  TakerQuotesRequest,
  TradeRequest
} from "./RfqRequests.js"
import {
  CancelRfqResponse,
  CreateRfqResponse,
  DeleteRfqResponse,
  LegPricesResponse,
  Rfq,
  RfqPage,
  TradeResponse
} from "./RfqResponses.js"
import { PublicTradesQuery } from "./TradeTapeRequests.js"
import { PublicTradePage } from "./TradeTapeResponses.js"

/**
 * The service's operations as data: for each JSON-RPC method name, its REST method and path, where
 * REST finds the input besides path parameters, who may call it, and the schemas of its input and
 * its answer. One table, read by the host (which adds the engine call, `packages/host/src/Operations.ts`),
 * by the OpenAPI and AsyncAPI documents, and by the typed client (`@rfq/client`): none of them can
 * drift from the schemas the engine validates with. Pure data and `effect`'s Schema only, so a
 * browser bundle may import it (`@rfq/engine/api`).
 *
 * Over 300 lines on purpose: one entry per operation, one table, read top to bottom like the API's
 * index; the schemas themselves live in the `*Requests.ts` and `*Responses.ts` files.
 */

/** A schema that needs no services to decode or encode. */
export type AnySchema = Schema.Schema<any, any, never>

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE"

export interface Endpoint<I extends AnySchema = AnySchema, O extends AnySchema = AnySchema> {
  readonly rpc: string
  readonly method: HttpMethod
  /** The REST path, with `{name}` for a path parameter. */
  readonly path: string
  /** Where REST finds the input besides path parameters. */
  readonly from: "query" | "body" | "none"
  readonly access: Access
  readonly input: I
  readonly output: O
  /** One line for the documents and the client's doc comments. */
  readonly summary?: string
  /**
   * A valid input in its JSON form, path parameters included (as JSON-RPC params take it). The
   * OpenAPI and AsyncAPI documents show it, and the contract test calls every operation of a
   * third-party generated client with it (`packages/host/test/contracts/`), which fails naming an
   * endpoint without one.
   */
  readonly example?: Schema.Schema.Encoded<I>
}

const Empty = Schema.Struct({})

type Spec = Omit<Endpoint, "rpc">

/** Each entry's key is its JSON-RPC method name; `rpc` repeats it so an entry stands alone. */
const defineEndpoints = <const T extends Record<string, Spec>>(
  // Each entry's example is checked against the encoded form of its own input schema.
  specs: T & { readonly [K in keyof T]: { readonly example?: Schema.Schema.Encoded<T[K]["input"]> } }
): { readonly [K in keyof T]: T[K] & { readonly rpc: K } } =>
  Object.fromEntries(Object.entries(specs).map(([rpc, spec]) => [rpc, { ...spec, rpc }])) as never

export const endpoints = defineEndpoints({
  // Account
  "v1/account/exchange-credentials": {
    method: "GET",
    path: "/v1/account/exchange-credentials",
    from: "none",
    access: "account",
    input: Empty,
    output: ExchangeCredentialsList,
    summary: "List the desk's exchange credentials",
    example: {}
  },
  "v1/account/exchange-credentials/get": {
    method: "GET",
    path: "/v1/account/exchange-credentials/{id}",
    from: "none",
    access: "account",
    input: GetExchangeCredentialsRequest,
    output: ExchangeCredentialsDetail,
    summary: "Get exchange credentials with the decrypted secret",
    example: { id: 1 }
  },
  "v1/account/exchange-credentials/create": {
    method: "POST",
    path: "/v1/account/exchange-credentials",
    from: "body",
    access: "account",
    input: CreateExchangeCredentialsRequest,
    output: CreateExchangeCredentialsResponse,
    summary: "Add exchange credentials (alias unique per desk)",
    example: {
      alias: "dbt-backup",
      exchange: "DBT",
      clientId: "dbt-api-key-7",
      clientSecret: "dbt-api-secret-7",
      isExchangeDefault: false
    }
  },
  "v1/account/exchange-credentials/delete": {
    method: "DELETE",
    path: "/v1/account/exchange-credentials/{id}",
    from: "none",
    access: "account",
    input: DeleteExchangeCredentialsRequest,
    output: DeleteExchangeCredentialsResponse,
    summary: "Delete exchange credentials",
    example: { id: 10 }
  },
  "v1/account/otc-counterparty": {
    method: "GET",
    path: "/v1/account/otc-counterparty",
    from: "none",
    access: "account",
    input: Empty,
    output: OtcCounterpartyList,
    summary: "List OTC counterparties",
    example: {}
  },
  // Block trades, makers, instruments
  "v1/block-trade/bulk": {
    method: "POST",
    path: "/v1/block-trade/bulk",
    from: "body",
    access: "write",
    input: BulkBlockTradeRequest,
    output: BulkBlockTradeResponse,
    summary: "Create several block trades in one request",
    example: {
      timestamp: 1795328219445,
      blockTrades: [
        {
          nonce: "bt-0001",
          makerExchangeCredentials: "dbt-alt",
          takerExchangeCredentials: "dbt-main",
          trades: [{ direction: "sell", instrumentName: "BTC-27DEC30-90000-C", price: 0.669, amount: 25 }]
        }
      ]
    }
  },
  "v1/exchange/maker": {
    method: "GET",
    path: "/v1/exchange/maker",
    from: "none",
    access: "read",
    input: Empty,
    output: MakerList,
    summary: "List makers and their settlement options",
    example: {}
  },
  "v1/exchange/instruments": {
    method: "GET",
    path: "/v1/exchange/instruments",
    from: "query",
    access: "read",
    input: InstrumentsQuery,
    output: InstrumentListings,
    summary: "List instruments usable as legs on a settlement option",
    example: { exchange: "DBT", baseCurrency: "BTC", kind: "option" }
  },
  // RFQs
  "v1/rfq/list": {
    method: "GET",
    path: "/v1/rfq",
    from: "query",
    access: "read",
    input: ListRfqsQuery,
    output: RfqPage,
    summary: "List RFQs (newest first, keyset cursor)",
    example: { role: "taker", status: ["open", "filled"], baseCurrency: "BTC", limit: 20 }
  },
  "v1/quote/list": {
    method: "GET",
    path: "/v1/rfq/quotes",
    from: "query",
    access: "read",
    input: ListQuotesQuery,
    output: QuotePage,
    summary: "List the caller's quotes as maker",
    example: { rfqId: 1, limit: 50 }
  },
  "v1/rfq/get": {
    method: "GET",
    path: "/v1/rfq/{id}",
    from: "none",
    access: "read",
    input: GetRfqRequest,
    output: Rfq,
    summary: "Get one RFQ",
    example: { id: 1 }
  },
  "v1/rfq/create": {
    method: "POST",
    path: "/v1/rfq/{id}",
    from: "body",
    access: "write",
    input: CreateRfqRequest,
    output: CreateRfqResponse,
    summary: "Create an RFQ (the path id is an idempotency key; 0 = none)",
    example: {
      id: 0,
      baseCurrency: "BTC",
      amount: 50,
      anonymous: false,
      settlementOptions: ["DBT"],
      settlementCredentials: { DBT: 1 },
      makers: { DBT: ["maker-1", "maker-2"] },
      legs: [
        { direction: "buy", instrumentName: "BTC-27DEC30-90000-C", ratio: 1 },
        { direction: "sell", instrumentName: "BTC-27DEC30-110000-C", ratio: 1 }
      ],
      label: "call-spread-1"
    }
  },
  "v1/rfq/delete": {
    method: "DELETE",
    path: "/v1/rfq/{id}",
    from: "none",
    access: "write",
    input: DeleteRfqRequest,
    output: DeleteRfqResponse,
    summary: "Delete a cancelled RFQ",
    example: { id: 1 }
  },
  "v1/rfq/cancel": {
    method: "POST",
    path: "/v1/rfq/cancel",
    from: "body",
    access: "write",
    input: CancelRfqRequest,
    output: CancelRfqResponse,
    summary: "Cancel an open RFQ",
    example: { rfqId: 1 }
  },
  "v1/rfq/quotes": {
    method: "GET",
    path: "/v1/rfq/{id}/quote",
    from: "none",
    access: "read",
    input: TakerQuotesRequest,
    output: TakerQuotesResponse,
    summary: "The taker's quote book of an RFQ, per settlement option",
    example: { id: 1 }
  },
  "v1/rfq/trade": {
    method: "POST",
    path: "/v1/rfq/trade",
    from: "body",
    access: "write",
    input: TradeRequest,
    output: TradeResponse,
    summary: "Accept a quote: trade and settle the RFQ",
    example: { rfqQuoteId: 1 }
  },
  "v1/rfq/leg-prices": {
    method: "POST",
    path: "/v1/rfq/leg-prices",
    from: "body",
    access: "read",
    input: LegPricesRequest,
    output: LegPricesResponse,
    summary: "Leg prices for a strategy price",
    example: {
      rfqId: 1,
      price: 0.0688,
      legs: [
        { direction: "buy", instrumentName: "BTC-27DEC30-90000-C", ratio: 1 },
        { direction: "sell", instrumentName: "BTC-27DEC30-110000-C", ratio: 1 }
      ]
    }
  },
  // Quotes
  "v1/quote/create": {
    method: "POST",
    path: "/v1/rfq/quote",
    from: "body",
    access: "write",
    input: CreateQuoteRequest,
    output: CreateQuoteResponse,
    summary: "Create a quote",
    example: {
      rfqId: 1,
      label: "q-1",
      direction: "sell",
      amount: 50,
      settlementOption: "DBT",
      legs: [
        { instrumentName: "BTC-27DEC30-90000-C", price: 0.669 },
        { instrumentName: "BTC-27DEC30-110000-C", price: 0.6002 }
      ]
    }
  },
  "v1/quote/update": {
    method: "PUT",
    path: "/v1/rfq/quote",
    from: "body",
    access: "write",
    input: UpdateQuoteRequest,
    output: UpdateQuoteResponse,
    summary: "Update a quote (by rfqQuoteId or label)",
    example: {
      label: "q-1",
      amount: 50,
      settlementOption: "DBT",
      legs: [
        { instrumentName: "BTC-27DEC30-90000-C", price: 0.6695 },
        { instrumentName: "BTC-27DEC30-110000-C", price: 0.6002 }
      ]
    }
  },
  "v1/quote/delete": {
    method: "DELETE",
    path: "/v1/rfq/quote",
    from: "body",
    access: "write",
    input: DeleteQuoteRequest,
    output: DeleteQuoteResponse,
    summary: "Delete a quote (by rfqQuoteId or label)",
    example: { label: "q-1" }
  },
  "v1/quote/cancel-all": {
    method: "POST",
    path: "/v1/rfq/quote/cancel-all",
    from: "body",
    access: "write",
    input: CancelAllQuotesRequest,
    output: CancelAllQuotesResponse,
    summary: "Cancel the caller's quotes (all, per RFQ, or per base currency)",
    example: { baseCurrency: "BTC" }
  },
  // The public block-trade tape (issue 16): any authenticated caller, a viewer too.
  "v1/trades/public": {
    method: "GET",
    path: "/v1/trades/public",
    from: "query",
    access: "read",
    input: PublicTradesQuery,
    output: PublicTradePage,
    summary: "The public block-trade tape (newest first, keyset cursor)",
    example: { baseCurrency: "BTC", limit: 50 }
  },
  // Market-maker protection (issue 16): a maker desk's users; viewers read only.
  "v1/mmp/config": {
    method: "GET",
    path: "/v1/mmp/config",
    from: "none",
    access: "read",
    input: Empty,
    output: MmpConfigList,
    summary: "The desk's market-maker protection configs, one per base currency",
    example: {}
  },
  "v1/mmp/config/set": {
    method: "PUT",
    path: "/v1/mmp/config",
    from: "body",
    access: "write",
    input: MmpConfigRequest,
    output: MmpConfig,
    summary: "Create or replace the desk's market-maker protection in one base currency",
    example: { baseCurrency: "BTC", intervalMs: 1000, frozenMs: 5000, amountLimit: 100, tradeCountLimit: 5 }
  },
  "v1/mmp/config/delete": {
    method: "DELETE",
    path: "/v1/mmp/config",
    from: "query",
    access: "write",
    input: MmpCurrencyRequest,
    output: MmpDeleteResponse,
    summary: "Remove the desk's market-maker protection in one base currency",
    example: { baseCurrency: "BTC" }
  },
  "v1/mmp/reset": {
    method: "POST",
    path: "/v1/mmp/reset",
    from: "body",
    access: "write",
    input: MmpCurrencyRequest,
    output: MmpStatus,
    summary: "Thaw the desk in one base currency and start an empty window",
    example: { baseCurrency: "BTC" }
  },
  "v1/mmp/status": {
    method: "GET",
    path: "/v1/mmp/status",
    from: "none",
    access: "read",
    input: Empty,
    output: MmpStatusList,
    summary: "Frozen or not, and the current window, per configured base currency",
    example: {}
  }
})

export type Endpoints = typeof endpoints
export type EndpointName = keyof Endpoints
/** What a caller sends: the JSON form of an operation's input (path parameters included). */
export type EndpointInput<K extends EndpointName> = Schema.Schema.Encoded<Endpoints[K]["input"]>
/** What the service answers, as JSON. */
export type EndpointOutput<K extends EndpointName> = Schema.Schema.Encoded<Endpoints[K]["output"]>

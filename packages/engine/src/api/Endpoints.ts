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

/**
 * The service's operations as data: for each JSON-RPC method name, its REST method and path, where
 * REST finds the input besides path parameters, who may call it, and the schemas of its input and
 * its answer. One table, read by the host (which adds the engine call, `packages/host/src/Operations.ts`),
 * by the OpenAPI and AsyncAPI documents, and by the typed client (`@rfq/client`): none of them can
 * drift from the schemas the engine validates with. Pure data and `effect`'s Schema only, so a
 * browser bundle may import it (`@rfq/engine/api`).
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
  readonly summary?: string
}

const Empty = Schema.Struct({})

type Spec = Omit<Endpoint, "rpc">

/** Each entry's key is its JSON-RPC method name; `rpc` repeats it so an entry stands alone. */
const defineEndpoints = <const T extends Record<string, Spec>>(
  specs: T
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
    output: ExchangeCredentialsList
  },
  "v1/account/exchange-credentials/get": {
    method: "GET",
    path: "/v1/account/exchange-credentials/{id}",
    from: "none",
    access: "account",
    input: GetExchangeCredentialsRequest,
    output: ExchangeCredentialsDetail
  },
  "v1/account/exchange-credentials/create": {
    method: "POST",
    path: "/v1/account/exchange-credentials",
    from: "body",
    access: "account",
    input: CreateExchangeCredentialsRequest,
    output: CreateExchangeCredentialsResponse
  },
  "v1/account/exchange-credentials/delete": {
    method: "DELETE",
    path: "/v1/account/exchange-credentials/{id}",
    from: "none",
    access: "account",
    input: DeleteExchangeCredentialsRequest,
    output: DeleteExchangeCredentialsResponse
  },
  "v1/account/otc-counterparty": {
    method: "GET",
    path: "/v1/account/otc-counterparty",
    from: "none",
    access: "account",
    input: Empty,
    output: OtcCounterpartyList
  },
  // Block trades, makers, instruments
  "v1/block-trade/bulk": {
    method: "POST",
    path: "/v1/block-trade/bulk",
    from: "body",
    access: "write",
    input: BulkBlockTradeRequest,
    output: BulkBlockTradeResponse
  },
  "v1/exchange/maker": {
    method: "GET",
    path: "/v1/exchange/maker",
    from: "none",
    access: "read",
    input: Empty,
    output: MakerList
  },
  "v1/exchange/instruments": {
    method: "GET",
    path: "/v1/exchange/instruments",
    from: "query",
    access: "read",
    input: InstrumentsQuery,
    output: InstrumentListings
  },
  // RFQs
  "v1/rfq/list": {
    method: "GET",
    path: "/v1/rfq",
    from: "query",
    access: "read",
    input: ListRfqsQuery,
    output: RfqPage
  },
  "v1/quote/list": {
    method: "GET",
    path: "/v1/rfq/quotes",
    from: "query",
    access: "read",
    input: ListQuotesQuery,
    output: QuotePage
  },
  "v1/rfq/get": {
    method: "GET",
    path: "/v1/rfq/{id}",
    from: "none",
    access: "read",
    input: GetRfqRequest,
    output: Rfq
  },
  "v1/rfq/create": {
    method: "POST",
    path: "/v1/rfq/{id}",
    from: "body",
    access: "write",
    input: CreateRfqRequest,
    output: CreateRfqResponse
  },
  "v1/rfq/delete": {
    method: "DELETE",
    path: "/v1/rfq/{id}",
    from: "none",
    access: "write",
    input: DeleteRfqRequest,
    output: DeleteRfqResponse
  },
  "v1/rfq/cancel": {
    method: "POST",
    path: "/v1/rfq/cancel",
    from: "body",
    access: "write",
    input: CancelRfqRequest,
    output: CancelRfqResponse
  },
  "v1/rfq/quotes": {
    method: "GET",
    path: "/v1/rfq/{id}/quote",
    from: "none",
    access: "read",
    input: TakerQuotesRequest,
    output: TakerQuotesResponse
  },
  "v1/rfq/trade": {
    method: "POST",
    path: "/v1/rfq/trade",
    from: "body",
    access: "write",
    input: TradeRequest,
    output: TradeResponse
  },
  "v1/rfq/leg-prices": {
    method: "POST",
    path: "/v1/rfq/leg-prices",
    from: "body",
    access: "read",
    input: LegPricesRequest,
    output: LegPricesResponse
  },
  // Quotes
  "v1/quote/create": {
    method: "POST",
    path: "/v1/rfq/quote",
    from: "body",
    access: "write",
    input: CreateQuoteRequest,
    output: CreateQuoteResponse
  },
  "v1/quote/update": {
    method: "PUT",
    path: "/v1/rfq/quote",
    from: "body",
    access: "write",
    input: UpdateQuoteRequest,
    output: UpdateQuoteResponse
  },
  "v1/quote/delete": {
    method: "DELETE",
    path: "/v1/rfq/quote",
    from: "body",
    access: "write",
    input: DeleteQuoteRequest,
    output: DeleteQuoteResponse
  },
  "v1/quote/cancel-all": {
    method: "POST",
    path: "/v1/rfq/quote/cancel-all",
    from: "body",
    access: "write",
    input: CancelAllQuotesRequest,
    output: CancelAllQuotesResponse
  }
})

export type Endpoints = typeof endpoints
export type EndpointName = keyof Endpoints
/** What a caller sends: the JSON form of an operation's input (path parameters included). */
export type EndpointInput<K extends EndpointName> = Schema.Schema.Encoded<Endpoints[K]["input"]>
/** What the service answers, as JSON. */
export type EndpointOutput<K extends EndpointName> = Schema.Schema.Encoded<Endpoints[K]["output"]>

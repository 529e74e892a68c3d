import {
  BulkBlockTradeResponse,
  CancelAllQuotesResponse,
  CancelRfqResponse,
  CreateExchangeCredentialsResponse,
  CreateQuoteResponse,
  CreateRfqResponse,
  DeleteExchangeCredentialsResponse,
  DeleteQuoteResponse,
  DeleteRfqResponse,
  ExchangeCredentialsDetail,
  ExchangeCredentialsList,
  InstrumentListings,
  LegPricesResponse,
  MakerList,
  OtcCounterpartyList,
  QuotePage,
  Rfq,
  RfqPage,
  TakerQuotesResponse,
  TradeResponse,
  UpdateQuoteResponse,
  type Access,
  type ApiError,
  BulkBlockTradeRequest,
  CancelAllQuotesRequest,
  CancelRfqRequest,
  type Caller,
  CreateExchangeCredentialsRequest,
  CreateQuoteRequest,
  CreateRfqRequest,
  DeleteExchangeCredentialsRequest,
  DeleteQuoteRequest,
  DeleteRfqRequest,
  type EngineService,
  GetExchangeCredentialsRequest,
  GetRfqRequest,
  InstrumentsQuery,
  LegPricesRequest,
  ListQuotesQuery,
  ListRfqsQuery,
  TakerQuotesRequest,
  TradeRequest,
  UpdateQuoteRequest
} from "@rfq/engine"
import { type Effect, type Either, Schema } from "effect"
import type { HttpMethod } from "./Router.js"

/**
 * The one table of operations that REST and JSON-RPC both serve, so the two cannot drift: the
 * JSON-RPC method name, the REST method and path, the schema that decodes the input (path
 * parameters merged with the query string or the body over REST, `params` over JSON-RPC), who may
 * call it (the engine's `Access`, checked with its `requireRole` before decoding: `CallPipeline.ts`),
 * and the engine call.
 */

export interface Operation {
  readonly rpc: string
  readonly method: HttpMethod
  readonly path: string
  /** Where REST finds the input besides path parameters. */
  readonly from: "query" | "body" | "none"
  readonly access: Access
  readonly input: Schema.Schema<any, any>
  /** The response's schema (documentation: the OpenAPI document is generated from it). */
  readonly output: Schema.Schema<any, any>
  readonly summary: string
  readonly run: (engine: EngineService, caller: Caller, input: any) => Effect.Effect<unknown, ApiError>
  /**
   * `run`'s answer when memory alone gives it, synchronously (no fiber); undefined when only `run`
   * can answer. The read path of the service (`GET /v1/rfq/{id}`).
   */
  readonly peek?: (
    engine: EngineService,
    caller: Caller,
    input: any
  ) => Either.Either<unknown, ApiError> | undefined
}

const op = <A, I>(spec: {
  readonly rpc: string
  readonly method: HttpMethod
  readonly path: string
  readonly from: Operation["from"]
  readonly access: Access
  readonly input: Schema.Schema<A, I>
  readonly output: Schema.Schema<any, any>
  readonly summary?: string
  readonly run: (engine: EngineService, caller: Caller, input: A) => Effect.Effect<unknown, ApiError>
  readonly peek?: (
    engine: EngineService,
    caller: Caller,
    input: A
  ) => Either.Either<unknown, ApiError> | undefined
}): Operation => ({ ...spec, summary: spec.summary ?? spec.rpc }) as Operation

const Empty = Schema.Struct({})

export const operations: ReadonlyArray<Operation> = [
  // Account
  op({
    rpc: "v1/account/exchange-credentials",
    output: ExchangeCredentialsList,
    method: "GET",
    path: "/v1/account/exchange-credentials",
    from: "none",
    access: "account",
    input: Empty,
    run: (e, c) => e.exchangeCredentials.list(c)
  }),
  op({
    rpc: "v1/account/exchange-credentials/get",
    output: ExchangeCredentialsDetail,
    method: "GET",
    path: "/v1/account/exchange-credentials/{id}",
    from: "none",
    access: "account",
    input: GetExchangeCredentialsRequest,
    run: (e, c, i) => e.exchangeCredentials.get(c, i.id)
  }),
  op({
    rpc: "v1/account/exchange-credentials/create",
    output: CreateExchangeCredentialsResponse,
    method: "POST",
    path: "/v1/account/exchange-credentials",
    from: "body",
    access: "account",
    input: CreateExchangeCredentialsRequest,
    run: (e, c, i) => e.exchangeCredentials.create(c, i)
  }),
  op({
    rpc: "v1/account/exchange-credentials/delete",
    output: DeleteExchangeCredentialsResponse,
    method: "DELETE",
    path: "/v1/account/exchange-credentials/{id}",
    from: "none",
    access: "account",
    input: DeleteExchangeCredentialsRequest,
    run: (e, c, i) => e.exchangeCredentials.delete(c, i.id)
  }),
  op({
    rpc: "v1/account/otc-counterparty",
    output: OtcCounterpartyList,
    method: "GET",
    path: "/v1/account/otc-counterparty",
    from: "none",
    access: "account",
    input: Empty,
    run: (e, c) => e.otcCounterparties(c)
  }),
  // Block trades, makers, instruments
  op({
    rpc: "v1/block-trade/bulk",
    output: BulkBlockTradeResponse,
    method: "POST",
    path: "/v1/block-trade/bulk",
    from: "body",
    access: "write",
    input: BulkBlockTradeRequest,
    run: (e, c, i) => e.bulkBlockTrades(c, i)
  }),
  op({
    rpc: "v1/exchange/maker",
    output: MakerList,
    method: "GET",
    path: "/v1/exchange/maker",
    from: "none",
    access: "read",
    input: Empty,
    run: (e, c) => e.makers(c)
  }),
  op({
    rpc: "v1/exchange/instruments",
    output: InstrumentListings,
    method: "GET",
    path: "/v1/exchange/instruments",
    from: "query",
    access: "read",
    input: InstrumentsQuery,
    run: (e, c, i) => e.instruments(c, i)
  }),
  // RFQs
  op({
    rpc: "v1/rfq/list",
    output: RfqPage,
    method: "GET",
    path: "/v1/rfq",
    from: "query",
    access: "read",
    input: ListRfqsQuery,
    run: (e, c, i) => e.listRfqs(c, i)
  }),
  op({
    rpc: "v1/quote/list",
    output: QuotePage,
    method: "GET",
    path: "/v1/rfq/quotes",
    from: "query",
    access: "read",
    input: ListQuotesQuery,
    run: (e, c, i) => e.listQuotes(c, i)
  }),
  op({
    rpc: "v1/rfq/get",
    output: Rfq,
    method: "GET",
    path: "/v1/rfq/{id}",
    from: "none",
    access: "read",
    input: GetRfqRequest,
    run: (e, c, i) => e.getRfq(c, i.id),
    peek: (e, c, i) => e.peekRfq(c, i.id)
  }),
  op({
    rpc: "v1/rfq/create",
    output: CreateRfqResponse,
    method: "POST",
    path: "/v1/rfq/{id}",
    from: "body",
    access: "write",
    input: CreateRfqRequest,
    run: (e, c, i) => e.createRfq(c, i)
  }),
  op({
    rpc: "v1/rfq/delete",
    output: DeleteRfqResponse,
    method: "DELETE",
    path: "/v1/rfq/{id}",
    from: "none",
    access: "write",
    input: DeleteRfqRequest,
    run: (e, c, i) => e.deleteRfq(c, i.id)
  }),
  op({
    rpc: "v1/rfq/cancel",
    output: CancelRfqResponse,
    method: "POST",
    path: "/v1/rfq/cancel",
    from: "body",
    access: "write",
    input: CancelRfqRequest,
    run: (e, c, i) => e.cancelRfq(c, i.rfqId)
  }),
  op({
    rpc: "v1/rfq/quotes",
    output: TakerQuotesResponse,
    method: "GET",
    path: "/v1/rfq/{id}/quote",
    from: "none",
    access: "read",
    input: TakerQuotesRequest,
    run: (e, c, i) => e.takerQuotes(c, i.id)
  }),
  op({
    rpc: "v1/rfq/trade",
    output: TradeResponse,
    method: "POST",
    path: "/v1/rfq/trade",
    from: "body",
    access: "write",
    input: TradeRequest,
    run: (e, c, i) => e.trade(c, i.rfqQuoteId)
  }),
  op({
    rpc: "v1/rfq/leg-prices",
    output: LegPricesResponse,
    method: "POST",
    path: "/v1/rfq/leg-prices",
    from: "body",
    access: "read",
    input: LegPricesRequest,
    run: (e, c, i) => e.legPrices(c, i)
  }),
  // Quotes
  op({
    rpc: "v1/quote/create",
    output: CreateQuoteResponse,
    method: "POST",
    path: "/v1/rfq/quote",
    from: "body",
    access: "write",
    input: CreateQuoteRequest,
    run: (e, c, i) => e.createQuote(c, i)
  }),
  op({
    rpc: "v1/quote/update",
    output: UpdateQuoteResponse,
    method: "PUT",
    path: "/v1/rfq/quote",
    from: "body",
    access: "write",
    input: UpdateQuoteRequest,
    run: (e, c, i) => e.updateQuote(c, i)
  }),
  op({
    rpc: "v1/quote/delete",
    output: DeleteQuoteResponse,
    method: "DELETE",
    path: "/v1/rfq/quote",
    from: "body",
    access: "write",
    input: DeleteQuoteRequest,
    run: (e, c, i) => e.deleteQuote(c, i)
  }),
  op({
    rpc: "v1/quote/cancel-all",
    output: CancelAllQuotesResponse,
    method: "POST",
    path: "/v1/rfq/quote/cancel-all",
    from: "body",
    access: "write",
    input: CancelAllQuotesRequest,
    run: (e, c, i) => e.cancelAllQuotes(c, i)
  })
]

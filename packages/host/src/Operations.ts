import {
  type ApiError,
  type Caller,
  type Endpoint,
  type EndpointName,
  type EngineService,
  endpoints
} from "@rfq/engine"
import type { Effect, Either, Schema } from "effect"

/**
 * The one table of operations that REST and JSON-RPC both serve, so the two cannot drift. What an
 * operation is (JSON-RPC name, REST method and path, where REST finds the input, who may call it,
 * the schemas of input and answer) is the engine's data, `packages/engine/src/api/Endpoints.ts`;
 * this table adds only the engine call (`run`, and `peek` where memory alone answers). The role is
 * checked with the engine's `requireRole` before decoding (`CallPipeline.ts`).
 */

export interface Operation extends Endpoint {
  readonly summary: string
  readonly run: (engine: EngineService, caller: Caller, input: any) => Effect.Effect<unknown, ApiError>
  /**
   * `run`'s answer when memory alone gives it, synchronously (no fiber); undefined when only `run`
   * can answer. The read path of the service (`GET /v1/rfq/{id}`, the taker's `GET /v1/rfq/{id}/quote`).
   */
  readonly peek?: (
    engine: EngineService,
    caller: Caller,
    input: any
  ) => Either.Either<unknown, ApiError> | undefined
}

type InputOf<K extends EndpointName> = Schema.Schema.Type<(typeof endpoints)[K]["input"]>

const op = <K extends EndpointName>(
  rpc: K,
  calls: {
    readonly run: (
      engine: EngineService,
      caller: Caller,
      input: InputOf<K>
    ) => Effect.Effect<unknown, ApiError>
    readonly peek?: (
      engine: EngineService,
      caller: Caller,
      input: InputOf<K>
    ) => Either.Either<unknown, ApiError> | undefined
  }
): Operation => {
  const endpoint: Endpoint = endpoints[rpc]
  return { ...endpoint, summary: endpoint.summary ?? endpoint.rpc, ...calls } as Operation
}

export const operations: ReadonlyArray<Operation> = [
  // Account
  op("v1/account/exchange-credentials", { run: (e, c) => e.exchangeCredentials.list(c) }),
  op("v1/account/exchange-credentials/get", { run: (e, c, i) => e.exchangeCredentials.get(c, i.id) }),
  op("v1/account/exchange-credentials/create", { run: (e, c, i) => e.exchangeCredentials.create(c, i) }),
  op("v1/account/exchange-credentials/delete", { run: (e, c, i) => e.exchangeCredentials.delete(c, i.id) }),
  op("v1/account/otc-counterparty", { run: (e, c) => e.otcCounterparties(c) }),
  // Block trades, makers, instruments
  op("v1/block-trade/bulk", { run: (e, c, i) => e.bulkBlockTrades(c, i) }),
  op("v1/exchange/maker", { run: (e, c) => e.makers(c) }),
  op("v1/exchange/instruments", { run: (e, c, i) => e.instruments(c, i) }),
  // RFQs
  op("v1/rfq/list", { run: (e, c, i) => e.listRfqs(c, i) }),
  op("v1/quote/list", { run: (e, c, i) => e.listQuotes(c, i) }),
  op("v1/rfq/get", { run: (e, c, i) => e.getRfq(c, i.id), peek: (e, c, i) => e.peekRfq(c, i.id) }),
  op("v1/rfq/create", { run: (e, c, i) => e.createRfq(c, i) }),
  op("v1/rfq/delete", { run: (e, c, i) => e.deleteRfq(c, i.id) }),
  op("v1/rfq/cancel", { run: (e, c, i) => e.cancelRfq(c, i.rfqId) }),
  op("v1/rfq/quotes", {
    run: (e, c, i) => e.takerQuotes(c, i.id),
    peek: (e, c, i) => e.peekTakerQuotes(c, i.id)
  }),
  op("v1/rfq/trade", { run: (e, c, i) => e.trade(c, i.rfqQuoteId) }),
  op("v1/rfq/leg-prices", { run: (e, c, i) => e.legPrices(c, i) }),
  // Quotes
  op("v1/quote/create", { run: (e, c, i) => e.createQuote(c, i) }),
  op("v1/quote/update", { run: (e, c, i) => e.updateQuote(c, i) }),
  op("v1/quote/delete", { run: (e, c, i) => e.deleteQuote(c, i) }),
  op("v1/quote/cancel-all", { run: (e, c, i) => e.cancelAllQuotes(c, i) }),
  // The public block-trade tape (issue 16)
  op("v1/trades/public", { run: (e, c, i) => e.publicTrades(c, i) }),
  // Market-maker protection (issue 16)
  op("v1/mmp/config", { run: (e, c) => e.mmpConfig(c) }),
  op("v1/mmp/config/set", { run: (e, c, i) => e.setMmpConfig(c, i) }),
  op("v1/mmp/config/delete", { run: (e, c, i) => e.deleteMmpConfig(c, i) }),
  op("v1/mmp/reset", { run: (e, c, i) => e.resetMmp(c, i) }),
  op("v1/mmp/status", { run: (e, c) => e.mmpStatus(c) })
]

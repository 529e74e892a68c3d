import { Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { Schema } from "effect"
import {
  CancelAllQuotesRequest,
  CreateQuoteRequest,
  DeleteQuoteRequest,
  UpdateQuoteRequest
} from "../api/QuoteRequests.js"
import { CreateRfqRequest, LegPricesRequest } from "../api/RfqRequests.js"
import { ApiError } from "../domain/Errors.js"

/** Who is calling, as the host that took the request authenticated it. */
export const CallerSchema = Schema.Struct({
  deskId: Schema.Number,
  userId: Schema.Number,
  roles: Schema.Array(Schema.Literal("trader", "viewer")),
  makerId: Schema.optional(Schema.String)
})

/**
 * An engine answer as it goes over the wire: the rendered JSON the REST body and the JSON-RPC
 * result are made of (plain objects, arrays, strings, numbers, booleans, null).
 */
const Answer = Schema.Unknown

const call = <const Tag extends string, Fields extends Schema.Struct.Fields>(tag: Tag, fields: Fields) =>
  Rpc.make(tag, { payload: { caller: CallerSchema, ...fields }, success: Answer, error: ApiError })

/**
 * One RFQ as a cluster entity (entity id: the RFQ id). Each message is one engine call on that RFQ,
 * run by the host that holds the RFQ's shard, in the RFQ's actor (today's XState machine behind its
 * mailbox); the host that took the request only forwards it (`RoutedEngine.ts`). Requests travel
 * as the API's own wire form (the request schemas encode and decode them), answers as rendered JSON,
 * failures as the API's errors.
 *
 * Messages are volatile (not stored): an answer is owed to a client waiting on a socket. One in
 * flight when its owner dies is sent again to the new owner by the cluster, which meets the RFQ as
 * storage has it: a step the dead owner committed is not done twice (the machine refuses what no
 * longer applies; the step's guard refuses a stale write).
 */
export const RfqEntity = Entity.make("Rfq", [
  call("CreateRfq", { req: CreateRfqRequest }),
  call("CancelRfq", {}),
  call("DeleteRfq", {}),
  call("GetRfq", {}),
  call("TakerQuotes", {}),
  call("LegPrices", { req: LegPricesRequest }),
  call("CreateQuote", { req: CreateQuoteRequest }),
  call("UpdateQuote", { req: UpdateQuoteRequest }),
  call("DeleteQuote", { req: DeleteQuoteRequest }),
  call("CancelQuotes", { req: CancelAllQuotesRequest, onlyUser: Schema.Boolean }),
  call("Trade", { rfqQuoteId: Schema.Number })
])

/** The cluster's entity id of an RFQ. */
export const entityIdOf = (rfqId: number): string => String(rfqId)

import {
  BaseCurrency,
  catalog,
  type ErrorKey,
  HeartbeatResult,
  MakerRfq,
  MmpWindow,
  PublicTrade,
  Quote,
  RfqId,
  RfqListItem,
  TakerQuote,
  WsAuthParams,
  WsAuthRefreshParams,
  WsAuthResult
} from "@rfq/engine"
import { Schema } from "effect"
import { type ApiTag, authenticationTag, sessionTag } from "./ApiTags.js"
import { authenticationRequired, methodNotFound, rateLimitExceeded, rpcCodeOfStatus } from "./ErrorTable.js"
import type { Json, JsonSchemas } from "./JsonSchemas.js"
import { CHANNELS } from "./ws/Channels.js"
import { RpcCode } from "./ws/JsonRpc.js"
import { CloseCode } from "./ws/SessionEnvironment.js"
import { CancelOnDisconnectParams } from "./ws/SessionMethods.js"

/**
 * What the AsyncAPI document says of the WebSocket session beyond the endpoint table: the
 * session's own methods (`ws/SessionMethods.ts`), the payload of each live channel
 * (`ws/Channels.ts`, rendered by the engine's `renderEvent`), the JSON-RPC errors (codes from
 * `ws/JsonRpc.ts`, messages from the catalog through `ErrorTable.ts`) and the close codes
 * (`ws/SessionEnvironment.ts`). Tests hold each list to its source.
 */

export interface SessionMethod {
  readonly method: string
  readonly summary: string
  readonly tag: ApiTag
  readonly params: (schemas: JsonSchemas) => Json
  /** Whether `params` may be left out (then `{}`). */
  readonly paramsOptional: boolean
  readonly result: (schemas: JsonSchemas) => Json
  readonly example: Record<string, unknown>
}

/** Every name `v1/subscribe` accepts: each channel, alone or narrowed to a base currency. */
export const channelNames = (): Array<string> =>
  CHANNELS.flatMap((channel) => [channel, ...BaseCurrency.literals.map((c) => `${channel}.${c}`)])

const channelList = (): Json => ({
  type: "array",
  items: { type: "string", enum: channelNames() },
  minItems: 1,
  description: "Channel names; a repeated name counts once."
})

const AuthRefreshResult = Schema.Struct({
  success: Schema.Literal(true),
  token: Schema.optional(Schema.String.annotations({ description: "The new access token (refresh grant)." })),
  refreshToken: Schema.optional(
    Schema.String.annotations({ description: "The next one-time refresh token." })
  ),
  expiresAt: Schema.Int.annotations({ description: "When the session now ends (unix ms)." })
}).annotations({ identifier: "AuthRefreshResult", description: "Result of `auth/refresh`." })

const channelsMethod = (method: string, status: string): SessionMethod => ({
  method,
  summary:
    status === "subscribed"
      ? "Subscribe to live channels (notifications `v1/subscription`)"
      : "Unsubscribe from channels (not subscribed is not an error)",
  tag: sessionTag,
  params: () => ({ type: "object", properties: { channels: channelList() }, required: ["channels"] }),
  paramsOptional: false,
  result: () => ({
    type: "object",
    properties: { status: { type: "string", const: status }, channels: channelList() },
    required: ["status", "channels"]
  }),
  example: { channels: ["rfq.maker", "rfq_quote.maker.BTC"] }
})

export const sessionMethods: ReadonlyArray<SessionMethod> = [
  {
    method: "auth",
    summary: "Authenticate the session with an access token or client credentials",
    tag: authenticationTag,
    params: (s) => s.of(WsAuthParams),
    paramsOptional: false,
    result: (s) => s.of(WsAuthResult),
    example: { clientId: "demo-maker-1", clientSecret: "demo-maker-1-secret" }
  },
  {
    method: "auth/refresh",
    summary: "Renew the session with a refresh token or a newer access token of the same user",
    tag: authenticationTag,
    params: (s) => s.of(WsAuthRefreshParams),
    paramsOptional: false,
    result: (s) => s.of(AuthRefreshResult),
    example: { refreshToken: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.…" }
  },
  {
    method: "heartbeat",
    summary: "Keep the session open (at least every 30 s); answers when it was received",
    tag: sessionTag,
    params: () => ({ type: "object" }),
    paramsOptional: true,
    result: (s) => s.of(HeartbeatResult),
    example: {}
  },
  channelsMethod("v1/subscribe", "subscribed"),
  channelsMethod("v1/unsubscribe", "unsubscribed"),
  {
    method: "v1/cancel-on-disconnect",
    summary: "Cancel the user's quotes when its last protected session ends",
    tag: sessionTag,
    params: (s) => s.of(CancelOnDisconnectParams),
    paramsOptional: false,
    result: (s) => s.of(CancelOnDisconnectParams),
    example: { enabled: true }
  }
]

const Event = Schema.Literal("created", "updated", "deleted")
const LiveEvent = Schema.Literal("created", "updated")

const deletedRfq = Schema.Struct({ event: Schema.Literal("deleted"), rfqId: RfqId })

/**
 * The `data` of a notification per channel: the object exactly as that recipient sees it over
 * REST, plus `event` (`ws/Channels.ts`, the engine's `renderEvent`). A channel without an entry
 * is published with an open object and fails the AsyncAPI test, which names it.
 */
export const channelPayloads: Readonly<Record<string, Schema.Schema.AnyNoContext>> = {
  "rfq.maker": Schema.Union(Schema.Struct({ event: LiveEvent, ...MakerRfq.fields }), deletedRfq).annotations({
    identifier: "RfqMakerEvent",
    description:
      "An RFQ the caller may quote on, as a maker lists it; `{event: deleted, rfqId}` when deleted."
  }),
  "rfq.taker": Schema.Union(
    Schema.Struct({ event: LiveEvent, ...RfqListItem.fields }),
    deletedRfq
  ).annotations({
    identifier: "RfqTakerEvent",
    description:
      "One of the caller's RFQs, as `GET /v1/rfq` lists it; `{event: deleted, rfqId}` when deleted."
  }),
  "rfq_quote.maker": Schema.Struct({ event: Event, ...Quote.fields }).annotations({
    identifier: "QuoteMakerEvent",
    description: "A quote of the caller's desk, as `GET /v1/rfq/quotes` lists it."
  }),
  "rfq_quote.taker": Schema.Struct({
    event: Event,
    rfqId: RfqId,
    ...TakerQuote.fields,
    status: Quote.fields.status
  }).annotations({
    identifier: "QuoteTakerEvent",
    description:
      "A quote received on the caller's RFQ, as in `GET /v1/rfq/{id}/quote`, with `rfqId` and `status`."
  }),
  trades: Schema.Struct({ event: Schema.Literal("created"), ...PublicTrade.fields }).annotations({
    identifier: "PublicTradeEvent",
    description: "A block trade that printed, as `GET /v1/trades/public` lists it."
  }),
  // `renderMmpNotice` (engine, `mmp/MmpChannel.ts`): the caller's own desk's trips and thaws.
  "mmp.maker": Schema.Union(
    Schema.Struct({
      event: Schema.Literal("tripped"),
      baseCurrency: BaseCurrency,
      frozen: Schema.Literal(true),
      frozenUntil: Schema.optional(
        Schema.Int.annotations({ description: "When the freeze ends (unix ms); absent: until a reset." })
      ),
      limit: Schema.Literal("amount", "delta", "tradeCount").annotations({
        description: "The limit reached."
      }),
      window: MmpWindow
    }),
    Schema.Struct({
      event: Schema.Literal("thawed"),
      baseCurrency: BaseCurrency,
      frozen: Schema.Literal(false),
      by: Schema.Literal("time", "reset", "delete").annotations({ description: "What ended the freeze." })
    })
  ).annotations({
    identifier: "MmpMakerEvent",
    description: "The caller's desk's market-maker protection tripped or thawed in one base currency."
  })
}

export interface RpcErrorKind {
  /** Component name of its message. */
  readonly name: string
  readonly code: number
  readonly messages: ReadonlyArray<string>
  readonly description: string
  /** `data` carries the REST status and reasons (`{status, reason}`). */
  readonly data: "status" | "reason" | "rateLimit" | "none"
}

const catalogMessages = (code: number): Array<string> =>
  (Object.keys(catalog) as Array<ErrorKey>)
    .filter((key) => rpcCodeOfStatus(catalog[key].status) === code)
    .map((key) => catalog[key].message)

/** Every JSON-RPC error the session answers, one per code. */
export const rpcErrors = (): ReadonlyArray<RpcErrorKind> => [
  {
    name: "ParseError",
    code: RpcCode.parseError,
    messages: ["Parse error"],
    description: "The frame is not JSON; `id` is null.",
    data: "none"
  },
  {
    name: "InvalidRequest",
    code: RpcCode.invalidRequest,
    messages: ["Invalid Request"],
    description:
      "Not a JSON-RPC 2.0 request (or an empty or oversized batch, or nested deeper than 32 levels).",
    data: "reason"
  },
  {
    name: "MethodNotFound",
    code: RpcCode.methodNotFound,
    messages: [methodNotFound("").message],
    description: "No such method.",
    data: "reason"
  },
  {
    name: "InvalidParams",
    code: RpcCode.invalidParams,
    messages: catalogMessages(RpcCode.invalidParams),
    description:
      "A 400 of REST: the params are invalid (`reason` lists each problem) or the request is refused.",
    data: "status"
  },
  {
    name: "Unauthorized",
    code: RpcCode.unauthorized,
    messages: [...catalogMessages(RpcCode.unauthorized), authenticationRequired.message],
    description: "A 401 of REST, or a call other than `auth` and `heartbeat` before authenticating.",
    data: "status"
  },
  {
    name: "Forbidden",
    code: RpcCode.forbidden,
    messages: catalogMessages(RpcCode.forbidden),
    description: "A 403 of REST: the caller's role does not allow the method.",
    data: "status"
  },
  {
    name: "NotFound",
    code: RpcCode.notFound,
    messages: catalogMessages(RpcCode.notFound),
    description: "A 404 of REST.",
    data: "status"
  },
  {
    name: "InternalError",
    code: RpcCode.internalError,
    messages: catalogMessages(RpcCode.internalError),
    description: "Any other status of REST (500, 503, …) with `data: {status, reason}`.",
    data: "status"
  },
  {
    name: "RateLimitExceeded",
    code: RpcCode.internalError,
    messages: [rateLimitExceeded(0, 60_000, 0).message],
    description:
      "Past the user's message limit, or the limit of failed client-secret checks (`auth`): `data: {limit, window, reset}`, `reset` in unix seconds.",
    data: "rateLimit"
  }
]

/** Why the service closes a session, by close code (docs/websocket.md, "Close codes"). */
export const closeCodes: Readonly<Record<number, string>> = {
  [CloseCode.normal]: "the client closed normally",
  [CloseCode.goingAway]: "`server shutting down`: graceful shutdown (cancel-on-disconnect still runs)",
  [CloseCode.policyViolation]:
    "`too many pending requests`: over 4 MiB of requests received and not yet answered",
  1011: "`internal error`: a bug in the server's socket handling",
  [CloseCode.heartbeatTimeout]: "`heartbeat timeout`: no `heartbeat` within `WS_HEARTBEAT_TIMEOUT_MS` (30 s)",
  [CloseCode.tokenExpired]: "`token expired`: the session's access token expired",
  [CloseCode.backpressure]: "`backpressure limit exceeded`: the client stopped reading",
  [CloseCode.revoked]:
    "`token revoked` or `account is inactive`: the token's refresh family was revoked, or the client or user deactivated"
}

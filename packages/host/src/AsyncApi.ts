import type { Endpoint } from "@rfq/engine"
import { type ApiTag, tagOf, tagsUsed } from "./ApiTags.js"
import {
  channelPayloads,
  closeCodes,
  type RpcErrorKind,
  rpcErrors,
  sessionMethods
} from "./AsyncApiSession.js"
import { type Json, type JsonSchemas, makeJsonSchemas } from "./JsonSchemas.js"
import { operationIdOf } from "./OpenApiOperation.js"
import { CHANNELS } from "./ws/Channels.js"

/**
 * The AsyncAPI 3.0 document (`GET /v1/asyncapi.json`) of the WebSocket API, JSON-RPC 2.0 at
 * `/ws/v1`: every method (the operations of the endpoint table, with the REST input as `params`
 * and the REST answer as `result`, and the session's own methods), every live channel with the
 * payload of its notifications, every JSON-RPC error and the close codes. Built from the same
 * table and schemas as the OpenAPI document.
 *
 * It describes the service: a method is an operation the service `receive`s and answers (`reply`),
 * a channel's notifications are `send`s. Messages live in `components.messages`; the `rpc` channel
 * lists requests, results and errors, and each live channel its notification.
 */

export interface AsyncApiInfo {
  readonly version: string
  /** `host:port` of the session's server. */
  readonly host?: string
}

interface Method {
  readonly method: string
  readonly summary: string
  readonly tag: ApiTag
  readonly params: Json
  readonly paramsOptional: boolean
  readonly result: Json
  readonly example: unknown
}

const rpcRef = { $ref: "#/channels/rpc" }
const messageRef = (channel: string, name: string) => ({ $ref: `#/channels/${channel}/messages/${name}` })

const idSchema = { type: ["string", "number", "null"], description: "Echoed from the request." }

const requestMessage = (m: Method): Json => ({
  name: m.method,
  title: `${m.method} request`,
  summary: m.summary,
  tags: [{ name: m.tag.name }],
  payload: {
    type: "object",
    properties: {
      jsonrpc: { const: "2.0" },
      id: { ...idSchema, description: "Without `id` the call is a notification: run, never answered." },
      method: { const: m.method },
      params: m.params
    },
    required: m.paramsOptional ? ["jsonrpc", "method"] : ["jsonrpc", "method", "params"]
  },
  ...(m.example === undefined
    ? {}
    : { examples: [{ payload: { jsonrpc: "2.0", id: 1, method: m.method, params: m.example } }] })
})

const resultMessage = (m: Method): Json => ({
  name: `${m.method} result`,
  title: `${m.method} result`,
  payload: {
    type: "object",
    properties: { jsonrpc: { const: "2.0" }, id: idSchema, method: { const: m.method }, result: m.result },
    required: ["jsonrpc", "id", "method", "result"]
  }
})

const errorData = (kind: RpcErrorKind): Json | undefined => {
  const reason = { type: "array", items: { type: "string" } }
  switch (kind.data) {
    case "none":
      return undefined
    case "reason":
      return { type: "object", properties: { reason }, required: ["reason"] }
    case "status":
      return {
        type: "object",
        properties: { status: { type: "integer", description: "The REST status." }, reason },
        required: ["status", "reason"]
      }
    case "rateLimit":
      return {
        type: "object",
        properties: {
          limit: { type: "integer" },
          window: { type: "string", description: "`1m0s`." },
          reset: { type: "integer", description: "End of the window, unix seconds." }
        },
        required: ["limit", "window", "reset"]
      }
  }
}

const errorMessage = (kind: RpcErrorKind): Json => {
  const data = errorData(kind)
  return {
    name: kind.name,
    title: `${kind.code} ${kind.name}`,
    summary: kind.description,
    payload: {
      type: "object",
      properties: {
        jsonrpc: { const: "2.0" },
        id: idSchema,
        method: { type: "string", description: "The request's method; absent when it had none." },
        error: {
          type: "object",
          properties: {
            code: { const: kind.code },
            message: { type: "string", enum: [...new Set(kind.messages)] },
            ...(data === undefined ? {} : { data })
          },
          required: data === undefined ? ["code", "message"] : ["code", "message", "data"]
        }
      },
      required: ["jsonrpc", "id", "error"]
    }
  }
}

/** `rfq_quote.taker` → `RfqQuoteTakerNotification`. */
export const notificationName = (channel: string) =>
  `${channel.charAt(0).toUpperCase()}${channel.slice(1).replace(/[._](.)/g, (_m, c: string) => c.toUpperCase())}Notification`

const notificationMessage = (channel: string, schemas: JsonSchemas): Json => {
  const payload = channelPayloads[channel]
  return {
    name: notificationName(channel),
    title: `${channel} notification`,
    summary: `A change on \`${channel}\` (or \`${channel}.<baseCurrency>\`), sent as \`v1/subscription\`.`,
    payload: {
      type: "object",
      properties: {
        jsonrpc: { const: "2.0" },
        method: { const: "v1/subscription" },
        params: {
          type: "object",
          properties: {
            channel: {
              type: "string",
              description: `The subscribed name: \`${channel}\` or with a base-currency suffix.`
            },
            seq: {
              type: "integer",
              minimum: 1,
              description: "Counts notifications per connection from 1, without gaps."
            },
            data:
              payload === undefined
                ? { type: "object", description: "See docs/websocket.md." }
                : schemas.of(payload)
          },
          required: ["channel", "seq", "data"]
        }
      },
      required: ["jsonrpc", "method", "params"]
    }
  }
}

const endpointMethod = (op: Endpoint, schemas: JsonSchemas): Method => {
  const input = schemas.objectOf(op.input)
  return {
    method: op.rpc,
    summary: op.summary ?? op.rpc,
    tag: tagOf(op.rpc),
    params: schemas.of(op.input),
    paramsOptional: input !== undefined && input.required.length === 0,
    result: schemas.of(op.output),
    example: op.example
  }
}

export const makeAsyncApiDocument = (operations: ReadonlyArray<Endpoint>, info: AsyncApiInfo) => {
  const schemas = makeJsonSchemas("jsonSchema7")
  const methods: Array<Method> = [
    ...sessionMethods.map((m) => ({ ...m, params: m.params(schemas), result: m.result(schemas) })),
    ...operations
      .filter((op) => !sessionMethods.some((m) => m.method === op.rpc))
      .map((op) => endpointMethod(op, schemas))
  ]
  const errors = rpcErrors()
  const rpcMessages: Record<string, Json> = {}
  const asyncOperations: Record<string, Json> = {}
  for (const m of methods) {
    const id = operationIdOf(m.method)
    rpcMessages[`${id}Request`] = requestMessage(m)
    rpcMessages[`${id}Result`] = resultMessage(m)
    asyncOperations[id] = {
      action: "receive",
      channel: rpcRef,
      title: m.method,
      summary: m.summary,
      tags: [{ name: m.tag.name }],
      messages: [messageRef("rpc", `${id}Request`)],
      reply: {
        channel: rpcRef,
        messages: [
          messageRef("rpc", `${id}Result`),
          ...errors.map((e) => messageRef("rpc", `error${e.name}`))
        ]
      }
    }
  }
  for (const e of errors) rpcMessages[`error${e.name}`] = errorMessage(e)
  const channels: Record<string, Json> = {
    rpc: {
      address: "/ws/v1",
      title: "JSON-RPC session",
      description: `Requests, their replies and errors, on one WebSocket per session (\`/ws\` is an alias). Requests of a connection are handled one at a time, in order. Close codes: ${Object.entries(
        closeCodes
      )
        .map(([code, why]) => `${code} ${why}`)
        .join("; ")}.`,
      messages: Object.fromEntries(
        Object.keys(rpcMessages).map((name) => [name, { $ref: `#/components/messages/${name}` }])
      ),
      "x-close-codes": closeCodes
    }
  }
  const notifications: Record<string, Json> = {}
  for (const channel of CHANNELS) {
    const name = notificationName(channel)
    notifications[name] = notificationMessage(channel, schemas)
    channels[channel] = {
      address: channel,
      title: channel,
      description: `Subscribe with \`v1/subscribe {"channels": ["${channel}"]}\`; \`${channel}.BTC\` narrows it to one base currency.`,
      messages: { [name]: { $ref: `#/components/messages/${name}` } }
    }
    asyncOperations[`send${name}`] = {
      action: "send",
      channel: { $ref: `#/channels/${channel}` },
      title: `${channel} notifications`,
      messages: [messageRef(channel, name)]
    }
  }
  const messages = { ...rpcMessages, ...notifications }
  return {
    asyncapi: "3.0.0",
    info: {
      title: "RFQ service: WebSocket API",
      version: info.version,
      description:
        "JSON-RPC 2.0 over WebSocket (docs/websocket.md). Every REST operation of `/v1/openapi.json` is a method with the REST input as `params` (path parameters by name) and the REST answer as `result`. Authenticate with `auth`, send `heartbeat` at least every 30 s, subscribe to channels with `v1/subscribe`. This document describes the service: it receives requests and replies, and sends notifications.",
      tags: tagsUsed(methods.map((m) => m.tag))
    },
    defaultContentType: "application/json",
    servers: {
      session: {
        host: info.host ?? "127.0.0.1:8080",
        protocol: "ws",
        pathname: "/ws/v1",
        description: "This service's WebSocket endpoint."
      }
    },
    channels,
    operations: asyncOperations,
    components: { messages, schemas: schemas.components(messages) }
  }
}

export type AsyncApiDocument = ReturnType<typeof makeAsyncApiDocument>

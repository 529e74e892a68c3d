import { Either } from "effect"
import { MAX_JSON_DEPTH, parseJson } from "../JsonBody.js"

/**
 * JSON-RPC 2.0 framing for the WebSocket session: parsing a text frame into calls, and building
 * replies and notifications. Pure; the session decides what each call does, and `ErrorTable.ts`
 * what a failed call answers.
 *
 * Every reply repeats the `method` of its request (spec: "The reply repeats the method of the
 * request") when the request named one.
 */

export type RpcId = string | number | null

export const RpcCode = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** Contract: a 401, and a call other than `auth`/`heartbeat` before authentication. */
  unauthorized: -32001,
  forbidden: -32003,
  notFound: -32004
} as const

export interface RpcError {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

/** A well-formed request; `id` is absent for a notification (which gets no reply). */
export interface RpcCall {
  readonly _tag: "Call"
  readonly id?: RpcId
  readonly method: string
  /** `undefined` when the request has no `params`. */
  readonly params: unknown
}

/** A batch element or single message that is not a valid request; it is answered with `error`. */
export interface RpcInvalid {
  readonly _tag: "Invalid"
  readonly id: RpcId
  readonly method?: string
  readonly error: RpcError
}

export type RpcEntry = RpcCall | RpcInvalid

export type RpcFrame =
  | { readonly _tag: "Single"; readonly entry: RpcEntry }
  | { readonly _tag: "Batch"; readonly entries: ReadonlyArray<RpcEntry> }
  /** The frame as a whole is refused (parse error, empty or oversized batch): one reply, id null. */
  | { readonly _tag: "Rejected"; readonly error: RpcError }

export const DEFAULT_MAX_BATCH = 100

const invalidRequest = (reason: string): RpcError => ({
  code: RpcCode.invalidRequest,
  message: "Invalid Request",
  data: { reason: [reason] }
})

const isId = (value: unknown): value is RpcId =>
  value === null || typeof value === "string" || (typeof value === "number" && Number.isFinite(value))

const entryOf = (value: unknown): RpcEntry => {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { _tag: "Invalid", id: null, error: invalidRequest("a request must be a JSON object") }
  }
  const message = value as Record<string, unknown>
  const hasId = Object.hasOwn(message, "id")
  // An id we cannot echo is replaced by null, as JSON-RPC 2.0 requires.
  const id = hasId && isId(message.id) ? message.id : null
  const method = typeof message.method === "string" ? message.method : undefined
  const invalid = (reason: string): RpcInvalid =>
    method === undefined
      ? { _tag: "Invalid", id, error: invalidRequest(reason) }
      : { _tag: "Invalid", id, method, error: invalidRequest(reason) }
  if (message.jsonrpc !== "2.0") return invalid('jsonrpc must be "2.0"')
  if (hasId && !isId(message.id)) return invalid("id must be a string, a number or null")
  if (method === undefined) return invalid("method must be a string")
  const params = message.params
  if (Object.hasOwn(message, "params") && (params === null || typeof params !== "object")) {
    return invalid("params must be an object or an array")
  }
  return hasId ? { _tag: "Call", id, method, params } : { _tag: "Call", method, params }
}

/** Parses one text frame. Never throws. */
export const parseFrame = (text: string, maxBatch: number = DEFAULT_MAX_BATCH): RpcFrame => {
  const parsed = parseJson(text)
  if (Either.isLeft(parsed)) {
    return parsed.left === "tooDeep"
      ? { _tag: "Rejected", error: invalidRequest(`nested deeper than ${MAX_JSON_DEPTH} levels`) }
      : { _tag: "Rejected", error: { code: RpcCode.parseError, message: "Parse error" } }
  }
  const value = parsed.right
  if (!Array.isArray(value)) return { _tag: "Single", entry: entryOf(value) }
  if (value.length === 0) return { _tag: "Rejected", error: invalidRequest("a batch must not be empty") }
  if (value.length > maxBatch) {
    return {
      _tag: "Rejected",
      error: invalidRequest(`a batch holds at most ${maxBatch} requests, got ${value.length}`)
    }
  }
  return { _tag: "Batch", entries: value.map(entryOf) }
}

export type RpcReply =
  | {
      readonly jsonrpc: "2.0"
      readonly id: RpcId
      readonly method?: string
      readonly result: unknown
    }
  | {
      readonly jsonrpc: "2.0"
      readonly id: RpcId
      readonly method?: string
      readonly error: RpcError
    }

export const resultReply = (id: RpcId, method: string, result: unknown): RpcReply => ({
  jsonrpc: "2.0",
  id,
  method,
  result
})

export const errorReply = (id: RpcId, method: string | undefined, error: RpcError): RpcReply =>
  method === undefined ? { jsonrpc: "2.0", id, error } : { jsonrpc: "2.0", id, method, error }

/**
 * A duration in Go's notation (`1m0s`, `30s`, `1h0m0s`, `1.5s`), the spec's form for the rate-limit
 * `window`.
 */
export const goDuration = (ms: number): string => {
  if (ms === 0) return "0s"
  if (ms < 1000) return `${ms}ms`
  const hours = Math.floor(ms / 3_600_000)
  const minutes = Math.floor((ms % 3_600_000) / 60_000)
  const seconds = (ms % 60_000) / 1000
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`
  if (minutes > 0) return `${minutes}m${seconds}s`
  return `${seconds}s`
}

/**
 * The text of `subscriptionNotification(channel, seq, data)` given the data's JSON text: what one
 * event costs per session when many sessions share its rendering.
 */
export const subscriptionNotificationText = (channel: string, seq: number, dataJson: string): string =>
  `{"jsonrpc":"2.0","method":"v1/subscription","params":{"channel":${JSON.stringify(channel)},"seq":${seq},"data":${dataJson}}}`

/** The live-channel notification of the contract. */
export const subscriptionNotification = (channel: string, seq: number, data: unknown) => ({
  jsonrpc: "2.0" as const,
  method: "v1/subscription",
  params: { channel, seq, data }
})

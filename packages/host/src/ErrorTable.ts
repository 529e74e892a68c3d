import { type ApiError, apiError, isApiError, isDatabaseUnreachable, isStaleStep } from "@rfq/engine"
import { Cause, Effect } from "effect"
import { LoginThrottled } from "./auth/LoginThrottle.js"
import type { RouteResponse } from "./Router.js"
import { goDuration, RpcCode, type RpcError } from "./ws/JsonRpc.js"

/**
 * The one error table of the host: every way a call can fail, as REST answers it (status, the
 * spec's body) and as JSON-RPC answers it (code, message, data). Errors of the catalog
 * (`ApiError`) keep their status and message on both; the rest is here:
 *
 * | failure                               | REST                            | JSON-RPC                          |
 * | ------------------------------------- | ------------------------------- | --------------------------------- |
 * | `ApiError` 400 / 401 / 403 / 404      | its status and body             | -32602 / -32001 / -32003 / -32004 |
 * | `ApiError` of any other status        | its status and body             | -32603, data {status, reason}     |
 * | database unreachable, deadline passed | 503 `database is not reachable` | -32603, data {status: 503, …}     |
 * | a step refused by its guard (stale)   | 503 `service unavailable`       | -32603, data {status: 503, …}     |
 * | any other defect                      | 500 `internal server error`     | -32603, data {status: 500, …}     |
 * | rate limit, failed-secret limit       | 429 and X-RateLimit-* headers   | -32603 `Rate limit exceeded`      |
 * | body too large, shutting down         | 413, 503                        | (the socket's own limits)         |
 * | no such method                        | 404 / 405 (the router's)        | -32601 `Method not found`         |
 * | a call before authenticating          | 401 (no or bad bearer token)    | -32001 `authentication required`  |
 *
 * REST adds the rate-limit headers in `rateLimitAround` (`App.ts`), and the token endpoints their
 * OAuth `error` (`auth/TokenRequests.ts`). A JSON-RPC frame that is not a request at all (-32700,
 * -32600) is the framing's answer (`ws/JsonRpc.ts`), given before any call runs.
 */

/** An error of the catalog as REST answers it. */
export const errorResponse = (error: ApiError): RouteResponse => ({
  status: error.status,
  body: error.toBody()
})

/** The contract's mapping of an HTTP status to a JSON-RPC code. */
export const rpcCodeOfStatus = (status: number): number => {
  switch (status) {
    case 400:
      return RpcCode.invalidParams
    case 401:
      return RpcCode.unauthorized
    case 403:
      return RpcCode.forbidden
    case 404:
      return RpcCode.notFound
    default:
      return RpcCode.internalError
  }
}

/** An error of the catalog as JSON-RPC: the REST message, with `data {status, reason}` (reason always an array). */
export const rpcErrorOf = (error: ApiError): RpcError => ({
  code: rpcCodeOfStatus(error.status),
  message: error.message,
  data: { status: error.status, reason: error.reason ?? [] }
})

export const methodNotFound = (method: string): RpcError => ({
  code: RpcCode.methodNotFound,
  message: "Method not found",
  data: { reason: [`unknown method ${JSON.stringify(method)}`] }
})

/** A call other than `auth` and `heartbeat` before the session authenticated. */
export const authenticationRequired: RpcError = {
  code: RpcCode.unauthorized,
  message: "authentication required",
  data: { status: 401, reason: [] }
}

/** Past a rate limit over JSON-RPC: the limit's numbers in `data` (REST puts them in headers). */
export const rateLimitExceeded = (limit: number, windowMs: number, reset: number): RpcError => ({
  code: RpcCode.internalError,
  message: "Rate limit exceeded",
  data: { limit, window: goDuration(windowMs), reset }
})

export const shuttingDown = (): ApiError => apiError("serviceUnavailable", "the server is shutting down")

export const payloadTooLarge = (maxBodyBytes: number): ApiError =>
  apiError("payloadTooLarge", `the limit is ${maxBodyBytes} bytes`)

/** What a JSON-RPC method may fail with before it is rendered. */
export type RpcRefusal = ApiError | RpcError | LoginThrottled

/** A refusal as JSON-RPC; too many failed secret checks is the spec's rate-limit error with the login limit's numbers. */
export const rpcErrorOfRefusal = (refusal: RpcRefusal): RpcError =>
  isApiError(refusal)
    ? rpcErrorOf(refusal)
    : refusal instanceof LoginThrottled
      ? rateLimitExceeded(refusal.decision.limit, refusal.windowMs, refusal.decision.reset)
      : refusal

/**
 * The error a failed call answers with, REST and JSON-RPC alike: the failure itself when it is one
 * the transport renders (`isAnswer`); a database that is unreachable or past its deadline 503,
 * logged as a warning; anything else (a defect, a failure its type does not admit) 500, logged as
 * an error under `logMessage`. An interruption that reaches here is not the call's own (a fiber
 * being interrupted skips its error handlers: the client left, the session or the server stopped,
 * and nobody waits for an answer); it came from something the call waited on, and the client, who
 * still waits, gets a 503 saying the outcome is unknown, over REST and JSON-RPC alike.
 */
export const answerOfCause = <E>(
  cause: Cause.Cause<unknown>,
  isAnswer: (failure: unknown) => failure is E,
  logMessage: string
): Effect.Effect<E | ApiError> => {
  if (Cause.isInterruptedOnly(cause))
    return Effect.as(
      Effect.logWarning("a call was interrupted by something it waited on", cause),
      apiError(
        "serviceUnavailable",
        "the call was cut short inside the service; read before sending it again"
      )
    )
  const failure = Cause.failureOption(cause)
  if (failure._tag === "Some" && isAnswer(failure.value)) return Effect.succeed(failure.value)
  // Another host took the RFQ over mid-command (several hosts): nothing was written; try again.
  if (isStaleStep(cause))
    return Effect.as(
      Effect.logWarning("a step was refused by its guard (the RFQ's owner changed)", cause),
      apiError("serviceUnavailable", "the RFQ moved to another host; send the request again")
    )
  return isDatabaseUnreachable(cause)
    ? Effect.as(
        Effect.logWarning("database unreachable", cause),
        apiError("serviceUnavailable", "database is not reachable")
      )
    : Effect.as(Effect.logError(logMessage, cause), apiError("internalError"))
}

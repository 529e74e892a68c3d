import { Buffer } from "node:buffer"
import { STATUS_CODES } from "node:http"
import { type ApiError, apiError, isApiError } from "@rfq/engine"
import { Cause, Effect, Exit, type Fiber, FiberId, Runtime } from "effect"
import type uWS from "uWebSockets.js"
import type { InFlight } from "./InFlight.js"
import type { RouteRequest, RouteResponse, Router } from "./Router.js"

export const MAX_BODY_BYTES = 1024 * 1024

/**
 * Runs around every request, matched or not (404, 405 included), so cross-cutting concerns such as
 * rate limits and their headers see all traffic. `next` is the routed handling.
 */
export type Around<R> = (
  request: RouteRequest,
  next: Effect.Effect<RouteResponse, ApiError, R>
) => Effect.Effect<RouteResponse, ApiError, R>

/** An `Around` that works for any environment: it adds no requirement of its own. */
export type AnyAround = <R>(
  request: RouteRequest,
  next: Effect.Effect<RouteResponse, ApiError, R>
) => Effect.Effect<RouteResponse, ApiError, R>

export interface RequestHandlerOptions<R> {
  readonly router: Router<R>
  readonly runtime: Runtime.Runtime<R>
  readonly inFlight: InFlight
  /** While true, new requests are answered 503 and their connections closed. */
  readonly isDraining: () => boolean
  readonly maxBodyBytes?: number
  readonly around?: Around<R>
}

export const errorResponse = (error: ApiError): RouteResponse => ({
  status: error.status,
  body: error.toBody()
})

const statusLine = (status: number): string => `${status} ${STATUS_CODES[status] ?? "Unknown"}`

// Node's socket errors and PostgreSQL's connection-exception class (08xxx) and shutdown codes.
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "57P01",
  "57P02",
  "57P03"
])
const UNREACHABLE_MESSAGE =
  /ECONNREFUSED|Connection terminated|connection timeout|timeout exceeded when trying to connect|terminating connection|the database system is (shutting down|starting up)/i

/**
 * Whether a failure comes from the database being unreachable (PostgreSQL stopped, restarting, or
 * its connections cut), as opposed to a bug: such a request is answered 503 at once, like
 * `/readyz`, and the client may retry. The error chain (`cause` links) of every defect is searched.
 */
export const isDatabaseUnreachable = (cause: Cause.Cause<unknown>): boolean => {
  const stack: Array<unknown> = [...Cause.defects(cause), ...Cause.failures(cause)]
  const seen = new Set<unknown>()
  while (stack.length > 0) {
    const error = stack.pop()
    if (error === null || typeof error !== "object" || seen.has(error)) continue
    seen.add(error)
    const { code, message } = error as { code?: unknown; message?: unknown }
    if (typeof code === "string" && (UNREACHABLE_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true
    if (typeof message === "string" && UNREACHABLE_MESSAGE.test(message)) return true
    stack.push((error as { cause?: unknown }).cause)
  }
  return false
}

/** The routed handling of one request, with every failure turned into the standard error body. */
const dispatch = <R>(
  options: RequestHandlerOptions<R>,
  request: RouteRequest
): Effect.Effect<RouteResponse, never, R> => {
  const requestId = requestIdOf(request)
  const routed: Effect.Effect<RouteResponse, ApiError, R> = Effect.suspend(() => {
    const match = options.router.match(request.method, request.path)
    switch (match._tag) {
      case "Found":
        return match.route.handler({ ...request, params: match.params })
      case "MethodNotAllowed":
        return Effect.fail(apiError("methodNotAllowed", `allowed: ${match.allow.join(", ")}`))
      case "MalformedPath":
        return Effect.fail(apiError("invalidRequest", "the path is not valid percent-encoding"))
      case "NotFound":
        return Effect.fail(apiError("notFound"))
    }
  })
  return (
    options.around === undefined ? routed : Effect.suspend(() => options.around!(request, routed))
  ).pipe(
    Effect.catchAll((error) =>
      // The type says ApiError; anything else reaching here is a bug, answered like a defect.
      isApiError(error) ? Effect.succeed(errorResponse(error)) : Effect.die(error)
    ),
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.failCause(cause as Cause.Cause<never>)
        : isDatabaseUnreachable(cause)
          ? Effect.logWarning("database unreachable", cause).pipe(
              Effect.as(errorResponse(apiError("serviceUnavailable", "database is not reachable")))
            )
          : Effect.logError("request failed", cause).pipe(Effect.as(errorResponse(apiError("internalError"))))
    ),
    Effect.map((response) => ({ ...response, headers: { ...response.headers, "X-Request-Id": requestId } })),
    Effect.tap((response) =>
      Effect.logDebug("request").pipe(Effect.annotateLogs({ status: response.status }))
    ),
    Effect.annotateLogs({ requestId, method: request.method, path: request.path })
  )
}

// Request ids: the client's `X-Request-Id` when it is a sane token, else this process's own.
const processTag = Math.random().toString(36).slice(2, 8)
let requestCounter = 0
const requestIdOf = (request: RouteRequest): string => {
  const given = request.headers["x-request-id"]
  return given !== undefined && /^[A-Za-z0-9._:-]{1,64}$/.test(given)
    ? given
    : `${processTag}-${(++requestCounter).toString(36)}`
}

/**
 * The uWS handler for every route. It follows the rules of uWS: `onAborted` first; everything
 * needed from `req` copied before returning (it is stack allocated); the body read with a cap;
 * every later write corked and skipped once the connection is gone; no exception ever escapes into
 * the native callback. Each request runs as one fiber on the captured runtime, interrupted when the
 * client goes away.
 */
export const makeRequestHandler = <R>(options: RequestHandlerOptions<R>) => {
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES
  const runFork = Runtime.runFork(options.runtime)

  return (res: uWS.HttpResponse, req: uWS.HttpRequest): void => {
    let aborted = false
    let responded = false
    let settled = false
    let fiber: Fiber.RuntimeFiber<RouteResponse> | undefined
    options.inFlight.begin()
    const settle = () => {
      if (settled) return
      settled = true
      options.inFlight.end()
    }

    const write = (response: RouteResponse, closeConnection = false): void => {
      if (aborted || responded) return
      responded = true
      let { status, headers = {} } = response
      let payload: string
      try {
        // `undefined` has no JSON text; it is answered as `null`.
        payload = response.text ?? JSON.stringify(response.body) ?? "null"
      } catch {
        status = 500
        headers = {}
        payload = JSON.stringify(apiError("internalError").toBody())
      }
      try {
        res.cork(() => {
          res.writeStatus(statusLine(status))
          const contentType = Object.entries(headers).find(([name]) => name.toLowerCase() === "content-type")
          res.writeHeader("content-type", contentType?.[1] ?? "application/json")
          for (const [name, value] of Object.entries(headers)) {
            if (name.toLowerCase() !== "content-type") res.writeHeader(name, value)
          }
          res.end(payload, closeConnection)
        })
      } catch {
        // The connection went away between the check and the write; nothing is left to tell.
      }
    }

    try {
      res.onAborted(() => {
        aborted = true
        // Without a handler running the request is over; otherwise the fiber's end settles it.
        if (fiber === undefined) settle()
        else fiber.unsafeInterruptAsFork(FiberId.none)
      })

      const method = req.getMethod().toUpperCase()
      const path = req.getUrl()
      const query = req.getQuery() ?? ""
      const headers: Record<string, string> = {}
      req.forEach((name, value) => {
        headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`
      })
      const remoteAddress = Buffer.from(res.getRemoteAddressAsText()).toString()

      if (options.isDraining()) {
        write(errorResponse(apiError("serviceUnavailable", "the server is shutting down")), true)
        settle()
        return
      }
      // Past the cap the answer goes out at once and nothing more is buffered. The connection is
      // not closed: closing it while the client is still sending makes the client's next write
      // fail (EPIPE/RST) before it reads the 413, so uWS reads and drops the rest of the body.
      const declared = headers["content-length"]
      if (declared !== undefined && Number(declared) > maxBodyBytes) {
        write(errorResponse(apiError("payloadTooLarge", `the limit is ${maxBodyBytes} bytes`)))
        settle()
        return
      }

      const chunks: Array<Uint8Array> = []
      let received = 0
      res.onData((chunk, isLast) => {
        try {
          if (aborted || responded) return
          received += chunk.byteLength
          if (received > maxBodyBytes) {
            // Later chunks of this body arrive here and are dropped by the check above.
            write(errorResponse(apiError("payloadTooLarge", `the limit is ${maxBodyBytes} bytes`)))
            settle()
            return
          }
          // uWS reuses the chunk's memory after this callback returns: copy it.
          chunks.push(new Uint8Array(chunk.slice(0)))
          if (!isLast) return
          const request: RouteRequest = {
            method,
            path,
            query,
            headers,
            params: {},
            body: chunks.length === 1 ? chunks[0]! : new Uint8Array(Buffer.concat(chunks)),
            remoteAddress
          }
          fiber = runFork(dispatch(options, request))
          options.inFlight.track(fiber)
          fiber.addObserver((exit) => {
            try {
              if (Exit.isSuccess(exit)) write(exit.value)
              // Interrupted with the client still there: the server is shutting down.
              else write(errorResponse(apiError("serviceUnavailable", "the server is shutting down")), true)
            } finally {
              settle()
            }
          })
        } catch (error) {
          failSafely(error)
        }
      })
    } catch (error) {
      failSafely(error)
    }

    function failSafely(error: unknown): void {
      try {
        Runtime.runSync(options.runtime)(Effect.logError("request handling failed", Cause.die(error)))
      } catch {
        // Logging must not be what throws into uWS.
      }
      write(errorResponse(apiError("internalError")), true)
      if (fiber === undefined) settle()
    }
  }
}

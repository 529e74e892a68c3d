import { Buffer } from "node:buffer"
import { STATUS_CODES } from "node:http"
import { type ApiError, apiError, isApiError, withRequestBudget } from "@rfq/engine"
import { Cause, Effect, Exit, type Fiber, FiberId, FiberRef, FiberRefs, HashMap, Runtime } from "effect"
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

const statusLines = new Map<number, string>()
const statusLine = (status: number): string => {
  let line = statusLines.get(status)
  if (line === undefined) {
    line = `${status} ${STATUS_CODES[status] ?? "Unknown"}`
    statusLines.set(status, line)
  }
  return line
}

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

/**
 * The routed handling of one request, with every failure turned into the standard error body;
 * `early` is an answer decided before routing, which replaces the route's handling.
 * This runs for every request, so it is kept to a handful of Effect operations: the request id
 * and its log annotations are set on the fiber when it is forked (see `makeRequestHandler`),
 * not with `annotateLogs` here.
 */
const dispatch = <R>(
  options: RequestHandlerOptions<R>,
  request: RouteRequest,
  early: ApiError | undefined
): Effect.Effect<RouteResponse, never, R> => {
  const match = options.router.match(request.method, request.path)
  let routed: Effect.Effect<RouteResponse, ApiError, R>
  switch (match._tag) {
    case "Found": {
      // One copy: the route's pattern for `around`, its parameters for the handler.
      const found = { ...request, route: match.route.path, params: match.params }
      request = found
      routed = Effect.suspend(() => match.route.handler(found))
      break
    }
    case "MethodNotAllowed":
      routed = Effect.fail(apiError("methodNotAllowed", `allowed: ${match.allow.join(", ")}`))
      break
    case "MalformedPath":
      routed = Effect.fail(apiError("invalidRequest", `${match.param}: is not valid percent-encoding`))
      break
    case "NotFound":
      routed = Effect.fail(apiError("notFound"))
  }
  // An answer decided before routing (413, shutting down) still goes through `around`: counted, with its headers.
  if (early !== undefined) routed = Effect.fail(early)
  // One database budget for the whole request (see the engine's `withRequestBudget`).
  return Effect.catchAllCause(
    withRequestBudget(
      options.around === undefined ? routed : Effect.suspend(() => options.around!(request, routed))
    ),
    answerFailure
  )
}

/** Any failure of a request as its answer: an ApiError as itself, an unreachable database 503, else 500. */
const answerFailure = (cause: Cause.Cause<ApiError>): Effect.Effect<RouteResponse> => {
  if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
  const failure = Cause.failureOption(cause)
  // The type says ApiError; anything else reaching here is a bug, answered like a defect.
  if (failure._tag === "Some" && isApiError(failure.value))
    return Effect.succeed(errorResponse(failure.value))
  return isDatabaseUnreachable(cause)
    ? Effect.logWarning("database unreachable", cause).pipe(
        Effect.as(errorResponse(apiError("serviceUnavailable", "database is not reachable")))
      )
    : Effect.logError("request failed", cause).pipe(Effect.as(errorResponse(apiError("internalError"))))
}

// A frozen body cannot change, so its JSON text is kept with it: the engine hands out the same
// frozen object for repeated reads of an unchanged RFQ.
const frozenJson = new WeakMap<object, string>()
const jsonOf = (body: unknown): string => {
  if (typeof body !== "object" || body === null || !Object.isFrozen(body))
    return JSON.stringify(body) ?? "null"
  let text = frozenJson.get(body)
  if (text === undefined) {
    text = JSON.stringify(body)
    frozenJson.set(body, text)
  }
  return text
}

// Request ids: the client's `X-Request-Id` when it is a sane token, else this process's own.
const processTag = Math.random().toString(36).slice(2, 8)
let requestCounter = 0
const requestIdOf = (headers: Readonly<Record<string, string>>): string => {
  const given = headers["x-request-id"]
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
    let requestId = ""
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
      let status = response.status
      let headers: Readonly<Record<string, string>> = response.headers ?? {}
      let payload: string
      try {
        // `undefined` has no JSON text; it is answered as `null`.
        payload = response.text ?? jsonOf(response.body)
      } catch {
        status = 500
        headers = {}
        payload = JSON.stringify(apiError("internalError").toBody())
      }
      try {
        res.cork(() => {
          res.writeStatus(statusLine(status))
          let contentType = "application/json"
          for (const name in headers) {
            if (name.toLowerCase() === "content-type") contentType = headers[name]!
            else res.writeHeader(name, headers[name]!)
          }
          res.writeHeader("content-type", contentType)
          res.writeHeader("X-Request-Id", requestId)
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
      requestId = requestIdOf(headers)

      /** Runs the request as one fiber; `early` answers it without its route (see `dispatch`). */
      const run = (body: Uint8Array, early?: ApiError, closeConnection = false): void => {
        const request: RouteRequest = { method, path, query, headers, params: {}, body, remoteAddress }
        // The request's log annotations are the fiber's from its start: cheaper than annotateLogs.
        const annotations = HashMap.make(
          ["requestId", requestId as unknown],
          ["method", method],
          ["path", path]
        )
        fiber = runFork(
          Effect.suspend(() => dispatch(options, request, early)),
          {
            updateRefs: (refs, fiberId) =>
              FiberRefs.updateAs(refs, {
                fiberId,
                fiberRef: FiberRef.currentLogAnnotations,
                value: annotations
              })
          }
        )
        options.inFlight.track(fiber)
        fiber.addObserver((exit) => {
          try {
            if (Exit.isSuccess(exit)) write(exit.value, closeConnection)
            // Interrupted with the client still there: the server is shutting down.
            else write(errorResponse(apiError("serviceUnavailable", "the server is shutting down")), true)
          } finally {
            settle()
          }
        })
      }
      const tooLarge = () => apiError("payloadTooLarge", `the limit is ${maxBodyBytes} bytes`)

      if (options.isDraining()) {
        run(new Uint8Array(0), apiError("serviceUnavailable", "the server is shutting down"), true)
        return
      }
      // Past the cap the answer is decided at once and nothing more is buffered. The connection is
      // not closed: closing it while the client is still sending makes the client's next write
      // fail (EPIPE/RST) before it reads the 413, so uWS reads and drops the rest of the body.
      const declared = headers["content-length"]
      if (declared !== undefined && Number(declared) > maxBodyBytes) {
        run(new Uint8Array(0), tooLarge())
        return
      }

      const chunks: Array<Uint8Array> = []
      let received = 0
      res.onData((chunk, isLast) => {
        try {
          // Once a fiber runs, later chunks (of a body past the cap) are dropped.
          if (aborted || responded || fiber !== undefined) return
          received += chunk.byteLength
          if (received > maxBodyBytes) run(new Uint8Array(0), tooLarge())
          else {
            // uWS reuses the chunk's memory after this callback returns: copy it.
            chunks.push(new Uint8Array(chunk.slice(0)))
            if (isLast) run(chunks.length === 1 ? chunks[0]! : new Uint8Array(Buffer.concat(chunks)))
          }
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

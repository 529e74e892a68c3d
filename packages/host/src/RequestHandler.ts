import { Buffer } from "node:buffer"
import { STATUS_CODES } from "node:http"
import { type ApiError, apiError } from "@rfq/engine"
import { Cause, Effect, Exit, type Fiber, FiberId, FiberRef, FiberRefs, HashMap, type Runtime } from "effect"
import type uWS from "uWebSockets.js"
import { errorResponse, payloadTooLarge, shuttingDown } from "./ErrorTable.js"
import { jsonPayloadOf } from "./JsonText.js"
import { dispatch, dispatchNow, type RouteDispatch } from "./RouteDispatch.js"
import type { RouteRequest, RouteResponse } from "./Router.js"

export const MAX_BODY_BYTES = 1024 * 1024

/**
 * Forks a request's fiber where the server tracks it until it ends: the runtime of the server's
 * `FiberSet`, so that shutdown can wait for every request in flight (`FiberSet.awaitEmpty`).
 */
export type RunRequest<R> = <A>(
  effect: Effect.Effect<A, never, R>,
  options?: Runtime.RunForkOptions
) => Fiber.RuntimeFiber<A, never>

export interface RequestHandlerOptions<R> extends RouteDispatch<R> {
  readonly runFork: RunRequest<R>
  /** While true, new requests are answered 503 and their connections closed. */
  readonly isDraining: () => boolean
  readonly maxBodyBytes?: number
}

// Status lines as bytes: uWS takes bytes as they are, where a string is converted on every call.
const statusLines = new Map<number, Uint8Array>()
const statusLine = (status: number): Uint8Array => {
  let line = statusLines.get(status)
  if (line === undefined) {
    line = Buffer.from(`${status} ${STATUS_CODES[status] ?? "Unknown"}`, "latin1")
    statusLines.set(status, line)
  }
  return line
}

// uWS hands the method over in lower case; the upper-case names of the usual ones, made once.
const upperMethods: Readonly<Record<string, string>> = {
  get: "GET",
  post: "POST",
  put: "PUT",
  delete: "DELETE",
  patch: "PATCH",
  head: "HEAD",
  options: "OPTIONS"
}
const methodOf = (lower: string): string => upperMethods[lower] ?? lower.toUpperCase()

// Request ids: the client's `X-Request-Id` when it is a sane token, else this process's own.
const processTag = Math.random().toString(36).slice(2, 8)
let requestCounter = 0
const requestIdOf = (headers: Readonly<Record<string, string>>): string => {
  const given = headers["x-request-id"]
  return given !== undefined && /^[A-Za-z0-9._:-]{1,64}$/.test(given)
    ? given
    : `${processTag}-${(++requestCounter).toString(36)}`
}

/** The whole body, or the answer decided instead of reading it (413, shutting down). */
interface Arrival {
  readonly body: Uint8Array
  readonly early?: ApiError | undefined
  readonly closeConnection?: boolean
}
const noBody = new Uint8Array(0)

/**
 * The uWS handler for every route. It follows the rules of uWS: `onAborted` first; everything
 * needed from `req` copied before returning (it is stack allocated); the body read with a cap;
 * every later write corked and skipped once the connection is gone; no exception ever escapes into
 * the native callback.
 *
 * Each request is one fiber on the server's `FiberSet` runtime, interrupted when the client goes
 * away. A request with a body is forked at its first byte, as in `@effect/platform-node`'s server,
 * so one still sending its body is in flight for the shutdown's drain. One without a body is forked
 * when uWS hands over its empty body, right after this handler returns: forked earlier, its fiber
 * would run first (the microtasks run when this native callback returns), find no body yet and
 * suspend for it, which cost a tenth of the read path's throughput.
 */
export const makeRequestHandler = <R>(options: RequestHandlerOptions<R>) => {
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES

  return (res: uWS.HttpResponse, req: uWS.HttpRequest): void => {
    let request: RouteRequest
    try {
      const headers: Record<string, string> = {}
      req.forEach((name, value) => {
        headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`
      })
      request = {
        method: methodOf(req.getMethod()),
        path: req.getUrl(),
        query: req.getQuery() ?? "",
        headers,
        params: {},
        body: noBody,
        // Read only for a request that takes the fiber path (below): uWS makes a new ArrayBuffer for
        // it, which was over a quarter of the cached read's CPU. No synchronous answer uses it.
        remoteAddress: ""
      }
    } catch (error) {
      logDefect(options, error)
      writeAnswer(res, errorResponse(apiError("internalError")), "", true)
      return
    }
    const requestId = requestIdOf(request.headers)
    const declared = request.headers["content-length"]
    const hasBody =
      declared !== undefined ? declared !== "0" : request.headers["transfer-encoding"] !== undefined

    // A request without a body that memory alone answers (a cached read) is answered here and now,
    // without a fiber (`dispatchNow`); uWS corks a synchronous answer itself. Anything else is a
    // fiber of its own.
    if (!hasBody && !options.isDraining()) {
      let answer: RouteResponse | undefined
      try {
        answer = dispatchNow(options, request)
      } catch (error) {
        logDefect(options, error)
        answer = errorResponse(apiError("internalError"))
      }
      if (answer !== undefined) {
        writeAnswer(res, answer, requestId, false)
        return
      }
    }
    let remoteAddress: string
    try {
      remoteAddress = Buffer.from(res.getRemoteAddressAsText()).toString()
    } catch (error) {
      logDefect(options, error)
      writeAnswer(res, errorResponse(apiError("internalError")), requestId, true)
      return
    }
    inFiber(options, maxBodyBytes, res, { ...request, remoteAddress }, requestId, declared, hasBody)
  }
}

const logDefect = <R>(options: RequestHandlerOptions<R>, error: unknown): void => {
  try {
    options.runFork(Effect.logError("request handling failed", Cause.die(error)))
  } catch {
    // Logging must not be what throws into uWS.
  }
}

/**
 * Writes an answer; the caller corks it unless this native callback is still running. Every header
 * goes out in one native call: each call converts its strings, and uWS writes `name: value\r\n` as
 * given, so the names and values joined by `\r\n` into the first header's value are the same bytes
 * as one call per header. (No value holds a line break: ours are numbers, media types and the
 * request id, which `requestIdOf` keeps to a safe alphabet.)
 */
const writeAnswer = (
  res: uWS.HttpResponse,
  response: RouteResponse,
  requestId: string,
  closeConnection: boolean
): void => {
  let status = response.status
  let headers: Readonly<Record<string, string>> | undefined = response.headers
  let payload: string | Uint8Array
  try {
    payload = response.text ?? jsonPayloadOf(response.body)
  } catch {
    status = 500
    headers = undefined
    payload = JSON.stringify(apiError("internalError").toBody())
  }
  res.writeStatus(statusLine(status))
  let contentType = "application/json"
  let first: string | undefined
  let rest = ""
  for (const name in headers) {
    const value = headers[name]!
    if (name.length === 12 && name.toLowerCase() === "content-type") contentType = value
    else if (first === undefined) {
      first = name
      rest = value
    } else rest += `\r\n${name}: ${value}`
  }
  if (first === undefined) res.writeHeader("content-type", `${contentType}\r\nX-Request-Id: ${requestId}`)
  else res.writeHeader(first, `${rest}\r\ncontent-type: ${contentType}\r\nX-Request-Id: ${requestId}`)
  res.end(payload, closeConnection)
}

/**
 * A request answered by its own fiber, on the server's `FiberSet` runtime, interrupted when the
 * client goes away; its body read with a cap first.
 */
const inFiber = <R>(
  options: RequestHandlerOptions<R>,
  maxBodyBytes: number,
  res: uWS.HttpResponse,
  request: RouteRequest,
  requestId: string,
  declared: string | undefined,
  hasBody: boolean
): void => {
  let aborted = false
  let responded = false
  let fiber: Fiber.RuntimeFiber<RouteResponse> | undefined
  let arrival: Arrival | undefined
  let onArrival: ((arrival: Arrival) => void) | undefined
  /** Ends the wait for the body (later chunks of a body past the cap are dropped). */
  const arrive = (next: Arrival) => {
    if (arrival !== undefined) return
    arrival = next
    if (fiber === undefined) start()
    else onArrival?.(next)
  }

  const write = (response: RouteResponse, closeConnection: boolean): void => {
    if (aborted || responded) return
    responded = true
    try {
      res.cork(() => writeAnswer(res, response, requestId, closeConnection))
    } catch {
      // The connection went away between the check and the write; nothing is left to tell.
    }
  }

  const handle = ({ body, early }: Arrival) => dispatch(options, { ...request, body }, early)
  // The request's log annotations are the fiber's from its start: cheaper than annotateLogs.
  const annotations = HashMap.make(
    ["requestId", requestId as unknown],
    ["method", request.method],
    ["path", request.path]
  )
  /** Forks the request's fiber, once the request has been read. */
  const start = () => {
    fiber = options.runFork(
      Effect.suspend(() =>
        arrival !== undefined
          ? handle(arrival)
          : Effect.flatMap(
              Effect.async<Arrival>((resume) => {
                onArrival = (next) => resume(Effect.succeed(next))
              }),
              handle
            )
      ),
      {
        updateRefs: (refs, fiberId) =>
          FiberRefs.updateAs(refs, {
            fiberId,
            fiberRef: FiberRef.currentLogAnnotations,
            value: annotations
          })
      }
    )
    fiber.addObserver((exit) => {
      if (Exit.isSuccess(exit)) write(exit.value, arrival?.closeConnection === true)
      // Interrupted with the client still there: the server is shutting down.
      else write(errorResponse(shuttingDown()), true)
    })
  }

  const failSafely = (error: unknown): void => {
    logDefect(options, error)
    write(errorResponse(apiError("internalError")), true)
    // A fiber still waiting for the body would wait for ever (and hold up the drain).
    if (arrival === undefined) fiber?.unsafeInterruptAsFork(FiberId.none)
  }

  try {
    res.onAborted(() => {
      aborted = true
      fiber?.unsafeInterruptAsFork(FiberId.none)
    })
    if (options.isDraining()) {
      arrive({ body: noBody, early: shuttingDown(), closeConnection: true })
      return
    }
    // Past the cap the answer is decided at once and nothing more is buffered. The connection is
    // not closed: closing it while the client is still sending makes the client's next write
    // fail (EPIPE/RST) before it reads the 413, so uWS reads and drops the rest of the body.
    if (declared !== undefined && Number(declared) > maxBodyBytes) {
      arrive({ body: noBody, early: payloadTooLarge(maxBodyBytes) })
      return
    }
    // A request with a body is in flight from its first byte (the drain waits for its upload); one
    // without is forked when uWS hands over its empty body, right after this handler returns, so
    // its fiber never suspends waiting for it.
    if (hasBody) start()

    const chunks: Array<Uint8Array> = []
    let received = 0
    res.onData((chunk, isLast) => {
      try {
        if (aborted || responded || arrival !== undefined) return
        received += chunk.byteLength
        if (received > maxBodyBytes) arrive({ body: noBody, early: payloadTooLarge(maxBodyBytes) })
        else {
          // uWS reuses the chunk's memory after this callback returns: copy it.
          chunks.push(new Uint8Array(chunk.slice(0)))
          if (isLast)
            arrive({ body: chunks.length === 1 ? chunks[0]! : new Uint8Array(Buffer.concat(chunks)) })
        }
      } catch (error) {
        failSafely(error)
      }
    })
  } catch (error) {
    failSafely(error)
  }
}

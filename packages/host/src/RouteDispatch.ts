import { type ApiError, apiError, isApiError, withRequestBudget } from "@rfq/engine"
import { Effect } from "effect"
import { answerOfCause, errorResponse } from "./ErrorTable.js"
import type { RouteRequest, RouteResponse, Router } from "./Router.js"

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

export interface RouteDispatch<R> {
  readonly router: Router<R>
  readonly around?: Around<R> | undefined
}

/**
 * The routed handling of one request, with every failure turned into its answer (`ErrorTable.ts`);
 * `early` is an answer decided before routing (413, shutting down), which replaces the route's
 * handling but still goes through `around`: counted, with its headers.
 * This runs for every request, so it is kept to a handful of Effect operations: the request id
 * and its log annotations are set on the fiber when it is forked (see `RequestHandler.ts`), not
 * with `annotateLogs` here.
 */
export const dispatch = <R>(
  { router, around }: RouteDispatch<R>,
  request: RouteRequest,
  early: ApiError | undefined
): Effect.Effect<RouteResponse, never, R> => {
  const match = router.match(request.method, request.path)
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
  if (early !== undefined) routed = Effect.fail(early)
  // One database budget for the whole request (see the engine's `withRequestBudget`).
  return Effect.catchAllCause(
    withRequestBudget(around === undefined ? routed : Effect.suspend(() => around(request, routed))),
    (cause) => Effect.map(answerOfCause(cause, isApiError, "request failed"), errorResponse)
  )
}

import { type ApiError, apiError, type Caller, isApiError, withRequestBudget } from "@rfq/engine"
import { Effect } from "effect"
import { answerOfCause, errorResponse } from "./ErrorTable.js"
import type { RouteRequest, RouteResponse, Router } from "./Router.js"

/**
 * The synchronous side of an `Around`, for an answer a route makes without a fiber
 * (`Route.answerNow`): the same concerns, decided at once. Undefined when it cannot decide without
 * a fiber (or `next` answered undefined); then nothing of this call counted and the request takes
 * the fiber path. The request's `remoteAddress` is empty on this path (see `AnswerNow`): a concern
 * that needs it (the rate limit of a request without a token) answers undefined.
 */
export type AroundNow = (
  request: RouteRequest,
  next: (known?: Caller) => RouteResponse | undefined
) => RouteResponse | undefined

/**
 * Runs around every request, matched or not (404, 405 included), so cross-cutting concerns such as
 * rate limits and their headers see all traffic. `next` is the routed handling. Without `now`, no
 * request is answered without a fiber.
 */
export interface Around<R> {
  (
    request: RouteRequest,
    next: Effect.Effect<RouteResponse, ApiError, R>
  ): Effect.Effect<RouteResponse, ApiError, R>
  readonly now?: AroundNow | undefined
}

/** An `Around` that works for any environment: it adds no requirement of its own. */
export interface AnyAround {
  <R>(
    request: RouteRequest,
    next: Effect.Effect<RouteResponse, ApiError, R>
  ): Effect.Effect<RouteResponse, ApiError, R>
  readonly now?: AroundNow | undefined
}

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

/**
 * The answer of a request made without a fiber, when its route can (`Route.answerNow`) and so can
 * every `around` concern (`Around.now`); undefined otherwise, having changed nothing: then the
 * request is `dispatch`ed. Only for a request without a body.
 */
export const dispatchNow = <R>(
  { router, around }: RouteDispatch<R>,
  request: RouteRequest
): RouteResponse | undefined => {
  const match = router.match(request.method, request.path)
  if (match._tag !== "Found") return undefined
  const answerNow = match.route.answerNow
  if (answerNow === undefined) return undefined
  const found = { ...request, route: match.route.path, params: match.params }
  if (around === undefined) return answerNow(found)
  return around.now === undefined ? undefined : around.now(found, (known) => answerNow(found, known))
}

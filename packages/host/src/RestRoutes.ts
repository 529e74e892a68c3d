import { type ApiError, apiError, type Caller, decodeRequest, type EngineService } from "@rfq/engine"
import { Effect } from "effect"
import type { Access, Operation } from "./Operations.js"
import { MAX_JSON_DEPTH, nestedDeeperThan } from "./JsonDepth.js"
import { type Route, type RouteRequest, type RouteResponse, route } from "./Router.js"

/** How the REST layer learns who calls: the auth module provides it. */
export interface Authenticator<C extends Caller = Caller> {
  /** Cheap for a token verified before: the auth module answers it from its caches. */
  readonly authenticate: (authorization: string | undefined) => Effect.Effect<C, ApiError>
  readonly authorize: (caller: C, access: Access) => Effect.Effect<void, ApiError>
}

const utf8 = new TextDecoder("utf-8", { fatal: true })

/** The JSON body as an object; empty means `{}`. Anything else is a 400 with the standard body. */
export const parseJsonBody = (body: Uint8Array): Effect.Effect<Record<string, unknown>, ApiError> =>
  Effect.suspend(() => {
    if (body.length === 0) return Effect.succeed({})
    let text: string
    try {
      text = utf8.decode(body)
    } catch {
      return Effect.fail(apiError("invalidRequest", "body: not valid UTF-8"))
    }
    if (text.trim() === "") return Effect.succeed({})
    if (nestedDeeperThan(text)) {
      return Effect.fail(apiError("invalidRequest", `body: nested deeper than ${MAX_JSON_DEPTH} levels`))
    }
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      return Effect.fail(apiError("invalidRequest", "body: malformed JSON"))
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      return Effect.fail(apiError("invalidRequest", "body: must be a JSON object"))
    }
    return Effect.succeed(value as Record<string, unknown>)
  })

/** Query parameters: a repeated key becomes an array (the schemas say which fields take one). */
export const parseQuery = (query: string): Record<string, string | Array<string>> => {
  const out: Record<string, string | Array<string>> = Object.create(null)
  for (const [key, value] of new URLSearchParams(query)) {
    const previous = out[key]
    out[key] =
      previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value]
  }
  return out
}

/**
 * One route per operation: authenticate, authorize, decode (path parameters win over the body or
 * query: `POST /rfq/{id}` takes its id from the path), call the engine, answer 200. No span
 * per request: on a read served from memory it would cost more than the read (the engine's write
 * operations have their own spans).
 */
export const restRoutes = <C extends Caller>(
  operations: ReadonlyArray<Operation>,
  engine: EngineService,
  auth: Authenticator<C>
): ReadonlyArray<Route<never>> =>
  operations.map((op) => {
    const serve = (caller: C, request: RouteRequest): Effect.Effect<RouteResponse, ApiError> =>
      Effect.flatMap(auth.authorize(caller, op.access), () => {
        const raw =
          op.from === "query"
            ? { ...parseQuery(request.query), ...request.params }
            : op.from === "none"
              ? request.params
              : undefined
        const input =
          raw === undefined
            ? Effect.flatMap(parseJsonBody(request.body), (body) =>
                decodeRequest(op.input, { ...body, ...request.params })
              )
            : decodeRequest(op.input, raw)
        return Effect.flatMap(input, (decoded) =>
          Effect.map(op.run(engine, caller, decoded), (body): RouteResponse => ({ status: 200, body }))
        )
      })
    return route(op.method, op.path, (request) =>
      Effect.flatMap(auth.authenticate(request.headers.authorization), (caller) => serve(caller, request))
    )
  })

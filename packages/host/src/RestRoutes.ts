import { type ApiError, apiError, type Caller, decodeRequest, type EngineService } from "@rfq/engine"
import { Effect } from "effect"
import type { Access, Operation } from "./Operations.js"
import { type Route, type RouteRequest, route } from "./Router.js"

/** How the REST layer learns who calls: the auth module provides it. */
export interface Authenticator<C extends Caller = Caller> {
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

/** Path parameters win over the body or query: `POST /rfq/{id}` takes its id from the path. */
const inputOf = (op: Operation, request: RouteRequest) =>
  Effect.gen(function* () {
    const from =
      op.from === "body"
        ? yield* parseJsonBody(request.body)
        : op.from === "query"
          ? parseQuery(request.query)
          : {}
    return { ...from, ...request.params }
  })

/** One route per operation: authenticate, authorize, decode, call the engine, answer 200. */
export const restRoutes = <C extends Caller>(
  operations: ReadonlyArray<Operation>,
  engine: EngineService,
  auth: Authenticator<C>
): ReadonlyArray<Route<never>> =>
  operations.map((op) =>
    route(op.method, op.path, (request) =>
      Effect.gen(function* () {
        const caller = yield* auth.authenticate(request.headers.authorization)
        yield* auth.authorize(caller, op.access)
        const input = yield* decodeRequest(op.input, yield* inputOf(op, request))
        const body = yield* op.run(engine, caller, input)
        return { status: 200, body }
      }).pipe(Effect.withSpan(`REST ${op.method} ${op.path}`))
    )
  )

import type { ApiError, Caller, EngineService } from "@rfq/engine"
import { Effect, Either } from "effect"
import { type RawInput, runOperation } from "./CallPipeline.js"
import { type JsonObjectRules, MAX_JSON_DEPTH, parseJsonObject } from "./JsonBody.js"
import type { Operation } from "./Operations.js"
import { type Route, type RouteRequest, type RouteResponse, route } from "./Router.js"

/** How the REST layer learns who calls: the auth module provides it. */
export interface Authenticator<C extends Caller = Caller> {
  /** Cheap for a token verified before: the auth module answers it from its caches. */
  readonly authenticate: (authorization: string | undefined) => Effect.Effect<C, ApiError>
}

const restBodyRules: JsonObjectRules = {
  emptyIsObject: true,
  reasons: {
    notUtf8: "body: not valid UTF-8",
    tooDeep: `body: nested deeper than ${MAX_JSON_DEPTH} levels`,
    malformed: "body: malformed JSON",
    notAnObject: "body: must be a JSON object"
  }
}

/** The JSON body as an object; empty means `{}`. Anything else is a 400 with the standard body. */
export const parseJsonBody = (body: Uint8Array): Either.Either<Record<string, unknown>, ApiError> =>
  parseJsonObject(body, restBodyRules)

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

/** The operation's raw input: path parameters win over the body or query (`POST /rfq/{id}` takes its id from the path). */
const restInput = (op: Operation, request: RouteRequest): RawInput =>
  op.from === "query"
    ? () => Either.right({ ...parseQuery(request.query), ...request.params })
    : op.from === "none"
      ? () => Either.right(request.params)
      : () => Either.map(parseJsonBody(request.body), (body) => ({ ...body, ...request.params }))

/**
 * One route per operation: authenticate, then the call pipeline (`CallPipeline.ts`); the rate
 * limit runs around every request and failures are answered from `ErrorTable.ts`. No span per
 * request: on a read served from memory it would cost more than the read (the engine's write
 * operations have their own spans).
 */
export const restRoutes = <C extends Caller>(
  operations: ReadonlyArray<Operation>,
  engine: EngineService,
  auth: Authenticator<C>
): ReadonlyArray<Route<never>> =>
  operations.map((op) =>
    route(op.method, op.path, (request) =>
      Effect.flatMap(auth.authenticate(request.headers.authorization), (caller) =>
        Effect.map(
          runOperation(op, engine, caller, restInput(op, request)),
          (body): RouteResponse => ({ status: 200, body })
        )
      )
    )
  )

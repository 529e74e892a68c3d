import { type ApiError, type Caller, decodeRequestEither, type EngineService } from "@rfq/engine"
import { Effect, Either } from "effect"
import { type RawInput, runOperation, runOperationNow } from "./CallPipeline.js"
import { errorResponse } from "./ErrorTable.js"
import { type JsonObjectRules, MAX_JSON_DEPTH, parseJsonObject } from "./JsonBody.js"
import type { Operation } from "./Operations.js"
import type { OwnerHints } from "./OwnerHints.js"
import { type Route, type RouteRequest, type RouteResponse, route } from "./Router.js"

/** How the REST layer learns who calls: the auth module provides it. */
export interface Authenticator<C extends Caller = Caller> {
  /** Cheap for a token verified before: the auth module answers it from its caches. */
  readonly authenticate: (authorization: string | undefined) => Effect.Effect<C, ApiError>
  /** The caller of a token verified before and still standing, from the caches alone; else undefined. */
  readonly knownCaller?: (authorization: string | undefined, now: number) => C | undefined
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

/** A request's raw input; with `kept` (a host giving hints), what it read is kept there too. */
const inputOf = (op: Operation, request: RouteRequest, kept: { raw?: unknown } | undefined): RawInput => {
  const input = restInput(op, request)
  if (kept === undefined) return input
  return () => {
    const read = input()
    if (Either.isRight(read)) kept.raw = read.right
    return read
  }
}

/** A successful answer, with the owner's hints when the host gives any. */
const answered = (body: unknown, hints: OwnerHints | undefined, raw: unknown): RouteResponse => {
  const headers = hints?.(raw, body)
  return headers === undefined ? { status: 200, body } : { status: 200, body, headers }
}

/** How many decoded path parameters an operation remembers before it starts over. */
const REMEMBERED_DECODES = 4096
/** The longest parameter text an operation remembers the decoding of. */
const REMEMBERED_DECODE_LENGTH = 64

/**
 * The schema decode of an operation whose whole input is its path parameters (`GET /v1/rfq/{id}`),
 * remembering its answers by the parameters' text: the same text always decodes the same way, and
 * a read then skips the schema. Bounded: past `REMEMBERED_DECODES` texts it starts over.
 */
const rememberedDecode = (op: Operation) => {
  const remembered = new Map<string, Either.Either<unknown, ApiError>>()
  return (raw: unknown): Either.Either<unknown, ApiError> => {
    // Parameters are percent-decoded, so any character may be in one: several are keyed as JSON.
    const values = Object.values(raw as Record<string, string>)
    const key = values.length === 1 ? values[0]! : JSON.stringify(values)
    const known = remembered.get(key)
    if (known !== undefined) return known
    const answer = decodeRequestEither(op.input, raw)
    // Long texts (hostile ones) are decoded every time rather than kept.
    if (key.length <= REMEMBERED_DECODE_LENGTH) {
      if (remembered.size >= REMEMBERED_DECODES) remembered.clear()
      remembered.set(key, answer)
    }
    return answer
  }
}

/**
 * One route per operation: authenticate, then the call pipeline (`CallPipeline.ts`); the rate
 * limit runs around every request and failures are answered from `ErrorTable.ts`. No span per
 * request: on a read served from memory it would cost more than the read (the engine's write
 * operations have their own spans).
 *
 * An operation that can answer from memory (`peek`) also answers without a fiber when the token's
 * caller is in the caches (`Route.answerNow`): the same pipeline, synchronously. `now` is the
 * clock the rate limits and token checks read. `hints`, on a host among several, adds to each
 * answer the headers that let the balancer send the next request about its RFQ to the owner.
 */
export const restRoutes = <C extends Caller>(
  operations: ReadonlyArray<Operation>,
  engine: EngineService,
  auth: Authenticator<C>,
  now: () => number = Date.now,
  hints?: OwnerHints
): ReadonlyArray<Route<never>> =>
  operations.map((op) => {
    const knownCaller = auth.knownCaller
    const decode = op.from === "none" ? rememberedDecode(op) : undefined
    const answerNow =
      op.peek === undefined || knownCaller === undefined
        ? undefined
        : (request: RouteRequest, known?: Caller): RouteResponse | undefined => {
            // The rate limit's `around` found the caller in the same caches a moment ago.
            const caller = (known as C | undefined) ?? knownCaller(request.headers.authorization, now())
            if (caller === undefined) return undefined
            const kept: { raw?: unknown } | undefined = hints === undefined ? undefined : {}
            const answer = runOperationNow(op, engine, caller, inputOf(op, request, kept), decode)
            return answer === undefined
              ? undefined
              : Either.isRight(answer)
                ? answered(answer.right, hints, kept?.raw)
                : errorResponse(answer.left)
          }
    return route(
      op.method,
      op.path,
      (request) =>
        Effect.flatMap(auth.authenticate(request.headers.authorization), (caller) => {
          const kept: { raw?: unknown } | undefined = hints === undefined ? undefined : {}
          return Effect.map(runOperation(op, engine, caller, inputOf(op, request, kept)), (body) =>
            answered(body, hints, kept?.raw)
          )
        }),
      answerNow
    )
  })

import type { ApiError, Caller } from "@rfq/engine"
import type { Effect } from "effect"

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE" | "PATCH"

/** Everything a handler may know about a request, copied out of uWS before the first await. */
export interface RouteRequest {
  /** Upper case, as sent. */
  readonly method: string
  /** The path without the query string, as sent (not percent-decoded). */
  readonly path: string
  /** The raw query string without the leading `?`; parse it with `URLSearchParams`. */
  readonly query: string
  /** Lower-case names; repeated headers are joined with ", ". */
  readonly headers: Readonly<Record<string, string>>
  /** Values of the route's `{name}` segments, percent-decoded. */
  readonly params: Readonly<Record<string, string>>
  readonly body: Uint8Array
  readonly remoteAddress: string
  /**
   * The pattern of the route the request matched (`/v1/rfq/{id}`), set before `around` runs so
   * cross-cutting code (metrics) need not route again; absent when nothing matched.
   */
  readonly route?: string
}

export interface RouteResponse {
  readonly status: number
  /** Serialized as JSON. */
  readonly body: unknown
  /** A ready-made payload (e.g. Prometheus text or HTML) sent instead of `body`, with its content-type header. */
  readonly text?: string
  readonly headers?: Readonly<Record<string, string>>
}

export type RouteHandler<R> = (request: RouteRequest) => Effect.Effect<RouteResponse, ApiError, R>

/**
 * The handler's answer made synchronously, without a fiber, when everything it needs is in memory
 * (a read of a cached token's caller and an RFQ held here); undefined when only `handler` can
 * answer. It must answer exactly what `handler` would, and change nothing when it answers undefined.
 * `known` is the caller of the request's token when an `around` already found it in the caches.
 * The request's `remoteAddress` is empty here: reading it from uWS costs more than the read, and no
 * answer made without a fiber depends on it (a request without a token takes the fiber path).
 */
export type AnswerNow = (request: RouteRequest, known?: Caller) => RouteResponse | undefined

export interface Route<R> {
  readonly method: HttpMethod
  /** Segments separated by "/", each literal or a `{name}` parameter, e.g. `/v1/rfq/{id}/quote`. */
  readonly path: string
  readonly handler: RouteHandler<R>
  readonly answerNow?: AnswerNow | undefined
}

export const route = <R>(
  method: HttpMethod,
  path: string,
  handler: RouteHandler<R>,
  answerNow?: AnswerNow
): Route<R> => (answerNow === undefined ? { method, path, handler } : { method, path, handler, answerNow })

export type RouteMatch<R> =
  | { readonly _tag: "Found"; readonly route: Route<R>; readonly params: Readonly<Record<string, string>> }
  | { readonly _tag: "MethodNotAllowed"; readonly allow: ReadonlyArray<HttpMethod> }
  | { readonly _tag: "NotFound" }
  /** A parameter segment that is not valid percent-encoding (UTF-8); `param` names it. */
  | { readonly _tag: "MalformedPath"; readonly param: string }

export interface Router<R> {
  readonly routes: ReadonlyArray<Route<R>>
  readonly match: (method: string, path: string) => RouteMatch<R>
}

type Segment = { readonly literal: string } | { readonly param: string }

interface CompiledRoute<R> {
  readonly route: Route<R>
  readonly segments: ReadonlyArray<Segment>
}

const compile = <R>(route: Route<R>): CompiledRoute<R> => {
  if (!route.path.startsWith("/")) throw new Error(`route path must start with "/": ${route.path}`)
  const segments = route.path
    .slice(1)
    .split("/")
    .map((part): Segment => {
      const param = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(part)
      if (param !== null) return { param: param[1]! }
      if (part.includes("{") || part.includes("}")) throw new Error(`malformed route segment: ${route.path}`)
      return { literal: part }
    })
  return { route, segments }
}

/**
 * Literal segments beat parameters, position by position from the left, so `/v1/rfq/quotes`
 * wins over `/v1/rfq/{id}` whatever the order of the table.
 */
const moreSpecific = (a: ReadonlyArray<Segment>, b: ReadonlyArray<Segment>): boolean => {
  for (let i = 0; i < a.length; i++) {
    const aLiteral = "literal" in a[i]!
    const bLiteral = "literal" in b[i]!
    if (aLiteral !== bLiteral) return aLiteral
  }
  return false
}

const sameShape = (a: ReadonlyArray<Segment>, b: ReadonlyArray<Segment>): boolean =>
  a.length === b.length &&
  a.every((segment, i) => {
    const other = b[i]!
    return "literal" in segment ? "literal" in other && other.literal === segment.literal : "param" in other
  })

/** How many paths per method a router remembers the match of before it starts over. */
const REMEMBERED_MATCHES = 4096
/** The longest path a router remembers the match of. */
const REMEMBERED_PATH_LENGTH = 128

/** Builds a router over a route table; a duplicate method and path is a programming error. */
export const makeRouter = <R>(routes: ReadonlyArray<Route<R>>): Router<R> => {
  const compiled = routes.map(compile)
  compiled.forEach((a, i) => {
    const clash = compiled.findIndex(
      (b, j) => j < i && b.route.method === a.route.method && sameShape(a.segments, b.segments)
    )
    if (clash !== -1) throw new Error(`duplicate route ${a.route.method} ${a.route.path}`)
  })

  // Candidates by segment count: a path is only ever compared with routes of its own length.
  const byLength = new Map<number, Array<CompiledRoute<R>>>()
  for (const candidate of compiled) {
    const group = byLength.get(candidate.segments.length) ?? []
    group.push(candidate)
    byLength.set(candidate.segments.length, group)
  }
  const fits = (segments: ReadonlyArray<Segment>, parts: ReadonlyArray<string>): boolean => {
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i]!
      if ("literal" in segment ? segment.literal !== parts[i] : parts[i] === "") return false
    }
    return true
  }

  // The matches of recent paths, by method and path: a read of one RFQ again and again is matched
  // once. Matches are frozen (their params are shared); bounded, it starts over when full.
  const recent = new Map<string, Map<string, RouteMatch<R>>>()
  const match = (method: string, path: string): RouteMatch<R> => {
    let byPath = recent.get(method)
    if (byPath === undefined) {
      // Any method token reaches here: only the methods routes use are remembered.
      if (!routes.some((r) => r.method === method)) return matchNow(method, path)
      byPath = new Map()
      recent.set(method, byPath)
    }
    const remembered = byPath.get(path)
    if (remembered !== undefined) return remembered
    const found = matchNow(method, path)
    // Only routed paths of a sane length are kept: a client sending long or unknown paths at
    // will must not fill the memory with them.
    if (found._tag === "Found" && path.length <= REMEMBERED_PATH_LENGTH) {
      Object.freeze(found.params)
      if (byPath.size >= REMEMBERED_MATCHES) byPath.clear()
      byPath.set(path, found)
    }
    return found
  }

  const matchNow = (method: string, path: string): RouteMatch<R> => {
    if (!path.startsWith("/")) return { _tag: "NotFound" }
    const parts = path.slice(1).split("/")
    const group = byLength.get(parts.length)
    if (group === undefined) return { _tag: "NotFound" }
    let best: CompiledRoute<R> | undefined
    for (const candidate of group) {
      if (candidate.route.method !== method || !fits(candidate.segments, parts)) continue
      if (best === undefined || moreSpecific(candidate.segments, best.segments)) best = candidate
    }
    if (best === undefined) {
      const allow = new Set<HttpMethod>()
      for (const candidate of group) if (fits(candidate.segments, parts)) allow.add(candidate.route.method)
      return allow.size === 0 ? { _tag: "NotFound" } : { _tag: "MethodNotAllowed", allow: [...allow] }
    }
    const params: Record<string, string> = {}
    for (let i = 0; i < best.segments.length; i++) {
      const segment = best.segments[i]!
      if (!("param" in segment)) continue
      const part = parts[i]!
      try {
        params[segment.param] = part.includes("%") ? decodeURIComponent(part) : part
      } catch {
        return { _tag: "MalformedPath", param: segment.param }
      }
    }
    return { _tag: "Found", route: best.route, params }
  }

  return { routes, match }
}

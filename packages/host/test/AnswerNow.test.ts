import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { appAround, appLayer, appRoutes } from "../src/App.js"
import { operations } from "../src/Operations.js"
import { healthRoutes } from "../src/HealthRoutes.js"
import { serve } from "../src/HttpServer.js"
import type { AnyAround } from "../src/RouteDispatch.js"
import {
  callSpread,
  legPricesParams,
  oauthToken,
  promise,
  quoteBodyOf,
  testHostInput
} from "./ws/hostHarness.js"

/**
 * A read memory alone answers is answered without a fiber (`Route.answerNow`, `Around.now`), and
 * answers exactly what the fiber path answers. Two servers over one application: one as the host
 * runs (both paths), one whose `around` has no synchronous side (every request a fiber) and whose
 * operations have no `peek` (every answer the engine's `run`, which the pipeline would otherwise
 * also skip for a read memory answers: `CallPipeline.ts#startOperation`). Every
 * answer of the first must equal the second's, headers included, and the cached reads must not
 * have reached the fiber path.
 */

const LIMIT = 40

const startPair = Effect.gen(function* () {
  const input = yield* testHostInput([["RATE_LIMIT_PER_MINUTE", String(LIMIT)]])
  const context = yield* Layer.build(appLayer(input)).pipe(Effect.orDie)
  const routes = [...healthRoutes(Effect.void), ...(yield* appRoutes(input).pipe(Effect.provide(context)))]
  // The other server's operations have no `peek` at all: every answer of theirs is `run`'s.
  const withoutPeek = operations.map(({ peek: _peek, ...op }) => op)
  const runRoutes = [
    ...healthRoutes(Effect.void),
    ...(yield* appRoutes(input, withoutPeek).pipe(Effect.provide(context)))
  ]
  const fast = yield* appAround(input).pipe(Effect.provide(context))
  const slow = yield* appAround(input).pipe(Effect.provide(context))
  assert.isDefined(fast.now)
  let fibers = 0
  const counted: AnyAround = Object.assign(
    <R>(...args: Parameters<AnyAround>) => {
      fibers++
      return fast<R>(...(args as [never, never]))
    },
    { now: fast.now }
  )
  const withoutNow: AnyAround = (request, next) => slow(request, next)
  const both = yield* Effect.all([
    serve({ host: "127.0.0.1", port: 0, routes, around: counted }),
    serve({ host: "127.0.0.1", port: 0, routes: runRoutes, around: withoutNow })
  ]).pipe(Effect.provide(context), Effect.orDie)
  return { fast: both[0].url, slow: both[1].url, fibers: () => fibers }
})

interface Answer {
  readonly status: number
  readonly body: unknown
  readonly headers: Record<string, string | null>
  /** Apart: the two servers count separately, and only the viewer's requests are the same on both. */
  readonly remaining: string | null
}

const get = (url: string, path: string, authorization?: string) =>
  promise(async (): Promise<Answer> => {
    const response = await fetch(`${url}${path}`, {
      headers: authorization === undefined ? {} : { authorization }
    })
    const headers: Record<string, string | null> = {}
    for (const name of ["content-type", "x-ratelimit-limit", "x-ratelimit-reset"])
      headers[name] = response.headers.get(name)
    const remaining = response.headers.get("x-ratelimit-remaining")
    return { status: response.status, body: await response.json(), headers, remaining }
  })

const send = (url: string, token: string, method: string, path: string, body: unknown) =>
  promise(async () => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    return { status: response.status, body: (await response.json()) as any }
  })

describe("reads answered without a fiber", () => {
  it.scoped("the taker's quote book answers as the fiber path does, for every desk and state", () =>
    Effect.gen(function* () {
      const pair = yield* startPair
      const tokenOf = (clientId: string) => Effect.map(oauthToken(pair.fast, clientId), (t) => t.access_token)
      const [taker, viewer, invited, outsider] = yield* Effect.forEach(
        ["demo-taker", "demo-viewer", "demo-maker-1", "demo-maker-3"],
        tokenOf
      )
      const open = yield* send(pair.fast, taker!, "POST", "/v1/rfq/0", callSpread(["maker-1"]))
      const rfqId = open.body.rfqId as number
      const rfq = (yield* get(pair.fast, `/v1/rfq/${rfqId}`, `Bearer ${invited}`)).body as any
      const priced = yield* send(
        pair.fast,
        invited!,
        "POST",
        "/v1/rfq/leg-prices",
        legPricesParams(rfqId, rfq)
      )
      const quoted = yield* send(
        pair.fast,
        invited!,
        "POST",
        "/v1/rfq/quote",
        quoteBodyOf(rfqId, rfq, priced.body, "sell")
      )
      assert.strictEqual(quoted.status, 200, JSON.stringify(quoted.body))
      const cancelled = yield* send(pair.fast, taker!, "POST", "/v1/rfq/0", callSpread(["maker-1"]))
      yield* send(pair.fast, taker!, "POST", "/v1/rfq/cancel", { rfqId: cancelled.body.rfqId })

      // Each token's first request verifies it (a fiber); from then on it is in the caches.
      for (const token of [taker, viewer, invited, outsider]) {
        yield* get(pair.fast, "/v1/rfq/quotes", `Bearer ${token}`)
        yield* get(pair.slow, "/v1/rfq/quotes", `Bearer ${token}`)
      }
      const before = pair.fibers()
      const statuses: Array<number> = []
      for (const [id, token] of [
        [rfqId, taker],
        [rfqId, viewer],
        [rfqId, invited],
        [rfqId, outsider],
        [cancelled.body.rfqId, taker],
        [cancelled.body.rfqId, invited]
      ] as const) {
        const path = `/v1/rfq/${id}/quote`
        const fast = yield* get(pair.fast, path, `Bearer ${token}`)
        const slow = yield* get(pair.slow, path, `Bearer ${token}`)
        assert.deepStrictEqual({ ...fast, remaining: null }, { ...slow, remaining: null }, path)
        statuses.push(fast.status)
      }
      assert.strictEqual(pair.fibers(), before, "a cached quote book took the fiber path")
      // The taker's desk (trader and viewer) reads the book; a maker, invited or not, is told nothing.
      assert.deepStrictEqual(statuses, [200, 200, 404, 404, 200, 404])
      const book = (yield* get(pair.fast, `/v1/rfq/${rfqId}/quote`, `Bearer ${taker}`)).body
      assert.include(JSON.stringify(book), String(quoted.body.rfqQuoteId))
    })
  )

  it.scoped(
    "answer as the fiber path does: views per desk, 4xx, unknown ids, bad tokens, the rate limit",
    () =>
      Effect.gen(function* () {
        const pair = yield* startPair
        const token = (clientId: string) =>
          Effect.map(oauthToken(pair.fast, clientId), (t) => `Bearer ${t.access_token}`)
        const taker = yield* token("demo-taker")
        const viewer = yield* token("demo-viewer")
        const invited = yield* token("demo-maker-1")
        const outsider = yield* token("demo-maker-3")
        const bare = (bearer: string) => bearer.slice("Bearer ".length)

        const open = yield* send(pair.fast, bare(taker), "POST", "/v1/rfq/0", callSpread(["maker-1"]))
        assert.strictEqual(open.status, 200, JSON.stringify(open.body))
        const cancelled = yield* send(pair.fast, bare(taker), "POST", "/v1/rfq/0", callSpread(["maker-1"]))
        const cancel = yield* send(pair.fast, bare(taker), "POST", "/v1/rfq/cancel", {
          rfqId: cancelled.body.rfqId
        })
        assert.strictEqual(cancel.status, 200, JSON.stringify(cancel.body))
        const deleted = yield* send(pair.fast, bare(taker), "POST", "/v1/rfq/0", callSpread(["maker-1"]))
        yield* send(pair.fast, bare(taker), "POST", "/v1/rfq/cancel", { rfqId: deleted.body.rfqId })
        const deletion = yield* promise(() =>
          fetch(`${pair.fast}/v1/rfq/${deleted.body.rfqId}`, {
            method: "DELETE",
            headers: { authorization: taker }
          })
        )
        assert.strictEqual(deletion.status, 200)

        // Each token's first request verifies it (a fiber); from then on it is in the caches.
        for (const bearer of [taker, viewer, invited, outsider]) {
          yield* get(pair.fast, "/v1/rfq/quotes", bearer)
          yield* get(pair.slow, "/v1/rfq/quotes", bearer)
        }
        const cached: Array<[string, string]> = [
          [`/v1/rfq/${open.body.rfqId}`, taker],
          [`/v1/rfq/${open.body.rfqId}`, viewer],
          [`/v1/rfq/${open.body.rfqId}`, invited],
          [`/v1/rfq/${open.body.rfqId}`, outsider],
          [`/v1/rfq/${cancelled.body.rfqId}`, taker],
          [`/v1/rfq/${cancelled.body.rfqId}`, invited],
          [`/v1/rfq/${deleted.body.rfqId}`, taker],
          [`/v1/rfq/${deleted.body.rfqId}`, invited],
          ["/v1/rfq/abc", taker],
          ["/v1/rfq/-1", taker],
          ["/v1/rfq/1.5", invited],
          [`/v1/rfq/${"9".repeat(40)}`, taker]
        ]
        // Not answered from memory: an id not held here, a path that does not decode, a token not
        // in the caches (or none).
        const other: Array<[string, string | undefined]> = [
          ["/v1/rfq/987654", taker],
          ["/v1/rfq/%E0%A4%A", taker],
          [`/v1/rfq/${open.body.rfqId}`, undefined],
          [`/v1/rfq/${open.body.rfqId}`, "Bearer not-a-token"],
          [`/v1/rfq/${open.body.rfqId}`, `${taker}, ${taker}`],
          [`/v1/rfq/${open.body.rfqId}`, taker.toLowerCase()]
        ]
        const before = pair.fibers()
        const statuses: Array<number> = []
        for (const [path, bearer] of cached) {
          const fast = yield* get(pair.fast, path, bearer)
          const slow = yield* get(pair.slow, path, bearer)
          assert.deepStrictEqual(
            { ...fast, remaining: null },
            { ...slow, remaining: null },
            `${path} as ${bearer.slice(0, 20)}`
          )
          statuses.push(fast.status)
        }
        assert.strictEqual(pair.fibers(), before, "a cached read took the fiber path")
        // The cases above are not all 200s: refusals are answered without a fiber too.
        assert.deepStrictEqual(statuses, [200, 200, 200, 404, 200, 200, 404, 404, 400, 400, 400, 400])
        const views = yield* Effect.forEach([taker, invited], (bearer) =>
          get(pair.fast, `/v1/rfq/${open.body.rfqId}`, bearer)
        )
        assert.notDeepEqual(views[0]!.body, views[1]!.body, "the taker's and a maker's views differ")

        for (const [path, bearer] of other) {
          const fast = yield* get(pair.fast, path, bearer)
          const slow = yield* get(pair.slow, path, bearer)
          assert.deepStrictEqual(
            { ...fast, remaining: null },
            { ...slow, remaining: null },
            `${path} as ${bearer?.slice(0, 20)}`
          )
        }

        // Counted in the metrics like any answer: 3 404s of each server in the first list, 1 in this.
        const metrics = yield* promise(() => fetch(`${pair.fast}/metrics`).then((r) => r.text()))
        assert.match(
          metrics,
          /rfq_http_requests_total\{route="\/v1\/rfq\/\{id\}",method="GET",status="404"\} 8\n/
        )

        // A refresh token replayed revokes its family: the family's access token, answered from the
        // caches a moment ago, is refused at once on both paths.
        const issued = yield* oauthToken(pair.fast, "demo-maker-2")
        const family = `Bearer ${issued.access_token}`
        const readable = `/v1/rfq/${open.body.rfqId}`
        assert.strictEqual((yield* get(pair.fast, readable, family)).status, 404)
        assert.strictEqual((yield* get(pair.fast, readable, family)).status, 404)
        const refresh = (refreshToken: string) =>
          promise(() =>
            fetch(`${pair.fast}/oauth/token`, {
              method: "POST",
              headers: { "content-type": "application/x-www-form-urlencoded" },
              body: new URLSearchParams({
                grant_type: "refresh_token",
                refresh_token: refreshToken,
                client_id: "demo-maker-2",
                client_secret: "demo-maker-2-secret"
              })
            }).then((r) => r.status)
          )
        assert.strictEqual(yield* refresh(issued.refresh_token), 200)
        assert.strictEqual(yield* refresh(issued.refresh_token), 401)
        const afterFast = yield* get(pair.fast, readable, family)
        const afterSlow = yield* get(pair.slow, readable, family)
        assert.strictEqual(afterFast.status, 401)
        assert.deepStrictEqual({ ...afterFast, remaining: null }, { ...afterSlow, remaining: null })

        // The viewer's requests were the same on both servers: the same budget is left on each, and
        // past the limit both answer 429 with the same headers.
        let last: Answer | undefined
        for (let i = 0; i < LIMIT; i++) {
          const fast = yield* get(pair.fast, `/v1/rfq/${open.body.rfqId}`, viewer)
          const slow = yield* get(pair.slow, `/v1/rfq/${open.body.rfqId}`, viewer)
          assert.deepStrictEqual(fast, slow)
          last = fast
        }
        assert.strictEqual(last?.status, 429)
        assert.strictEqual(last?.remaining, "0")
        assert.deepStrictEqual(last?.body, { code: 429, message: "rate limit exceeded" })
      }),
    60_000
  )
})

import * as http from "node:http"
import { assert, describe, it } from "@effect/vitest"
import { apiError } from "@rfq/engine"
import { Deferred, Effect, Exit, Fiber, Scope } from "effect"
import { healthRoutes } from "../src/HealthRoutes.js"
import { serve } from "../src/HttpServer.js"
import { MAX_BODY_BYTES } from "../src/RequestHandler.js"
import { type Route, route } from "../src/Router.js"

const request = (url: string, init?: RequestInit) =>
  Effect.promise(async () => {
    const response = await fetch(url, init)
    return {
      status: response.status,
      contentType: response.headers.get("content-type"),
      body: (await response.json()) as unknown
    }
  })

const start = (routes: ReadonlyArray<Route<never>>) => serve({ host: "127.0.0.1", port: 0, routes })

/** Sends a body in many chunks without a content-length, so only the streaming cap can stop it. */
const postChunked = (url: string, totalBytes: number) =>
  Effect.async<{ status: number; body: unknown }, Error>((resume) => {
    const req = http.request(url, { method: "POST", headers: { "transfer-encoding": "chunked" } }, (res) => {
      let text = ""
      res.on("data", (chunk) => (text += chunk))
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, body: JSON.parse(text) })))
    })
    req.on("error", (error) => resume(Effect.fail(error)))
    const chunk = Buffer.alloc(64 * 1024, 120)
    let sent = 0
    const pump = (): void => {
      while (sent < totalBytes) {
        sent += chunk.length
        if (!req.write(chunk)) return void req.once("drain", pump)
      }
      req.end()
    }
    pump()
  })

describe("health routes", () => {
  it.scopedLive("GET /healthz answers 200 {status: ok} as JSON", () =>
    Effect.gen(function* () {
      const server = yield* start(healthRoutes(Effect.void))
      const response = yield* request(`${server.url}/healthz`)
      assert.deepStrictEqual(response, {
        status: 200,
        contentType: "application/json",
        body: { status: "ok" }
      })
    })
  )

  it.scopedLive("GET /readyz answers 200 {status: ready} when the probe succeeds", () =>
    Effect.gen(function* () {
      const server = yield* start(healthRoutes(Effect.void))
      const response = yield* request(`${server.url}/readyz`)
      assert.deepStrictEqual(response.status, 200)
      assert.deepStrictEqual(response.body, { status: "ready" })
    })
  )

  it.scopedLive("GET /readyz answers 503 with the standard body when the probe fails or dies", () =>
    Effect.gen(function* () {
      const expected = { code: 503, message: "service unavailable", reason: ["database is not reachable"] }
      const failing = yield* start(healthRoutes(Effect.fail("connection refused")))
      const dying = yield* start(healthRoutes(Effect.die(new Error("socket closed"))))
      for (const server of [failing, dying]) {
        const response = yield* request(`${server.url}/readyz`)
        assert.deepStrictEqual(response.status, 503)
        assert.deepStrictEqual(response.body, expected)
      }
    })
  )
})

describe("request handling", () => {
  it.scopedLive("an unknown route is 404 and a known path with another method is 405", () =>
    Effect.gen(function* () {
      const server = yield* start(healthRoutes(Effect.void))
      const missing = yield* request(`${server.url}/nope`)
      assert.deepStrictEqual(missing, {
        status: 404,
        contentType: "application/json",
        body: { code: 404, message: "not found" }
      })
      const wrongMethod = yield* request(`${server.url}/healthz`, { method: "POST", body: "{}" })
      assert.deepStrictEqual(wrongMethod.status, 405)
      assert.deepStrictEqual(wrongMethod.body, {
        code: 405,
        message: "method not allowed",
        reason: ["allowed: GET"]
      })
    })
  )

  it.scopedLive("a handler gets decoded path parameters, the query and the body", () =>
    Effect.gen(function* () {
      const server = yield* start([
        route("POST", "/items/{id}", (req) =>
          Effect.succeed({
            status: 200,
            body: {
              id: req.params.id,
              query: req.query,
              body: new TextDecoder().decode(req.body),
              type: req.headers["x-t"]
            }
          })
        ),
        route("POST", "/items/special", () => Effect.succeed({ status: 201, body: { special: true } }))
      ])
      const echoed = yield* request(`${server.url}/items/a%20b?x=1&y=2`, {
        method: "POST",
        body: '{"k":"v"}',
        headers: { "x-t": "yes" }
      })
      assert.deepStrictEqual(echoed.body, { id: "a b", query: "x=1&y=2", body: '{"k":"v"}', type: "yes" })
      const literal = yield* request(`${server.url}/items/special`, { method: "POST" })
      assert.deepStrictEqual(literal, {
        status: 201,
        contentType: "application/json",
        body: { special: true }
      })
    })
  )

  it.scopedLive("a handler's ApiError becomes its status and standard body", () =>
    Effect.gen(function* () {
      const server = yield* start([route("GET", "/rfq", () => Effect.fail(apiError("rfqNotFound")))])
      const response = yield* request(`${server.url}/rfq`)
      assert.deepStrictEqual(response.status, 404)
      assert.deepStrictEqual(response.body, { code: 404, message: "rfq not found" })
    })
  )

  it.scopedLive("a defect or a thrown exception in a handler is a 500 and the server keeps serving", () =>
    Effect.gen(function* () {
      const server = yield* start([
        route("GET", "/dies", () => Effect.die(new Error("boom"))),
        route("GET", "/throws", () => {
          throw new Error("thrown outside Effect")
        }),
        route("GET", "/ok", () => Effect.succeed({ status: 200, body: { ok: true } }))
      ])
      for (const path of ["/dies", "/throws"]) {
        const response = yield* request(`${server.url}${path}`)
        assert.deepStrictEqual(response.status, 500)
        assert.deepStrictEqual(response.body, { code: 500, message: "internal server error" })
      }
      const after = yield* request(`${server.url}/ok`)
      assert.deepStrictEqual(after.body, { ok: true })
    })
  )

  it.scopedLive(
    "a handler interrupted from inside (not by its client or a shutdown) is a 503 with its reason",
    () =>
      Effect.gen(function* () {
        const server = yield* start([
          // It waits on a fiber something else interrupts (an owner's entity stopped under a
          // forwarded call); it was once answered "the server is shutting down".
          route("GET", "/cut", () =>
            Effect.flatMap(Effect.fork(Effect.never), (fiber) =>
              Effect.zipRight(Fiber.interrupt(fiber), Fiber.join(fiber))
            )
          ),
          route("GET", "/ok", () => Effect.succeed({ status: 200, body: { ok: true } }))
        ])
        const response = yield* request(`${server.url}/cut`)
        assert.deepStrictEqual(response.status, 503)
        assert.deepStrictEqual(response.body, {
          code: 503,
          message: "service unavailable",
          reason: ["the call was cut short inside the service; read before sending it again"]
        })
        assert.deepStrictEqual((yield* request(`${server.url}/ok`)).body, { ok: true })
      })
  )

  it.scopedLive("a body over 1 MiB is refused with 413, declared or streamed", () =>
    Effect.gen(function* () {
      const server = yield* start([
        route("POST", "/upload", (req) => Effect.succeed({ status: 200, body: req.body.length }))
      ])
      const expected = {
        code: 413,
        message: "request body too large",
        reason: [`the limit is ${MAX_BODY_BYTES} bytes`]
      }
      const declared = yield* request(`${server.url}/upload`, {
        method: "POST",
        body: new Uint8Array(MAX_BODY_BYTES + 1)
      })
      assert.deepStrictEqual(declared.status, 413)
      assert.deepStrictEqual(declared.body, expected)
      // Repeated: answering while the client still sends must reach the client every time.
      for (let i = 0; i < 5; i++) {
        const streamed = yield* postChunked(`${server.url}/upload`, 4 * MAX_BODY_BYTES)
        assert.deepStrictEqual(streamed, { status: 413, body: expected })
      }
      const exact = yield* request(`${server.url}/upload`, {
        method: "POST",
        body: new Uint8Array(MAX_BODY_BYTES)
      })
      assert.deepStrictEqual(exact.body, MAX_BODY_BYTES)
    })
  )

  it.scopedLive("a client that goes away interrupts its handler's fiber", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const server = yield* start([
        route("GET", "/slow", () =>
          Deferred.succeed(started, undefined).pipe(
            Effect.zipRight(Effect.never),
            Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
          )
        )
      ])
      const controller = new AbortController()
      yield* Effect.promise(() =>
        fetch(`${server.url}/slow`, { signal: controller.signal }).catch(() => "aborted")
      ).pipe(Effect.forkScoped)
      yield* Deferred.await(started)
      controller.abort()
      yield* Deferred.await(interrupted)
      assert.deepStrictEqual(server.inFlight.size, 0)
    })
  )

  it.live("closing the server waits for the request in flight to be answered", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const server = yield* start([
        route("GET", "/slow", () =>
          Deferred.succeed(started, undefined).pipe(
            Effect.zipRight(Deferred.await(release)),
            Effect.as({ status: 200, body: { finished: true } })
          )
        )
      ]).pipe(Scope.extend(scope))
      const pending = yield* request(`${server.url}/slow`).pipe(Effect.fork)
      yield* Deferred.await(started)
      const closing = yield* Scope.close(scope, Exit.void).pipe(Effect.fork)
      // The scope cannot finish closing while the request is held.
      yield* Effect.yieldNow()
      assert.isNull(closing.unsafePoll())
      yield* Deferred.succeed(release, undefined)
      const response = yield* Fiber.join(pending)
      assert.deepStrictEqual(response.body, { finished: true })
      yield* Fiber.join(closing)
      assert.deepStrictEqual(server.inFlight.size, 0)
    })
  )
  it.live("a request still sending its body when the server closes is waited for and answered", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const server = yield* start([
        route("POST", "/echo", (request) =>
          Effect.succeed({ status: 200, body: { bytes: request.body.byteLength } })
        )
      ]).pipe(Scope.extend(scope))
      // Headers and half the body now, the rest only once the server has begun to close.
      const answered = yield* Deferred.make<{ status: number; body: unknown }>()
      const req = http.request(`${server.url}/echo`, {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": "10" }
      })
      req.on("response", (res) => {
        let text = ""
        res.on("data", (chunk) => (text += chunk))
        res.on("end", () =>
          Deferred.unsafeDone(answered, Exit.succeed({ status: res.statusCode ?? 0, body: JSON.parse(text) }))
        )
      })
      req.write("12345")
      yield* Effect.sleep("100 millis")
      assert.strictEqual(server.inFlight.size, 1)
      const closing = yield* Scope.close(scope, Exit.void).pipe(Effect.fork)
      yield* Effect.sleep("100 millis")
      assert.isNull(closing.unsafePoll())
      req.end("67890")
      assert.deepStrictEqual(yield* Deferred.await(answered), { status: 200, body: { bytes: 10 } })
      yield* Fiber.join(closing)
      assert.strictEqual(server.inFlight.size, 0)
    })
  )
})

import * as http from "node:http"
import * as net from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { apiError } from "@rfq/engine"
import { Deferred, Effect, Exit, Fiber, Layer, Scope, TestClock } from "effect"
import { rateLimitAround } from "../src/App.js"
import { Auth, type AuthService } from "../src/auth/AuthService.js"
import type { HostInput } from "../src/Host.js"
import { serve } from "../src/HttpServer.js"
import { MAX_BODY_BYTES } from "../src/RequestHandler.js"
import { type Route, route } from "../src/Router.js"

/**
 * Answers decided before routing (a body over the cap, declared or streamed, and the 503 of a
 * server shutting down) go through the rate limiter like every other answer: counted, with the
 * X-RateLimit-* headers, and a 429 once the caller is over the limit. The test clock stands still,
 * so every request falls in one window.
 */

interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly body: unknown
}

/** Every caller here is anonymous: the limit counts per peer address. */
const anonymous = {
  knownCaller: () => undefined,
  authenticate: () => Effect.fail(apiError("tokenExpiredOrInvalid"))
} as unknown as AuthService

const start = (limit: number, routes: ReadonlyArray<Route<never>>) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(60_000 * 1000 + 1_000)
    const input = { config: { rateLimitPerMinute: limit } } as unknown as HostInput
    const around = yield* rateLimitAround(input).pipe(Effect.provide(Layer.succeed(Auth, anonymous)))
    return yield* serve({ host: "127.0.0.1", port: 0, routes, around })
  })

/** POSTs `totalBytes`, declared with a content-length or streamed in chunks without one. */
const post = (url: string, totalBytes: number, declared: boolean) =>
  Effect.async<Answer, Error>((resume) => {
    const headers = declared ? { "content-length": String(totalBytes) } : { "transfer-encoding": "chunked" }
    const req = http.request(url, { method: "POST", headers }, (res) => {
      let text = ""
      res.on("data", (chunk) => (text += chunk))
      res.on("end", () =>
        resume(
          Effect.succeed({
            status: res.statusCode ?? 0,
            headers: res.headers as Answer["headers"],
            body: JSON.parse(text)
          })
        )
      )
    })
    req.on("error", (error) => resume(Effect.fail(error)))
    const chunk = Buffer.alloc(64 * 1024, 120)
    let sent = 0
    const pump = (): void => {
      while (sent < totalBytes) {
        const part = chunk.subarray(0, Math.min(chunk.length, totalBytes - sent))
        sent += part.length
        if (!req.write(part)) return void req.once("drain", pump)
      }
      req.end()
    }
    pump()
  })

/** One request on an open connection, read to the end of its (content-length delimited) answer. */
const exchange = (socket: net.Socket, path: string) =>
  Effect.async<Answer, Error>((resume) => {
    let text = ""
    const onData = (chunk: Buffer) => {
      text += chunk.toString()
      const end = text.indexOf("\r\n\r\n")
      if (end < 0) return
      const [statusLine, ...lines] = text.slice(0, end).split("\r\n")
      const headers: Record<string, string> = {}
      for (const line of lines) {
        const colon = line.indexOf(":")
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
      }
      const body = text.slice(end + 4)
      if (body.length < Number(headers["content-length"])) return
      socket.off("data", onData)
      resume(Effect.succeed({ status: Number(statusLine!.split(" ")[1]), headers, body: JSON.parse(body) }))
    }
    socket.on("data", onData)
    socket.once("error", (error) => resume(Effect.fail(error)))
    socket.write(`GET ${path} HTTP/1.1\r\nHost: test\r\n\r\n`)
  })

const remaining = (answer: Answer) => answer.headers["x-ratelimit-remaining"]

describe("answers decided before routing go through the rate limiter", () => {
  it.scoped("a body over the cap is counted with its headers, and a 429 past the limit", () =>
    Effect.gen(function* () {
      const server = yield* start(3, [
        route("POST", "/upload", () => Effect.succeed({ status: 200, body: {} }))
      ])
      const url = `${server.url}/upload`
      const declared = yield* post(url, MAX_BODY_BYTES + 1, true)
      const streamed = yield* post(url, 4 * MAX_BODY_BYTES, false)
      const accepted = yield* post(url, 10, true)
      assert.deepStrictEqual(
        [declared, streamed, accepted].map((a) => [a.status, remaining(a), a.headers["x-ratelimit-limit"]]),
        [
          [413, "2", "3"],
          [413, "1", "3"],
          [200, "0", "3"]
        ]
      )
      assert.strictEqual(declared.headers["x-ratelimit-reset"], String(60_000 + 60))
      // Over the limit, an oversized body is refused like any request: 429, not 413.
      for (const over of [
        yield* post(url, MAX_BODY_BYTES + 1, true),
        yield* post(url, 4 * MAX_BODY_BYTES, false)
      ]) {
        assert.deepStrictEqual(
          [over.status, over.body, remaining(over)],
          [429, { code: 429, message: "rate limit exceeded" }, "0"]
        )
      }
    })
  )

  it.scoped("the 503 of a server shutting down is counted and carries the headers", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      // A failed assertion must not leave the drain waiting for /slow on a clock that stands still.
      yield* Effect.addFinalizer(() => Deferred.succeed(release, undefined))
      const server = yield* start(10, [
        route("GET", "/ok", () => Effect.succeed({ status: 200, body: { ok: true } })),
        route("GET", "/slow", () =>
          Deferred.succeed(started, undefined).pipe(
            Effect.zipRight(Deferred.await(release)),
            Effect.as({ status: 200, body: { finished: true } })
          )
        )
      ]).pipe(Scope.extend(scope))
      // An open keep-alive connection: the only way to reach a server that stopped accepting.
      const socket = net.connect(server.port, "127.0.0.1")
      yield* Effect.addFinalizer(() => Effect.sync(() => socket.destroy()))
      const first = yield* exchange(socket, "/ok")
      assert.deepStrictEqual([first.status, remaining(first)], [200, "9"])
      const slow = yield* Effect.promise(() => fetch(`${server.url}/slow`).then((r) => r.status)).pipe(
        Effect.fork
      )
      yield* Deferred.await(started)
      // Closing the scope starts the drain at once; it then waits for /slow.
      const closing = yield* Scope.close(scope, Exit.void).pipe(Effect.fork)
      for (let i = 0; i < 5; i++) yield* Effect.yieldNow()
      const refused = yield* exchange(socket, "/ok")
      assert.deepStrictEqual(
        [refused.status, refused.body],
        [503, { code: 503, message: "service unavailable", reason: ["the server is shutting down"] }]
      )
      assert.deepStrictEqual(
        [refused.headers.connection, refused.headers["x-ratelimit-limit"], remaining(refused)],
        ["close", "10", "7"]
      )
      yield* Deferred.succeed(release, undefined)
      assert.strictEqual(yield* Fiber.join(slow), 200)
      yield* Fiber.join(closing)
      assert.strictEqual(server.inFlight.size, 0)
    })
  )
})

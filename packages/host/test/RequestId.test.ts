import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger } from "effect"
import { serve } from "../src/HttpServer.js"
import { route } from "../src/Router.js"

describe("request ids", () => {
  it.scopedLive(
    "every answer carries X-Request-Id; a sane client id is kept; log lines of the request carry it",
    () =>
      Effect.gen(function* () {
        const lines: Array<Record<string, unknown>> = []
        const capture = Logger.make(({ annotations, message }) => {
          lines.push({ message, ...Object.fromEntries(annotations) })
        })
        const server = yield* serve({
          host: "127.0.0.1",
          port: 0,
          routes: [
            route("GET", "/hello", () =>
              Effect.logInfo("inside").pipe(Effect.as({ status: 200, body: { ok: true } }))
            )
          ]
        }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, capture)))
        const own = yield* Effect.promise(() => fetch(`${server.url}/hello`))
        const generated = own.headers.get("x-request-id")
        assert.match(generated ?? "", /^[a-z0-9]+-[a-z0-9]+$/)
        const given = yield* Effect.promise(() =>
          fetch(`${server.url}/hello`, { headers: { "X-Request-Id": "trace-42" } })
        )
        assert.strictEqual(given.headers.get("x-request-id"), "trace-42")
        const hostile = yield* Effect.promise(() =>
          fetch(`${server.url}/hello`, { headers: { "X-Request-Id": "a b <script>" } })
        )
        assert.notStrictEqual(hostile.headers.get("x-request-id"), "a b <script>")
        const missing = yield* Effect.promise(() => fetch(`${server.url}/nowhere`))
        assert.strictEqual(missing.status, 404)
        assert.isNotNull(missing.headers.get("x-request-id"))
        const inside = lines.filter(
          (l) => l.message === "inside" || (Array.isArray(l.message) && l.message[0] === "inside")
        )
        assert.deepStrictEqual(
          inside.map((l) => l.requestId),
          [generated, "trace-42", hostile.headers.get("x-request-id")]
        )
      })
  )
})

import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import fc from "fast-check"
import { parseJsonObjectBody } from "../src/auth/TokenRequests.js"
import { MAX_JSON_DEPTH, nestedDeeperThan } from "../src/JsonBody.js"
import { parseJsonBody } from "../src/RestRoutes.js"
import { parseFrame } from "../src/ws/JsonRpc.js"

/** The nesting depth of a parsed JSON value, counted the way the scanner counts brackets. */
const depthOf = (value: unknown): number =>
  Array.isArray(value)
    ? 1 + Math.max(0, ...value.map(depthOf))
    : value !== null && typeof value === "object"
      ? 1 + Math.max(0, ...Object.values(value).map(depthOf))
      : 0

const nested = (depth: number, open = "[", close = "]") => open.repeat(depth) + close.repeat(depth)

describe("JSON nesting limit", () => {
  it("agrees with the real depth of any JSON text, strings full of brackets and escapes included", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 10 }), (value, max) => {
        const text = JSON.stringify(value)
        assert.strictEqual(nestedDeeperThan(text, max), depthOf(value) > max)
      })
    )
    assert.isFalse(nestedDeeperThan(JSON.stringify({ s: '[[[{{{"\\"]]]' }), 1))
  })

  it(`allows ${MAX_JSON_DEPTH} levels and refuses one more, arrays and objects alike`, () => {
    assert.isFalse(nestedDeeperThan(nested(MAX_JSON_DEPTH)))
    assert.isTrue(nestedDeeperThan(nested(MAX_JSON_DEPTH + 1)))
    assert.isTrue(nestedDeeperThan(`${'{"a":'.repeat(MAX_JSON_DEPTH + 1)}1${"}".repeat(MAX_JSON_DEPTH + 1)}`))
  })

  it.effect("a REST body nested 10,000 deep is a 400 before it is parsed", () =>
    Effect.gen(function* () {
      const refused = yield* Effect.flip(parseJsonBody(new TextEncoder().encode(nested(10_000))))
      assert.strictEqual(refused.status, 400)
      assert.deepStrictEqual(refused.toBody().reason, [`body: nested deeper than ${MAX_JSON_DEPTH} levels`])
      const objects = yield* Effect.flip(parseJsonBody(new TextEncoder().encode(`{"a":${nested(10_000)}}`)))
      assert.strictEqual(objects.status, 400)
    })
  )

  it("a token request body and a JSON-RPC frame nested too deep are refused as invalid", () => {
    const body = parseJsonObjectBody(new TextEncoder().encode(`{"a":${nested(MAX_JSON_DEPTH)}}`))
    assert.isTrue(Either.isLeft(body) && body.left.status === 400)
    const frame = parseFrame(
      `{"jsonrpc":"2.0","id":1,"method":"heartbeat","params":${nested(10_000, '{"a":', "}")}`
    )
    assert.strictEqual(frame._tag, "Rejected")
    assert.strictEqual(frame._tag === "Rejected" && frame.error.code, -32600)
  })
})

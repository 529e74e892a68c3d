import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { Effect } from "effect"
import { makeRouter, type Route, route } from "../src/Router.js"

const ok = () => Effect.succeed({ status: 200, body: null })

const table: ReadonlyArray<Route<never>> = [
  route("GET", "/v1/rfq/{id}", ok),
  route("POST", "/v1/rfq/{id}", ok),
  route("DELETE", "/v1/rfq/{id}", ok),
  route("GET", "/v1/rfq/quotes", ok),
  route("POST", "/v1/rfq/cancel", ok),
  route("GET", "/v1/rfq/{id}/quote", ok)
]
const router = makeRouter(table)

const matched = (method: string, path: string) => {
  const match = router.match(method, path)
  return match._tag === "Found"
    ? { path: match.route.path, method: match.route.method, params: match.params }
    : match
}

describe("Router", () => {
  it("a literal segment wins over a parameter wherever it is in the table", () => {
    assert.deepStrictEqual(matched("GET", "/v1/rfq/quotes"), {
      path: "/v1/rfq/quotes",
      method: "GET",
      params: {}
    })
    const reversed = makeRouter([...table].reverse())
    const match = reversed.match("GET", "/v1/rfq/quotes")
    assert.strictEqual(match._tag === "Found" ? match.route.path : match._tag, "/v1/rfq/quotes")
  })

  it("parameters are captured and percent-decoded", () => {
    assert.deepStrictEqual(matched("GET", "/v1/rfq/42/quote"), {
      path: "/v1/rfq/{id}/quote",
      method: "GET",
      params: { id: "42" }
    })
    assert.deepStrictEqual(matched("GET", "/v1/rfq/a%2Fb"), {
      path: "/v1/rfq/{id}",
      method: "GET",
      params: { id: "a/b" }
    })
  })

  it("the method picks among routes of one path; a literal path with the wrong method falls to a parameter route", () => {
    assert.deepStrictEqual(matched("DELETE", "/v1/rfq/7"), {
      path: "/v1/rfq/{id}",
      method: "DELETE",
      params: { id: "7" }
    })
    assert.deepStrictEqual(matched("GET", "/v1/rfq/cancel"), {
      path: "/v1/rfq/{id}",
      method: "GET",
      params: { id: "cancel" }
    })
  })

  it("a path that exists under other methods only is MethodNotAllowed with those methods", () => {
    assert.deepStrictEqual(router.match("PUT", "/v1/rfq/7"), {
      _tag: "MethodNotAllowed",
      allow: ["GET", "POST", "DELETE"]
    })
  })

  it("no route with that shape is NotFound, including empty parameters and extra segments", () => {
    for (const path of ["/v1/rfq", "/v1/rfq/", "/v1/rfq/7/quote/x", "/v2/rfq/7", "", "v1/rfq/7"]) {
      assert.deepStrictEqual(router.match("GET", path), { _tag: "NotFound" }, path)
    }
  })

  it("a parameter that is not valid percent-encoding is MalformedPath", () => {
    assert.deepStrictEqual(router.match("GET", "/v1/rfq/%E0%A4%A"), { _tag: "MalformedPath", param: "id" })
    // A lone surrogate's code unit as UTF-8 (CESU) is not UTF-8 either.
    assert.deepStrictEqual(router.match("GET", "/v1/rfq/%ED%A0%80"), { _tag: "MalformedPath", param: "id" })
  })

  it("a duplicate method and path shape is refused when the table is built", () => {
    assert.throws(
      () => makeRouter([route("GET", "/a/{x}", ok), route("GET", "/a/{y}", ok)]),
      /duplicate route/
    )
    assert.throws(() => makeRouter([route("GET", "/a/{x", ok)]), /malformed route segment/)
  })
})

describe("Router: remembered matches", () => {
  it("answer as a fresh match does, again and again, whatever the method, path and order", () => {
    const segment = fc.oneof(
      fc.constantFrom("v1", "rfq", "quotes", "cancel", "quote", "", "%41", "%E0%A4%A", "7"),
      fc.string({ maxLength: 200 })
    )
    const path = fc.array(segment, { minLength: 1, maxLength: 5 }).map((parts) => `/${parts.join("/")}`)
    const call = fc.record({ method: fc.constantFrom("GET", "POST", "DELETE", "PUT", "BREW"), path })
    fc.assert(
      fc.property(fc.array(call, { minLength: 1, maxLength: 40 }), (calls) => {
        const remembering = makeRouter(table)
        for (const { method, path } of [...calls, ...calls]) {
          const fresh = makeRouter(table).match(method, path)
          assert.deepStrictEqual(remembering.match(method, path), fresh)
        }
      })
    )
  })

  it("a remembered match's parameters cannot be changed by one request for the next", () => {
    const remembering = makeRouter(table)
    const first = remembering.match("GET", "/v1/rfq/42")
    assert.strictEqual(first._tag, "Found")
    if (first._tag !== "Found") return
    assert.throws(() => {
      ;(first.params as Record<string, string>).id = "43"
    })
    const again = remembering.match("GET", "/v1/rfq/42")
    assert.deepStrictEqual(again._tag === "Found" ? again.params : undefined, { id: "42" })
  })
})

import { endpoints } from "@rfq/engine/api"
import { describe, expect, it } from "vitest"
import { parseQuery } from "../../host/src/RestRoutes.js"
import { restRequest } from "../src/RestRequest.js"

/**
 * Every operation of the table maps to the request the host reads: path parameters in the path,
 * percent-encoded; the rest in the query (read back with the host's own `parseQuery`) or the JSON
 * body. Driven by the table, so an operation added to it is checked too.
 */
const sample = { id: 12, rfqId: 7, status: ["open", "filled"], label: "a b&c", limit: 5, flag: true }

describe("restRequest", () => {
  for (const [name, endpoint] of Object.entries(endpoints)) {
    it(`${name}: ${endpoint.method} ${endpoint.path} (${endpoint.from})`, () => {
      const request = restRequest(endpoint, sample)
      expect(request.method).toBe(endpoint.method)
      const [path, query] = request.target.split("?") as [string, string | undefined]
      const pathNames = [...endpoint.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!)
      expect(path).toBe(endpoint.path.replace(/\{([^}]+)\}/g, (_, p: string) => String((sample as any)[p])))
      const rest = Object.fromEntries(Object.entries(sample).filter(([key]) => !pathNames.includes(key)))
      if (endpoint.from === "query") {
        expect(request.body).toBeUndefined()
        expect({ ...parseQuery(query ?? "") }).toEqual(
          Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, Array.isArray(v) ? v : String(v)]))
        )
      } else if (endpoint.from === "body") {
        expect(query).toBeUndefined()
        expect(JSON.parse(request.body!)).toEqual(rest)
      } else {
        expect(query).toBeUndefined()
        expect(request.body).toBeUndefined()
      }
    })
  }

  it("percent-encodes a path parameter, so a hostile one cannot reach another route", () => {
    const request = restRequest(endpoints["v1/rfq/get"], { id: "../exchange/maker?x=1#" })
    expect(request.target).toBe("/v1/rfq/..%2Fexchange%2Fmaker%3Fx%3D1%23")
  })

  it("refuses a missing path parameter and a value a URL cannot carry", () => {
    expect(() => restRequest(endpoints["v1/rfq/get"], {})).toThrow("id: the path /v1/rfq/{id} needs it")
    expect(() => restRequest(endpoints["v1/rfq/list"], { role: { nested: 1 } })).toThrow(
      "role: a object cannot be sent in a URL"
    )
  })

  it("leaves out undefined query fields and sends no '?' for an empty query", () => {
    expect(restRequest(endpoints["v1/rfq/list"], { role: undefined }).target).toBe("/v1/rfq")
  })
})

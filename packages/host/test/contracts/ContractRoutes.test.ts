import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { contractRoutes, listenHost, validHost } from "../../src/ContractRoutes.js"
import { operations } from "../../src/Operations.js"
import type { RouteRequest } from "../../src/Router.js"

/**
 * The served documents name the server the request came in on (its `Host` header), and nothing a
 * client writes into `Host` beyond a host name and port reaches the document.
 */

const routes = contractRoutes({ operations, version: "test", listen: { host: "0.0.0.0", port: 8080 } })

const get = (path: string, host: string | undefined) => {
  const found = routes.find((r) => r.path === path)!
  const request: RouteRequest = {
    method: "GET",
    path,
    query: "",
    headers: host === undefined ? {} : { host },
    params: {},
    body: new Uint8Array(),
    remoteAddress: "127.0.0.1"
  }
  return Effect.runSync(
    found.handler(request as never) as Effect.Effect<{ status: number; body: any; headers?: any }>
  )
}

describe("the served documents' server", () => {
  it("is the Host the request came in on", () => {
    const openApi = get("/v1/openapi.json", "rfq.example.com:8443")
    expect(openApi.status).toBe(200)
    expect(openApi.body.servers).toEqual([
      { url: "http://rfq.example.com:8443", description: "This service" }
    ])
    expect(openApi.headers).toEqual({ Vary: "Host" })
    const asyncApi = get("/v1/asyncapi.json", "[::1]:9000")
    expect(asyncApi.body.servers.session).toMatchObject({
      host: "[::1]:9000",
      protocol: "ws",
      pathname: "/ws/v1"
    })
  })

  it("falls back to the listening address for a missing or malformed Host", () => {
    for (const host of [
      undefined,
      "",
      'evil.com/"><script>',
      "a b",
      "host:99999",
      "host:0",
      "user@host",
      "host:80:81",
      "-bad.com",
      "x".repeat(300),
      "[::1",
      "host:8080\r\nX-Injected: 1"
    ]) {
      expect(get("/v1/openapi.json", host).body.servers[0].url, String(host)).toBe("http://127.0.0.1:8080")
      expect(get("/v1/asyncapi.json", host).body.servers.session.host, String(host)).toBe("127.0.0.1:8080")
    }
  })

  it("accepts host names, IPv4 and bracketed IPv6 addresses with an optional port", () => {
    expect(validHost("localhost")).toBe("localhost")
    expect(validHost("Rfq.Example.COM:443")).toBe("rfq.example.com:443")
    expect(validHost("10.0.0.7:8080")).toBe("10.0.0.7:8080")
    expect(validHost("[fe80::1]")).toBe("[fe80::1]")
    expect(listenHost({ host: "::", port: 80 })).toBe("[::1]:80")
    expect(listenHost({ host: "10.1.2.3", port: 8080 })).toBe("10.1.2.3:8080")
  })
})

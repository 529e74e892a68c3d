import type { Endpoint } from "@rfq/engine"
import { Effect } from "effect"
import { makeAsyncApiDocument } from "./AsyncApi.js"
import { makeOpenApiDocument } from "./OpenApi.js"
import { type Route, type RouteRequest, route } from "./Router.js"

/**
 * `GET /v1/openapi.json` and `GET /v1/asyncapi.json`, built once at start. Their server address is
 * the one the request came in on (its `Host` header), so a client generated from a document
 * fetched from a host talks to that host, behind a proxy too; a missing or malformed `Host` (only
 * a hostname or address and a port are taken, so the header cannot inject anything into the
 * document) falls back to the listening address. The scheme is `http` / `ws`: the service itself
 * does not terminate TLS (docs/deploy.md); behind a TLS proxy a client sets its base URL.
 */

const hostName =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/
const ipv6 = /^\[[0-9A-Fa-f:.]{2,45}\]$/

/** `host[:port]` when `value` is a well-formed Host header, else undefined. */
export const validHost = (value: string | undefined): string | undefined => {
  if (value === undefined || value.length > 261) return undefined
  const match = /^(.+?)(?::([0-9]{1,5}))?$/.exec(value)
  if (match === null) return undefined
  const [, name, port] = match
  if (name === undefined || !(hostName.test(name) || ipv6.test(name))) return undefined
  if (port !== undefined && !(Number(port) >= 1 && Number(port) <= 65535)) return undefined
  return value.toLowerCase()
}

/** The listening address as a Host value: a wildcard address is reached on the loopback. */
export const listenHost = (listen: { readonly host: string; readonly port: number }): string => {
  const name =
    listen.host === "0.0.0.0" || listen.host === "" ? "127.0.0.1" : listen.host === "::" ? "::1" : listen.host
  return `${name.includes(":") ? `[${name}]` : name}:${listen.port}`
}

export interface ContractRoutesInput {
  readonly operations: ReadonlyArray<Endpoint>
  readonly version: string
  readonly listen: { readonly host: string; readonly port: number }
}

export const contractRoutes = (input: ContractRoutesInput): ReadonlyArray<Route<never>> => {
  const openApi = makeOpenApiDocument(input.operations, { version: input.version })
  const asyncApi = makeAsyncApiDocument(input.operations, { version: input.version })
  const hostOf = (request: RouteRequest) => validHost(request.headers.host) ?? listenHost(input.listen)
  // The answer depends on `Host`: a shared cache must key on it.
  const headers = { Vary: "Host" }
  return [
    route("GET", "/v1/openapi.json", (request) =>
      Effect.succeed({
        status: 200,
        headers,
        body: { ...openApi, servers: [{ ...openApi.servers[0], url: `http://${hostOf(request)}` }] }
      })
    ),
    route("GET", "/v1/asyncapi.json", (request) =>
      Effect.succeed({
        status: 200,
        headers,
        body: {
          ...asyncApi,
          servers: { session: { ...asyncApi.servers.session, host: hostOf(request) } }
        }
      })
    )
  ]
}

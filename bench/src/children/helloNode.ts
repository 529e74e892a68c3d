/**
 * The ceiling of every Express or Fastify application: a raw node:http server answering every
 * request with fixed bytes (the host's own answer to `GET /v1/rfq/{id}`, captured by the scenario).
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { childConfig, runChild, tell } from "../ChildIo.js"
import type { HelloUwsConfig } from "./helloUws.js"

runChild(
  async () => {
    const config = childConfig<HelloUwsConfig>()
    const body = Buffer.from(config.body)
    const headers: Record<string, string> = { "Content-Length": String(body.length) }
    for (const [name, value] of config.headers) headers[name] = value
    const server = http.createServer({ keepAliveTimeout: 60_000 }, (_req, res) => {
      res.writeHead(200, headers)
      res.end(body)
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    await tell({ type: "ready", port: (server.address() as AddressInfo).port })
  },
  { serve: true }
)

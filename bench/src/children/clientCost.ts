/**
 * What `@rfq/client` itself costs per call, to decide where the bench may use it (bench/README.md,
 * "Which paths use @rfq/client"): the same authenticated `GET /v1/rfq/{id}` (same token, same
 * answer, so the host's work is identical) sent one at a time by three clients in this one
 * process: the bench's raw `node:http` client (`Api`), a bare `fetch` (what `@rfq/client` sends
 * through), and `RfqClient.call("v1/rfq/get")`. Each runs `calls` calls per round, rounds
 * interleaved; this process's CPU time per call (user + system) is the client's own cost, the
 * figure that matters when client and host share the cores.
 */
import { performance } from "node:perf_hooks"
import { RfqClient } from "@rfq/client"
import { Api } from "../Api.js"
import { childConfig, runChild, tell } from "../ChildIo.js"
import { type LatencySummary, Samples } from "../Stats.js"

export interface ClientCostConfig {
  readonly url: string
  /** A one-hour token of the demo taker, who created `rfqId`. */
  readonly token: string
  readonly rfqId: number
  readonly calls: number
  readonly rounds: number
}

export const CLIENT_WAYS = ["node:http", "fetch", "@rfq/client"] as const
export type ClientWay = (typeof CLIENT_WAYS)[number]

export interface ClientWayResult {
  /** This process's CPU per call, in µs: the best round's. */
  readonly cpuUsPerCall: number
  readonly latency: LatencySummary
}

export interface ClientCostResult {
  readonly type: "result"
  readonly ways: Record<ClientWay, ClientWayResult>
}

runChild(async () => {
  const config = childConfig<ClientCostConfig>()
  const path = `/v1/rfq/${config.rfqId}`
  const api = new Api(config.url, 1)
  const client = new RfqClient({ baseUrl: config.url, accessToken: config.token })
  const send: Record<ClientWay, () => Promise<unknown>> = {
    "node:http": () => api.request("GET", path, undefined, config.token),
    fetch: async () => {
      const response = await fetch(`${config.url}${path}`, {
        headers: { authorization: `Bearer ${config.token}` }
      })
      const text = await response.text()
      if (!response.ok) throw new Error(`GET ${path} answered ${response.status}: ${text.slice(0, 300)}`)
      return JSON.parse(text)
    },
    "@rfq/client": () => client.call("v1/rfq/get", { id: config.rfqId })
  }
  const best = new Map<ClientWay, number>()
  const latency = new Map<ClientWay, Samples>(CLIENT_WAYS.map((way) => [way, new Samples()]))
  // Round 0 warms every path (JIT, connections) and is not kept.
  for (let round = 0; round <= config.rounds; round++) {
    for (const way of CLIENT_WAYS) {
      const samples = latency.get(way)!
      const cpu = process.cpuUsage()
      for (let i = 0; i < config.calls; i++) {
        const started = performance.now()
        await send[way]()
        if (round > 0) samples.add(performance.now() - started)
      }
      const used = process.cpuUsage(cpu)
      const perCall = (used.user + used.system) / config.calls
      if (round > 0 && perCall < (best.get(way) ?? Number.POSITIVE_INFINITY)) best.set(way, perCall)
    }
  }
  api.close()
  const result: ClientCostResult = {
    type: "result",
    ways: Object.fromEntries(
      CLIENT_WAYS.map((way) => [way, { cpuUsPerCall: best.get(way)!, latency: latency.get(way)!.summary() }])
    ) as Record<ClientWay, ClientWayResult>
  }
  await tell(result)
})

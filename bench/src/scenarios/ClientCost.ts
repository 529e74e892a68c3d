import { Api, DEMO_TAKER } from "../Api.js"
import { createDemoRfq, demoClient } from "../BenchClient.js"
import type { BenchContext } from "../BenchContext.js"
import type { ClientCostConfig, ClientCostResult } from "../children/clientCost.js"
import { childScript, spawnTs } from "../Processes.js"
import { formatNumber, type ScenarioResult } from "../Report.js"

export interface ClientCostSizes {
  /** Calls per client per round, one in flight. */
  readonly calls: number
  readonly rounds: number
}

/**
 * Scenario 7: what `@rfq/client` costs per call against the bench's raw `node:http` client and a
 * bare `fetch`, on the same read of the same host (no target). It is the evidence behind where the
 * bench uses the client and where a measured loop stays raw (bench/README.md, "Which paths use
 * @rfq/client"): a path whose client would add a visible share of the service's own cost per
 * request stays raw, or the service would be blamed for the client's work.
 */
export const clientCost = async (ctx: BenchContext, sizes: ClientCostSizes): Promise<ScenarioResult> => {
  const host = await ctx.sharedHost()
  // The child's raw clients hold this token for the whole run: the one-hour token of `POST /v1/auth`.
  const api = new Api(host.url)
  const token = await api.token(DEMO_TAKER)
  api.close()
  const taker = demoClient(host.url, DEMO_TAKER)
  const rfqId = await createDemoRfq(taker)
  taker.logout()
  const config: ClientCostConfig = { url: host.url, token, rfqId, calls: sizes.calls, rounds: sizes.rounds }
  const child = spawnTs(childScript("clientCost.ts"), [JSON.stringify(config)])
  let result: ClientCostResult
  try {
    result = await child.next<ClientCostResult>("result", 300_000)
  } finally {
    await child.stop()
  }
  const { ways } = result
  const raw = ways["node:http"]
  const bare = ways.fetch
  const typed = ways["@rfq/client"]
  const vsRaw = typed.cpuUsPerCall / raw.cpuUsPerCall
  const vsFetch = typed.cpuUsPerCall / bare.cpuUsPerCall
  const extraUs = typed.cpuUsPerCall - raw.cpuUsPerCall
  for (const [name, way] of Object.entries(ways))
    ctx.log(
      `  ${name.padEnd(12)} ${formatNumber(way.cpuUsPerCall).padStart(6)} µs of client CPU per call, ` +
        `p50 ${formatNumber(way.latency.p50)} ms p99 ${formatNumber(way.latency.p99)} ms`
    )
  ctx.log(
    `  @rfq/client ÷ node:http ${vsRaw.toFixed(2)}× CPU per call (+${formatNumber(extraUs)} µs), ÷ bare fetch ${vsFetch.toFixed(2)}×`
  )
  return {
    id: "client",
    title: "@rfq/client's own cost per call",
    figures: {
      calls: sizes.calls,
      rounds: sizes.rounds,
      nodeHttpCpuUsPerCall: raw.cpuUsPerCall,
      fetchCpuUsPerCall: bare.cpuUsPerCall,
      clientCpuUsPerCall: typed.cpuUsPerCall,
      nodeHttpP50Ms: raw.latency.p50,
      fetchP50Ms: bare.latency.p50,
      clientP50Ms: typed.latency.p50,
      clientVsNodeHttpCpu: vsRaw,
      clientVsFetchCpu: vsFetch,
      clientExtraCpuUsPerCall: extraUs
    },
    targets: [],
    notes: [
      `GET /v1/rfq/{id}, one call in flight, client CPU per call: node:http ${formatNumber(raw.cpuUsPerCall)} µs, ` +
        `bare fetch ${formatNumber(bare.cpuUsPerCall)} µs, @rfq/client ${formatNumber(typed.cpuUsPerCall)} µs ` +
        `(${vsRaw.toFixed(2)}× node:http, ${vsFetch.toFixed(2)}× fetch); p50 ${formatNumber(raw.latency.p50)} / ` +
        `${formatNumber(bare.latency.p50)} / ${formatNumber(typed.latency.p50)} ms`
    ]
  }
}

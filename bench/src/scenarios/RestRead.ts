import * as http from "node:http"
import { Api, DEMO_TAKER } from "../Api.js"
import { createDemoRfq, demoClient } from "../BenchClient.js"
import type { BenchContext } from "../BenchContext.js"
import { type Child, childScript, spawnTs } from "../Processes.js"
import { check, formatNumber, type ScenarioResult, type TargetCheck } from "../Report.js"
import type { HttpLoadConfig, HttpLoadResult } from "../children/httpLoad.js"

export interface RestReadSizes {
  readonly connections: number
  readonly warmupMs: number
  readonly durationMs: number
  /** Each server is measured this many times, interleaved; the best run of each counts. */
  readonly rounds: number
  readonly targets: boolean
}

interface Captured {
  readonly status: number
  readonly body: Buffer
  readonly headers: ReadonlyArray<readonly [string, string]>
}

/** One plain GET, keeping the answer's bytes and the headers a baseline must repeat. */
const capture = (url: string, headers: Record<string, string>): Promise<Captured> =>
  new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => {
          const kept: Array<readonly [string, string]> = []
          for (let i = 0; i < res.rawHeaders.length; i += 2) {
            const name = res.rawHeaders[i]!
            // Framing and per-server headers are each server's own business.
            if (/^(content-length|date|connection|keep-alive|uwebsockets|transfer-encoding)$/i.test(name))
              continue
            kept.push([name, res.rawHeaders[i + 1]!])
          }
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), headers: kept })
        })
        res.on("error", reject)
      })
      .on("error", reject)
  })

const load = async (config: HttpLoadConfig): Promise<HttpLoadResult> => {
  const child = spawnTs(childScript("httpLoad.ts"), [JSON.stringify(config)])
  try {
    return await child.next<HttpLoadResult>("result", config.warmupMs + config.durationMs + 60_000)
  } finally {
    await child.stop()
  }
}

const startServer = async (script: string, config: unknown): Promise<{ child: Child; url: string }> => {
  const child = spawnTs(childScript(script), [JSON.stringify(config)])
  const { port } = await child.next<{ type: string; port: number }>("ready", 60_000)
  return { child, url: `http://127.0.0.1:${port}` }
}

/**
 * Scenario 1: authenticated `GET /v1/rfq/{id}` on the host against a raw uWS and a raw node:http
 * server that answer the very same body and headers, with the same load generator (a separate
 * process) and the same number of keep-alive connections. The servers are measured in turn,
 * `rounds` times interleaved, and the best run of each is compared, so a noisy neighbour on the
 * machine hurts one round, not one server.
 */
export const restRead = async (ctx: BenchContext, sizes: RestReadSizes): Promise<ScenarioResult> => {
  const host = await ctx.sharedHost()
  // The load generator sends this token for the whole scenario: the one-hour token of `POST /v1/auth`.
  const api = new Api(host.url)
  const token = await api.token(DEMO_TAKER)
  api.close()
  const taker = demoClient(host.url, DEMO_TAKER)
  const rfqId = await createDemoRfq(taker)
  taker.logout()
  const path = `/v1/rfq/${rfqId}`
  const headers = { authorization: `Bearer ${token}` }
  const answer = await capture(`${host.url}${path}`, headers)
  if (answer.status !== 200) throw new Error(`GET ${path} answered ${answer.status}`)

  const baselineConfig = { body: answer.body.toString("utf8"), headers: answer.headers }
  const uws = await startServer("helloUws.ts", baselineConfig)
  const node = await startServer("helloNode.ts", baselineConfig)
  try {
    for (const [name, server] of [
      ["uWS", uws],
      ["node:http", node]
    ] as const) {
      const theirs = await capture(`${server.url}${path}`, headers)
      if (!theirs.body.equals(answer.body))
        throw new Error(`the ${name} baseline does not answer the same bytes`)
    }
    const servers = [
      { name: "host", url: `${host.url}${path}` },
      { name: "uWS", url: `${uws.url}${path}` },
      { name: "node:http", url: `${node.url}${path}` }
    ]
    const best = new Map<string, HttpLoadResult>()
    for (let round = 1; round <= sizes.rounds; round++) {
      for (const server of servers) {
        const run = () =>
          load({
            url: server.url,
            headers,
            connections: sizes.connections,
            warmupMs: sizes.warmupMs,
            durationMs: sizes.durationMs
          })
        const result = server.name === "host" ? await ctx.measured(host, run) : await run()
        if (result.errors > 0 || result.nonOk > 0) {
          throw new Error(`${server.name}: ${result.errors} socket errors, ${result.nonOk} non-200 answers`)
        }
        ctx.log(
          `  round ${round} ${server.name.padEnd(9)} ${formatNumber(result.requestsPerSecond).padStart(8)} req/s  ` +
            `p50 ${formatNumber(result.latency.p50)} ms  p99 ${formatNumber(result.latency.p99)} ms  (${result.bytesPerResponse} B/answer)`
        )
        const previous = best.get(server.name)
        if (previous === undefined || result.requestsPerSecond > previous.requestsPerSecond)
          best.set(server.name, result)
      }
    }
    const rps = (name: string) => best.get(name)!.requestsPerSecond
    const vsUws = rps("host") / rps("uWS")
    const vsNode = rps("host") / rps("node:http")
    const targets: Array<TargetCheck> = sizes.targets
      ? [
          check("REST read, host / raw uWS", vsUws, ">=", 0.6),
          check("REST read, host / raw node:http", vsNode, ">", 1.0)
        ]
      : []
    return {
      id: "rest-read",
      title: "REST read: GET /v1/rfq/{id}",
      figures: {
        bodyBytes: answer.body.length,
        connections: sizes.connections,
        hostRps: rps("host"),
        uwsRps: rps("uWS"),
        nodeRps: rps("node:http"),
        hostP50Ms: best.get("host")!.latency.p50,
        hostP99Ms: best.get("host")!.latency.p99,
        uwsP99Ms: best.get("uWS")!.latency.p99,
        nodeP99Ms: best.get("node:http")!.latency.p99,
        hostVsUws: vsUws,
        hostVsNode: vsNode
      },
      targets,
      notes: [
        `host ${formatNumber(rps("host"))} req/s, raw uWS ${formatNumber(rps("uWS"))} req/s, raw node:http ${formatNumber(rps("node:http"))} req/s ` +
          `(${sizes.connections} keep-alive connections, best of ${sizes.rounds})`,
        `ratio host / uWS = ${vsUws.toFixed(3)}, host / node:http = ${vsNode.toFixed(3)}`
      ]
    }
  } finally {
    await Promise.all([uws.child.stop(), node.child.stop()])
  }
}

/**
 * Quoting load over WebSocket: `connections` maker sessions, each owning one active quote, each
 * sending `v1/quote/update` (alternating between two valid price sets) one at a time for a fixed
 * time; then, on the same connections, `heartbeat` round trips the same way, and then `v1/rfq/get`
 * of each connection's RFQ (a read memory answers; no target, issue 15's read path over JSON-RPC). The RFQs, their leg
 * prices and the quotes are made before anything is timed, through the typed client
 * (`@rfq/client`, REST); the timed calls go over raw connections (`RpcConnection`, frames matched
 * by id), since the ratio's baseline is a bare heartbeat on the same sockets and a client session's
 * own work per frame would weigh on both sides of it.
 */
import { performance } from "node:perf_hooks"
import type { EndpointInput } from "@rfq/client"
import { Api, DEMO_MAKERS, DEMO_TAKER, type PricedLeg, quoteBody } from "../Api.js"
import { createDemoRfq, demoClient, priceLegs } from "../BenchClient.js"
import { childConfig, measureWindow, runChild, tell } from "../ChildIo.js"
import { type LatencySummary, Samples } from "../Stats.js"
import { openMany, RpcFailure } from "../WsClient.js"

export interface WsQuotingConfig {
  readonly httpUrl: string
  readonly wsUrl: string
  readonly connections: number
  readonly warmupMs: number
  readonly durationMs: number
}

export interface Phase {
  readonly calls: number
  readonly errors: number
  readonly firstError?: string
  readonly perSecond: number
  readonly latency: LatencySummary
}

export interface WsQuotingResult {
  readonly type: "result"
  readonly updates: Phase
  readonly heartbeats: Phase
  readonly reads: Phase
}

runChild(async () => {
  const config = childConfig<WsQuotingConfig>()
  // The sessions hold their token for the whole run: the one-hour token of `POST /v1/auth`.
  const api = new Api(config.httpUrl, 16)
  const makers = await Promise.all(DEMO_MAKERS.map((m) => api.token(m)))
  api.close()
  const taker = demoClient(config.httpUrl, DEMO_TAKER)
  const makerClients = DEMO_MAKERS.map((m) => demoClient(config.httpUrl, m))
  const rfqCount = Math.ceil(config.connections / makers.length)
  const rfqs: Array<{ rfqId: number; prices: [ReadonlyArray<PricedLeg>, ReadonlyArray<PricedLeg>] }> = []
  for (let i = 0; i < rfqCount; i++) {
    const rfqId = await createDemoRfq(taker)
    rfqs.push({
      rfqId,
      prices: [await priceLegs(makerClients[0]!, rfqId), await priceLegs(makerClients[0]!, rfqId, 2)]
    })
  }
  const connections = await openMany(config.wsUrl, config.connections)
  const quotes = await Promise.all(
    connections.map(async (connection, i) => {
      await connection.call("auth", { token: makers[i % makers.length] })
      const rfq = rfqs[Math.floor(i / makers.length)]!
      const { rfqQuoteId } = await makerClients[i % makers.length]!.call(
        "v1/quote/create",
        quoteBody(rfq.rfqId, rfq.prices[0]) as EndpointInput<"v1/quote/create">
      )
      return { connection, rfqQuoteId, prices: rfq.prices, rfqId: rfq.rfqId }
    })
  )
  taker.logout()
  for (const client of makerClients) client.logout()

  const phase = async (
    call: (q: (typeof quotes)[number], round: number) => Promise<unknown>,
    announce = false
  ): Promise<Phase> => {
    const latency = new Samples()
    let measuring = false
    let stopping = false
    let calls = 0
    let errors = 0
    let firstError: string | undefined
    const loop = async (q: (typeof quotes)[number]) => {
      for (let round = 1; !stopping; round++) {
        const started = performance.now()
        try {
          await call(q, round)
          if (measuring) {
            latency.add(performance.now() - started)
            calls++
          }
        } catch (error) {
          if (!(error instanceof RpcFailure)) throw error
          if (measuring) errors++
          firstError ??= error.message
        }
      }
    }
    const loops = quotes.map(loop)
    await new Promise((r) => setTimeout(r, config.warmupMs))
    measuring = true
    const started = performance.now()
    // The parent reads where the cores went over the updates' measured part (`CoreAccount.ts`).
    if (announce) await tell({ type: "measuring" })
    await measureWindow(config.durationMs, () => calls > 0)
    if (announce) await tell({ type: "measured" })
    measuring = false
    const elapsed = performance.now() - started
    stopping = true
    await Promise.all(loops)
    return {
      calls,
      errors,
      ...(firstError === undefined ? {} : { firstError }),
      perSecond: (calls / elapsed) * 1000,
      latency: latency.summary()
    }
  }

  const updates = await phase(
    (q, round) =>
      q.connection.call("v1/quote/update", {
        rfqQuoteId: q.rfqQuoteId,
        amount: 50,
        settlementOption: "DBT",
        legs: q.prices[round % 2]
      }),
    true
  )
  const heartbeats = await phase((q) => q.connection.call("heartbeat"))
  const reads = await phase((q) => q.connection.call("v1/rfq/get", { id: q.rfqId }))
  for (const q of quotes) q.connection.close()
  const result: WsQuotingResult = { type: "result", updates, heartbeats, reads }
  await tell(result)
})

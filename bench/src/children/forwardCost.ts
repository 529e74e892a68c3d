/**
 * What a request forwarded to another owner costs: the same read (`GET /v1/rfq/{id}`, taker) and
 * the same write (`PUT /v1/rfq/quote`, the maker updating its quote, alternating two valid price
 * sets) sent one at a time to the RFQ's owner and to another host, which forwards it to the owner.
 * A create is owned by the host it lands on, so each host creates one RFQ (and its quote) and owns
 * it; every round sends each request of each RFQ to both hosts, in alternating order, so neither
 * host nor order is favoured. Each host is reached directly (no HAProxy), over a kept-alive socket.
 *
 * Then what each costs the hosts in CPU: blocks of `cpuBlock` requests of one kind, `CPU_IN_FLIGHT`
 * at a time, on the first host's RFQ, sent to it (its owner) or to the other host; the parent reads
 * every host's CPU time at each block's `block-start` and `block-end` (the child waits for its
 * `go` each time), in both orders.
 *
 * The RFQs, prices and quotes are made through the typed client (`@rfq/client`), one per host; the
 * timed requests go through the raw `Api` (node:http) on both arms, as in every run before, so the
 * absolute figures stay comparable and the client's 0.1 ms per call is not in them.
 */
import { performance } from "node:perf_hooks"
import type { EndpointInput } from "@rfq/client"
import { Api, DEMO_MAKERS, DEMO_TAKER, type PricedLeg, quoteBody } from "../Api.js"
import { createDemoRfq, demoClient, priceLegs } from "../BenchClient.js"
import { childConfig, heard, runChild, tell } from "../ChildIo.js"
import { CPU_IN_FLIGHT, cpuBlocks, type ForwardOp } from "../ForwardCpuBlocks.js"
import { type LatencySummary, Samples } from "../Stats.js"

/** What the parent asks for. */
export interface ForwardCostConfig {
  /** Two or more hosts of one service, reached directly. */
  readonly hostUrls: ReadonlyArray<string>
  /** Measured rounds; each sends every request of every RFQ once to its owner and once to another host. */
  readonly rounds: number
  /** Unmeasured rounds first. */
  readonly warmupRounds: number
  /** Requests per CPU block (each op and kind twice, in both orders); 0: no CPU blocks. */
  readonly cpuBlock: number
}

/** Latency of each request at the RFQ's owner and forwarded by the other host. */
export interface ForwardCostResult {
  readonly type: "result"
  readonly read: { readonly owner: LatencySummary; readonly forwarded: LatencySummary }
  readonly write: { readonly owner: LatencySummary; readonly forwarded: LatencySummary }
}

interface Owned {
  readonly owner: number
  readonly rfqId: number
  readonly rfqQuoteId: number
  readonly prices: readonly [ReadonlyArray<PricedLeg>, ReadonlyArray<PricedLeg>]
}

runChild(async () => {
  const config = childConfig<ForwardCostConfig>()
  const apis = config.hostUrls.map((url) => new Api(url, CPU_IN_FLIGHT))
  const taker = await apis[0]!.token(DEMO_TAKER)
  const maker = await apis[0]!.token(DEMO_MAKERS[0])
  const owned: Array<Owned> = []
  for (const [owner, url] of config.hostUrls.entries()) {
    // A create is owned by the host it lands on: each host's RFQ is made through that host.
    const takerClient = demoClient(url, DEMO_TAKER)
    const makerClient = demoClient(url, DEMO_MAKERS[0])
    const rfqId = await createDemoRfq(takerClient)
    const prices = [await priceLegs(makerClient, rfqId), await priceLegs(makerClient, rfqId, 2)] as const
    const { rfqQuoteId } = await makerClient.call(
      "v1/quote/create",
      quoteBody(rfqId, prices[0]) as EndpointInput<"v1/quote/create">
    )
    takerClient.logout()
    makerClient.logout()
    owned.push({ owner, rfqId, rfqQuoteId, prices })
  }

  const samples = {
    read: { owner: new Samples(), forwarded: new Samples() },
    write: { owner: new Samples(), forwarded: new Samples() }
  }
  let update = 0
  /** The read (the taker's GET) or the write (the maker's quote update, alternating two price sets). */
  const send = (op: ForwardOp, api: Api, rfq: Owned) =>
    op === "read"
      ? api.request("GET", `/v1/rfq/${rfq.rfqId}`, undefined, taker)
      : api.request(
          "PUT",
          "/v1/rfq/quote",
          { rfqQuoteId: rfq.rfqQuoteId, amount: 50, settlementOption: "DBT", legs: rfq.prices[++update % 2] },
          maker
        )
  const timed = async (into: Samples | undefined, request: () => Promise<unknown>) => {
    const started = performance.now()
    await request()
    into?.add(performance.now() - started)
  }
  for (let round = 0; round < config.warmupRounds + config.rounds; round++) {
    const measuring = round >= config.warmupRounds
    for (const rfq of owned) {
      const other = (rfq.owner + 1 + (round % (apis.length - 1))) % apis.length
      const order = round % 2 === 0 ? [rfq.owner, other] : [other, rfq.owner]
      for (const via of order) {
        const kind = via === rfq.owner ? "owner" : "forwarded"
        const api = apis[via]!
        await timed(measuring ? samples.read[kind] : undefined, () => send("read", api, rfq))
        await timed(measuring ? samples.write[kind] : undefined, () => send("write", api, rfq))
      }
    }
  }
  const rfq = owned[0]!
  for (const { op, kind } of config.cpuBlock > 0 ? cpuBlocks() : []) {
    const api = apis[kind === "owner" ? rfq.owner : (rfq.owner + 1) % apis.length]!
    // Listening before telling: the parent's `go` cannot arrive before its listener.
    const started = heard("go")
    await tell({ type: "block-start" })
    await started
    let left = config.cpuBlock
    await Promise.all(
      Array.from({ length: CPU_IN_FLIGHT }, async () => {
        while (left-- > 0) await send(op, api, rfq)
      })
    )
    const ended = heard("go")
    await tell({ type: "block-end" })
    await ended
  }
  for (const api of apis) api.close()
  const result: ForwardCostResult = {
    type: "result",
    read: { owner: samples.read.owner.summary(), forwarded: samples.read.forwarded.summary() },
    write: { owner: samples.write.owner.summary(), forwarded: samples.write.forwarded.summary() }
  }
  await tell(result)
})

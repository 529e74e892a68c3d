/**
 * Fan-out load: `makers` WebSocket connections listening on `rfq.maker`, and the trigger that
 * makes every one of them receive a frame, all in this one process so that one clock times the
 * trigger and every arrival. Against the host the trigger is `POST /v1/rfq/0` (an RFQ inviting
 * the three demo makers; the connections are spread over the three makers' sessions) and the
 * frame is its `created` notification; against the raw uWS baseline the trigger is
 * `POST /publish` and the frame is the same bytes published to a topic.
 *
 * Two phases: `sequentialRfqs` triggers one at a time, each waiting for every connection
 * (latency per delivered notification, from sending the trigger to the frame's arrival), then a
 * burst of `burstRfqs` triggers, `burstConcurrency` in flight (notifications per second).
 */
import { performance } from "node:perf_hooks"
import { Api, DEMO_MAKERS, DEMO_TAKER, demoRfq } from "../Api.js"
import { childConfig, runChild, tell } from "../ChildIo.js"
import { Samples, type LatencySummary } from "../Stats.js"
import { openMany, type RpcConnection } from "../WsClient.js"

export interface FanOutConfig {
  readonly mode: "host" | "baseline"
  readonly httpUrl: string
  readonly wsUrl: string
  readonly makers: number
  readonly sequentialRfqs: number
  readonly burstRfqs: number
  readonly burstConcurrency: number
  /** Longest wait for one trigger's frames before the run fails. */
  readonly timeoutMs: number
}

export interface FanOutResult {
  readonly type: "result"
  readonly latency: LatencySummary
  /** Latency until the last connection had its frame, one sample per trigger. */
  readonly lastArrival: LatencySummary
  /** Arrival after the trigger's answer (negative: before it), the fan-out without the create's own time. */
  readonly afterAnswer: LatencySummary
  readonly trigger: LatencySummary
  readonly notificationsPerSecond: number
  readonly burstNotifications: number
  readonly burstElapsedMs: number
  readonly frameBytes: number
  /** One notification as the host sent it, for the baseline to publish. */
  readonly sampleFrame: string
}

const CREATED = Buffer.from('"event":"created"')

runChild(async () => {
  const config = childConfig<FanOutConfig>()
  const api = new Api(config.httpUrl, config.burstConcurrency + 4)
  const connections: Array<RpcConnection> = await openMany(config.wsUrl, config.makers)
  let trigger: () => Promise<number | undefined>
  if (config.mode === "host") {
    const taker = await api.token(DEMO_TAKER)
    const makers = await Promise.all(DEMO_MAKERS.map((m) => api.token(m)))
    for (let i = 0; i < connections.length; i += 50) {
      await Promise.all(
        connections.slice(i, i + 50).map(async (c, j) => {
          await c.call("auth", { token: makers[(i + j) % makers.length] })
          await c.call("v1/subscribe", { channels: ["rfq.maker"] })
        })
      )
    }
    trigger = async () => (await api.request<{ rfqId: number }>("POST", "/v1/rfq/0", demoRfq, taker)).rfqId
  } else {
    trigger = async () => {
      await api.request("POST", "/publish", {})
      return undefined
    }
  }

  // Which frames count: the host's `created` notifications, or anything from the baseline.
  const counts = (data: Buffer) => config.mode === "baseline" || data.includes(CREATED)
  let arrivals = 0
  let onAllArrived: (() => void) | undefined
  let sampleFrame = ""
  let frameBytes = 0
  let record: ((at: number) => void) | undefined
  let target = 0
  for (const connection of connections) {
    connection.onFrame = (data) => {
      if (!counts(data)) return
      const at = performance.now()
      if (sampleFrame === "") sampleFrame = data.toString("utf8")
      frameBytes = data.length
      arrivals++
      record?.(at)
      if (onAllArrived !== undefined && arrivals >= target) onAllArrived()
    }
  }
  const awaitArrivals = (expected: number) =>
    new Promise<void>((resolve, reject) => {
      target = expected
      if (arrivals >= expected) return resolve()
      const timer = setTimeout(
        () =>
          reject(new Error(`only ${arrivals} of ${expected} notifications within ${config.timeoutMs} ms`)),
        config.timeoutMs
      )
      onAllArrived = () => {
        clearTimeout(timer)
        onAllArrived = undefined
        resolve()
      }
    })

  // A first trigger, unmeasured: warms the path and captures the frame.
  await trigger()
  await awaitArrivals(connections.length)

  const latency = new Samples()
  const lastArrival = new Samples()
  const triggers = new Samples()
  const afterAnswer = new Samples()
  for (let i = 0; i < config.sequentialRfqs; i++) {
    const expected = arrivals + connections.length
    const sentAt = performance.now()
    let last = 0
    const arrived: Array<number> = []
    record = (at) => {
      latency.add(at - sentAt)
      arrived.push(at)
      last = at
    }
    await trigger()
    const answeredAt = performance.now()
    triggers.add(answeredAt - sentAt)
    await awaitArrivals(expected)
    record = undefined
    lastArrival.add(last - sentAt)
    for (const at of arrived) afterAnswer.add(at - answeredAt)
  }

  const burstExpected = arrivals + connections.length * config.burstRfqs
  const burstStart = performance.now()
  let sent = 0
  const sender = async () => {
    while (sent < config.burstRfqs) {
      sent++
      await trigger()
    }
  }
  await Promise.all(Array.from({ length: config.burstConcurrency }, sender))
  await awaitArrivals(burstExpected)
  const burstElapsedMs = performance.now() - burstStart
  const burstNotifications = connections.length * config.burstRfqs
  for (const connection of connections) connection.close()
  api.close()
  const result: FanOutResult = {
    type: "result",
    latency: latency.summary(),
    lastArrival: lastArrival.summary(),
    afterAnswer: afterAnswer.summary(),
    trigger: triggers.summary(),
    notificationsPerSecond: (burstNotifications / burstElapsedMs) * 1000,
    burstNotifications,
    burstElapsedMs,
    frameBytes,
    sampleFrame
  }
  await tell(result)
})

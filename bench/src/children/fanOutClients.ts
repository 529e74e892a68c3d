/**
 * Fan-out load: `makers` WebSocket connections listening on `rfq.maker`, and the trigger that
 * makes every one of them receive a frame. Against the host the trigger is `POST /v1/rfq/0` (an
 * RFQ inviting the three demo makers; the connections are spread over the three makers' sessions)
 * and the frame is its `created` notification; against the raw uWS baseline the trigger is
 * `POST /publish` and the frame is the same bytes published to a topic.
 *
 * The connections live in this process (`clientProcesses` 1), or are shared out among
 * `clientProcesses` receiver processes (`fanOutReceiver.ts`) when one process receiving every frame
 * would be the bottleneck; this process then only triggers. Every process times on the machine's
 * monotonic clock (`FanOutArrivals.ts`), so arrivals in one are timed against a trigger sent by another.
 *
 * Two phases: `sequentialRfqs` triggers one at a time, each waiting for every connection
 * (latency per delivered notification, from sending the trigger to the frame's arrival), then a
 * burst of `burstRfqs` triggers, `burstConcurrency` in flight (notifications per second, until the
 * last frame of the burst arrived).
 *
 * Nothing here goes through `@rfq/client`: the trigger is timed against raw uWS's `POST /publish`
 * sent by the same raw `Api`, and the receivers match frames by bytes where a client session would
 * parse every frame (bench/README.md, "Which paths use @rfq/client"). The tokens are the one-hour
 * tokens of `POST /v1/auth`, which the sessions hold for the whole run.
 */
import * as fs from "node:fs"
import { Api, DEMO_MAKERS, DEMO_TAKER, demoRfq } from "../Api.js"
import { childConfig, runChild, tell } from "../ChildIo.js"
import { type ArrivalReport, Arrivals, type ArrivalsSetup, monotonicMs } from "../FanOutArrivals.js"
import { childScript, spawnTs } from "../Processes.js"
import { type LatencySummary, Samples } from "../Stats.js"

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
  /** Processes holding the connections (default 1: this one). */
  readonly clientProcesses?: number
  /** The server's process, whose CPU time over the measured phases is reported (Linux only). */
  readonly serverPid?: number | undefined
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
  readonly clientProcesses: number
  /**
   * CPU time (all threads) the server process spent from the first measured trigger until the
   * burst's last frame arrived, per notification delivered meanwhile, in microseconds; undefined
   * where `/proc` cannot tell.
   */
  readonly serverCpuUsPerNotification: number | undefined
  /** The part of it spent in the kernel (sending is a system call per frame and socket). */
  readonly serverSystemCpuUsPerNotification: number | undefined
  /** When the measured phases ran, in ms of the monotonic clock (`FanOutArrivals.monotonicMs`). */
  readonly measuredFromMs: number
  readonly measuredToMs: number
}

/** Where a share of the connections lives: here, or in a receiver process. */
interface Receiver {
  readonly connections: number
  readonly reach: (count: number) => Promise<void>
  /** Closes the connections and answers their arrival times. */
  readonly report: () => Promise<ArrivalReport>
  readonly stop: () => Promise<void>
}

const local = async (setup: ArrivalsSetup, timeoutMs: number): Promise<Receiver> => {
  const arrivals = await Arrivals.open(setup)
  return {
    connections: setup.connections,
    reach: (count) => arrivals.reach(count, timeoutMs),
    report: async () => {
      arrivals.close()
      return arrivals.report()
    },
    stop: async () => arrivals.close()
  }
}

const remote = async (setup: ArrivalsSetup, timeoutMs: number): Promise<Receiver> => {
  const child = spawnTs(childScript("fanOutReceiver.ts"), [JSON.stringify({ timeoutMs })])
  try {
    await child.next("ready", 120_000)
    child.send({ type: "open", setup })
    await child.next("opened", 600_000)
  } catch (error) {
    await child.stop()
    throw error
  }
  return {
    connections: setup.connections,
    reach: async (count) => {
      child.send({ type: "reach", count })
      await child.next("reached", timeoutMs + 10_000)
    },
    report: async () => {
      child.send({ type: "report" })
      return await child.next<ArrivalReport>("arrivals", 60_000)
    },
    stop: async () => {
      await child.stop()
    }
  }
}

/** User and system CPU time of process `pid` so far, in ms (`/proc/<pid>/stat`, 100 ticks a second). */
const cpuMsOf = (pid: number | undefined): { readonly user: number; readonly system: number } | undefined => {
  if (pid === undefined) return undefined
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    // Fields after the command name (which may hold spaces): state is the 3rd field, utime the 14th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 }
  } catch {
    return undefined
  }
}

runChild(async () => {
  const config = childConfig<FanOutConfig>()
  const processes = Math.max(1, Math.min(config.clientProcesses ?? 1, config.makers))
  const api = new Api(config.httpUrl, config.burstConcurrency + 4)
  let makerTokens: ReadonlyArray<string> = []
  let trigger: () => Promise<unknown>
  if (config.mode === "host") {
    const taker = await api.token(DEMO_TAKER)
    makerTokens = await Promise.all(DEMO_MAKERS.map((m) => api.token(m)))
    trigger = () => api.request<{ rfqId: number }>("POST", "/v1/rfq/0", demoRfq, taker)
  } else {
    trigger = () => api.request("POST", "/publish", {})
  }

  // The times kept: the warm-up's and the sequential phase's; the burst only counts.
  const rounds = 1 + config.sequentialRfqs
  const receivers: Array<Receiver> = []
  try {
    const opening: Array<Promise<Receiver>> = []
    let firstIndex = 0
    for (let p = 0; p < processes; p++) {
      const connections = Math.floor(config.makers / processes) + (p < config.makers % processes ? 1 : 0)
      const setup: ArrivalsSetup = {
        mode: config.mode,
        wsUrl: config.wsUrl,
        connections,
        makerTokens,
        firstIndex,
        keep: rounds * connections
      }
      firstIndex += connections
      opening.push(processes === 1 ? local(setup, config.timeoutMs) : remote(setup, config.timeoutMs))
    }
    const opened = await Promise.allSettled(opening)
    for (const o of opened) if (o.status === "fulfilled") receivers.push(o.value)
    const failed = opened.find((o) => o.status === "rejected")
    if (failed !== undefined) throw (failed as PromiseRejectedResult).reason

    /** Resolves once every connection has had the frames of `triggers` triggers. */
    const allReached = (triggers: number) =>
      Promise.all(receivers.map((r) => r.reach(triggers * r.connections)))

    // A first trigger, unmeasured: warms the path and captures the frame.
    await trigger()
    await allReached(1)

    const cpuBefore = cpuMsOf(config.serverPid)
    const measuredFromMs = monotonicMs()
    const sentAt: Array<number> = []
    const answeredAt: Array<number> = []
    for (let i = 0; i < config.sequentialRfqs; i++) {
      sentAt.push(monotonicMs())
      await trigger()
      answeredAt.push(monotonicMs())
      await allReached(2 + i)
    }

    const burstStart = monotonicMs()
    let sent = 0
    const sender = async () => {
      while (sent < config.burstRfqs) {
        sent++
        await trigger()
      }
    }
    await Promise.all(Array.from({ length: config.burstConcurrency }, sender))
    await allReached(rounds + config.burstRfqs)

    const cpuAfter = cpuMsOf(config.serverPid)
    const measuredToMs = monotonicMs()
    const reports = await Promise.all(receivers.map((r) => r.report()))
    const latency = new Samples()
    const afterAnswer = new Samples()
    const last = sentAt.map(() => 0)
    reports.forEach((report, r) => {
      const n = receivers[r]!.connections
      for (let i = 0; i < config.sequentialRfqs; i++) {
        // Every trigger's frames arrived before the next trigger was sent.
        for (const at of report.times.slice((1 + i) * n, (2 + i) * n)) {
          latency.add(at - sentAt[i]!)
          afterAnswer.add(at - answeredAt[i]!)
          last[i] = Math.max(last[i]!, at)
        }
      }
    })
    const lastArrival = new Samples()
    const triggers = new Samples()
    for (let i = 0; i < sentAt.length; i++) {
      lastArrival.add(last[i]! - sentAt[i]!)
      triggers.add(answeredAt[i]! - sentAt[i]!)
    }
    const burstElapsedMs = Math.max(...reports.map((r) => r.lastAt)) - burstStart
    const burstNotifications = config.makers * config.burstRfqs
    const sample = reports.find((r) => r.sampleFrame !== "")
    /** From ms of CPU over the measured phases to µs per notification delivered in them. */
    const usPerNotification = 1000 / (config.makers * (config.sequentialRfqs + config.burstRfqs))
    const result: FanOutResult = {
      type: "result",
      latency: latency.summary(),
      lastArrival: lastArrival.summary(),
      afterAnswer: afterAnswer.summary(),
      trigger: triggers.summary(),
      notificationsPerSecond: (burstNotifications / burstElapsedMs) * 1000,
      burstNotifications,
      burstElapsedMs,
      frameBytes: sample?.frameBytes ?? 0,
      sampleFrame: sample?.sampleFrame ?? "",
      clientProcesses: processes,
      serverCpuUsPerNotification:
        cpuBefore === undefined || cpuAfter === undefined
          ? undefined
          : (cpuAfter.user + cpuAfter.system - cpuBefore.user - cpuBefore.system) * usPerNotification,
      serverSystemCpuUsPerNotification:
        cpuBefore === undefined || cpuAfter === undefined
          ? undefined
          : (cpuAfter.system - cpuBefore.system) * usPerNotification,
      measuredFromMs,
      measuredToMs
    }
    await tell(result)
  } finally {
    api.close()
    await Promise.all(receivers.map((r) => r.stop()))
  }
})

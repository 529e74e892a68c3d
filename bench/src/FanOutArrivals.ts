import { openMany, type RpcConnection } from "./WsClient.js"

/**
 * One client process's share of the fan-out's WebSocket connections, and when each of their frames
 * arrived. Times are read from the machine's monotonic clock (`process.hrtime`, CLOCK_MONOTONIC on
 * Linux), which every process of the machine shares, so a trigger sent by one process and frames
 * received by others are timed on one clock.
 */
export const monotonicMs = (): number => Number(process.hrtime.bigint()) / 1e6

export interface ArrivalsSetup {
  readonly mode: "host" | "baseline"
  readonly wsUrl: string
  readonly connections: number
  /** Host mode: the makers' access tokens; connection `firstIndex + i` takes token `(firstIndex + i) % n`. */
  readonly makerTokens: ReadonlyArray<string>
  readonly firstIndex: number
  /** How many arrival times to keep (the rest only count, and the last one is kept). */
  readonly keep: number
}

export interface ArrivalReport {
  readonly type: "arrivals"
  /** The first `keep` arrival times, in order of arrival. */
  readonly times: ReadonlyArray<number>
  readonly count: number
  readonly lastAt: number
  readonly frameBytes: number
  readonly sampleFrame: string
}

const CREATED = Buffer.from('"event":"created"')

export class Arrivals {
  private readonly times: Float64Array
  private count = 0
  private lastAt = 0
  private frameBytes = 0
  private sampleFrame = ""
  private waiting: { readonly count: number; readonly done: () => void } | undefined

  private constructor(
    private readonly connections: ReadonlyArray<RpcConnection>,
    mode: ArrivalsSetup["mode"],
    keep: number
  ) {
    this.times = new Float64Array(keep)
    // Which frames count: the host's `created` notifications, or anything from the baseline.
    const counts = (data: Buffer) => mode === "baseline" || data.includes(CREATED)
    for (const connection of connections) {
      connection.onFrame = (data) => {
        if (!counts(data)) return
        const at = monotonicMs()
        if (this.count < this.times.length) this.times[this.count] = at
        this.count++
        this.lastAt = at
        this.frameBytes = data.length
        if (this.sampleFrame === "") this.sampleFrame = data.toString("utf8")
        if (this.waiting !== undefined && this.count >= this.waiting.count) this.waiting.done()
      }
    }
  }

  /** Opens the connections; in host mode each authenticates as a maker and subscribes to `rfq.maker`. */
  static async open(setup: ArrivalsSetup): Promise<Arrivals> {
    const connections = await openMany(setup.wsUrl, setup.connections)
    if (setup.mode === "host") {
      const tokens = setup.makerTokens
      for (let i = 0; i < connections.length; i += 50) {
        await Promise.all(
          connections.slice(i, i + 50).map(async (c, j) => {
            await c.call("auth", { token: tokens[(setup.firstIndex + i + j) % tokens.length] })
            await c.call("v1/subscribe", { channels: ["rfq.maker"] })
          })
        )
      }
    }
    return new Arrivals(connections, setup.mode, setup.keep)
  }

  /** Resolves once `count` frames have arrived in all; rejects after `timeoutMs`. */
  reach(count: number, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.count >= count) return resolve()
      const timer = setTimeout(() => {
        this.waiting = undefined
        reject(new Error(`only ${this.count} of ${count} notifications within ${timeoutMs} ms`))
      }, timeoutMs)
      this.waiting = {
        count,
        done: () => {
          clearTimeout(timer)
          this.waiting = undefined
          resolve()
        }
      }
    })
  }

  report(): ArrivalReport {
    return {
      type: "arrivals",
      times: Array.from(this.times.subarray(0, Math.min(this.count, this.times.length))),
      count: this.count,
      lastAt: this.lastAt,
      frameBytes: this.frameBytes,
      sampleFrame: this.sampleFrame
    }
  }

  close(): void {
    for (const connection of this.connections) connection.close()
  }
}

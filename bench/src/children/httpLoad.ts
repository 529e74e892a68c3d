/**
 * The HTTP load generator: closed-loop keep-alive connections over raw sockets, one request in
 * flight per connection (no pipelining), for a fixed time. It parses only what it must (status
 * and Content-Length), so the same client costs the same per request whichever server answers;
 * that keeps the ratios between servers honest on a two-core machine where client and server
 * share the CPU. Bounded: it stops by itself after `warmupMs + durationMs`.
 */
import * as net from "node:net"
import { performance } from "node:perf_hooks"
import { childConfig, measureWindow, runChild, tell } from "../ChildIo.js"
import { completeResponse } from "../RawHttp.js"
import { Samples } from "../Stats.js"

export interface HttpLoadConfig {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly connections: number
  readonly warmupMs: number
  readonly durationMs: number
}

export interface HttpLoadResult {
  readonly type: "result"
  readonly requests: number
  readonly errors: number
  readonly nonOk: number
  readonly elapsedMs: number
  readonly requestsPerSecond: number
  readonly bytesPerResponse: number
  readonly latency: ReturnType<Samples["summary"]>
}

runChild(async () => {
  const config = childConfig<HttpLoadConfig>()
  const target = new URL(config.url)
  const request = Buffer.from(
    `GET ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\n` +
      Object.entries(config.headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join("") +
      "\r\n",
    "latin1"
  )
  const samples = new Samples()
  let measuring = false
  let stopping = false
  let requests = 0
  let errors = 0
  let nonOk = 0
  let bytesPerResponse = 0
  const sockets: Array<net.Socket> = []

  const open = () =>
    new Promise<void>((resolve, reject) => {
      const socket = net.connect({ host: target.hostname, port: Number(target.port), noDelay: true })
      sockets.push(socket)
      let pending: Buffer = Buffer.alloc(0)
      let sentAt = 0
      const send = () => {
        if (stopping) return
        sentAt = performance.now()
        socket.write(request)
      }
      socket.on("connect", () => {
        resolve()
        send()
      })
      socket.on("data", (chunk: Buffer) => {
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
        for (;;) {
          const { length, status } = completeResponse(pending)
          if (length === 0) break
          if (measuring) {
            requests++
            if (status !== 200) nonOk++
            samples.add(performance.now() - sentAt)
          }
          bytesPerResponse = length
          pending = pending.subarray(length)
          send()
        }
      })
      socket.on("error", (error) => {
        errors++
        reject(error)
      })
    })

  await Promise.all(Array.from({ length: config.connections }, open))
  await new Promise((r) => setTimeout(r, config.warmupMs))
  measuring = true
  const started = performance.now()
  await measureWindow(config.durationMs, () => requests > 0)
  measuring = false
  const elapsedMs = performance.now() - started
  stopping = true
  for (const socket of sockets) socket.destroy()
  const result: HttpLoadResult = {
    type: "result",
    requests,
    errors,
    nonOk,
    elapsedMs,
    requestsPerSecond: (requests / elapsedMs) * 1000,
    bytesPerResponse,
    latency: samples.summary()
  }
  await tell(result)
})

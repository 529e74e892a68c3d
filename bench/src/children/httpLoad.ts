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

const HEADER_END = Buffer.from("\r\n\r\n")
const LENGTH_NAMES = [Buffer.from("\r\nContent-Length:"), Buffer.from("\r\ncontent-length:")]

/** The length of the first complete response in `buffer`, or 0 when it is not complete yet. */
const completeResponse = (buffer: Buffer): { length: number; status: number } => {
  const headerEnd = buffer.indexOf(HEADER_END)
  if (headerEnd < 0) return { length: 0, status: 0 }
  let at = -1
  for (const name of LENGTH_NAMES) {
    at = buffer.indexOf(name)
    if (at >= 0 && at < headerEnd) {
      at += name.length
      break
    }
    at = -1
  }
  if (at < 0)
    throw new Error(`a response without Content-Length: ${buffer.subarray(0, headerEnd).toString("latin1")}`)
  let bodyLength = 0
  for (let i = at; i < headerEnd; i++) {
    const c = buffer[i]!
    if (c === 0x0d) break
    if (c >= 0x30 && c <= 0x39) bodyLength = bodyLength * 10 + (c - 0x30)
  }
  const total = headerEnd + 4 + bodyLength
  if (buffer.length < total) return { length: 0, status: 0 }
  // "HTTP/1.1 200 ..."
  const status = (buffer[9]! - 0x30) * 100 + (buffer[10]! - 0x30) * 10 + (buffer[11]! - 0x30)
  return { length: total, status }
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

import * as net from "node:net"
import { ApiFailure } from "./Api.js"

/**
 * HTTP/1.1 over raw keep-alive sockets, parsing only the status line, `Content-Length` and the
 * body: what a load generator needs and no more, so that on two cores the load clients take as
 * little of the machine as the raw transactions' clients do (the lifecycle's steps; the REST
 * read's load generator reads answers with `completeResponse` too). Every answer of the servers
 * measured carries `Content-Length` (uWS writes it; so do the baselines).
 */

const HEADER_END = Buffer.from("\r\n\r\n")
const LENGTH_NAMES = [Buffer.from("\r\nContent-Length:"), Buffer.from("\r\ncontent-length:")]

/** The first complete response in `buffer`: its length, status and where its body starts; length 0 when incomplete. */
export const completeResponse = (buffer: Buffer): { length: number; status: number; bodyAt: number } => {
  const headerEnd = buffer.indexOf(HEADER_END)
  if (headerEnd < 0) return { length: 0, status: 0, bodyAt: 0 }
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
  if (buffer.length < total) return { length: 0, status: 0, bodyAt: 0 }
  // "HTTP/1.1 200 ..."
  const status = (buffer[9]! - 0x30) * 100 + (buffer[10]! - 0x30) * 10 + (buffer[11]! - 0x30)
  return { length: total, status, bodyAt: headerEnd + 4 }
}

interface Waiting {
  readonly resolve: (answer: { status: number; text: string }) => void
  readonly reject: (error: Error) => void
}

/** One keep-alive connection, one request in flight. */
class Connection {
  private pending: Buffer = Buffer.alloc(0)
  private waiting: Waiting | undefined
  closed = false

  constructor(
    readonly socket: net.Socket,
    private readonly onIdle: (connection: Connection) => void
  ) {
    socket.on("data", (chunk: Buffer) => this.read(chunk))
    const end = (error: Error) => {
      this.closed = true
      const waiting = this.waiting
      this.waiting = undefined
      waiting?.reject(new ApiFailure(`no answer: ${error.message}`, 0, ""))
    }
    socket.on("error", end)
    socket.on("close", () => end(new Error("the connection closed")))
  }

  send(request: Buffer): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject }
      this.socket.write(request)
    })
  }

  private read(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk])
    const { length, status, bodyAt } = completeResponse(this.pending)
    if (length === 0) return
    const text = this.pending.toString("utf8", bodyAt, length)
    this.pending = this.pending.subarray(length)
    const waiting = this.waiting
    this.waiting = undefined
    this.onIdle(this)
    waiting?.resolve({ status, text })
  }
}

/** A JSON client over a pool of raw keep-alive connections to one server; throws on anything but a 2xx, as `Api` does. */
export class RawHttp {
  private readonly idle: Array<Connection> = []
  private readonly all = new Set<Connection>()
  private readonly host: string
  private readonly port: number

  constructor(baseUrl: string) {
    const url = new URL(baseUrl)
    this.host = url.hostname
    this.port = Number(url.port)
  }

  request<T = unknown>(method: string, path: string, body?: unknown, token?: string): Promise<T> {
    return this.send<T>(
      method,
      path,
      body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
      token
    )
  }

  /** `request` with a body already serialised (a loop that sends the same body again and again). */
  async send<T = unknown>(
    method: string,
    path: string,
    payload: Buffer | undefined,
    token?: string
  ): Promise<T> {
    const head =
      `${method} ${path} HTTP/1.1\r\nHost: ${this.host}:${this.port}\r\n` +
      (token === undefined ? "" : `Authorization: Bearer ${token}\r\n`) +
      (payload === undefined
        ? "\r\n"
        : `Content-Type: application/json\r\nContent-Length: ${payload.length}\r\n\r\n`)
    const request =
      payload === undefined
        ? Buffer.from(head, "latin1")
        : Buffer.concat([Buffer.from(head, "latin1"), payload])
    const connection = await this.connection()
    const { status, text } = await connection.send(request)
    if (status < 200 || status >= 300)
      throw new ApiFailure(`${method} ${path} answered ${status}: ${text.slice(0, 300)}`, status, text)
    return (text === "" ? undefined : JSON.parse(text)) as T
  }

  close(): void {
    for (const connection of this.all) connection.socket.destroy()
    this.all.clear()
    this.idle.length = 0
  }

  private async connection(): Promise<Connection> {
    for (;;) {
      const idle = this.idle.pop()
      if (idle === undefined) break
      if (!idle.closed) return idle
      this.all.delete(idle)
    }
    const socket = net.connect({ host: this.host, port: this.port, noDelay: true })
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve)
      socket.once("error", (error) => reject(new ApiFailure(`no answer: ${error.message}`, 0, "")))
    })
    const connection = new Connection(socket, (c) => {
      if (!c.closed) this.idle.push(c)
    })
    this.all.add(connection)
    return connection
  }
}

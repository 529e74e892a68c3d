import { createRequire } from "node:module"

/**
 * A JSON-RPC client over a real WebSocket (the `ws` package: Node 20 has no WebSocket client of
 * its own), for tests against a listening server. Every frame received is kept in arrival order;
 * a test waits for the frame it expects (a reply by id, a notification by predicate) and can
 * assert on the order afterwards. Waiting is bounded only as a safety net against a hung test.
 */

/** The part of `ws`'s WebSocket the tests use (`ws` ships no types of its own). */
interface WsSocket {
  on(event: "open", listener: () => void): void
  on(event: "message", listener: (data: Buffer, isBinary: boolean) => void): void
  on(event: "close", listener: (code: number, reason: Buffer) => void): void
  on(event: "error", listener: (error: Error) => void): void
  on(
    event: "unexpected-response",
    listener: (request: unknown, response: { statusCode: number }) => void
  ): void
  send(data: string | Uint8Array, callback?: (error?: Error) => void): void
  close(code?: number, reason?: string): void
  terminate(): void
  pause(): void
  resume(): void
}

const WebSocket = createRequire(import.meta.url)("ws") as new (
  url: string,
  options?: { readonly maxPayload?: number }
) => WsSocket

const SAFETY_NET_MS = 20_000

export interface Closed {
  readonly code: number
  readonly reason: string
}

export class RpcClient {
  /** Every frame received, parsed, in arrival order. */
  readonly frames: Array<any> = []
  readonly closed: Promise<Closed>
  /** Errors the client library reported (protocol violations, resets). */
  readonly errors: Array<string> = []
  private readonly taken = new Set<number>()
  private readonly listeners = new Set<() => void>()
  private nextId = 0
  private isClosed = false
  private closeInfo = ""

  private constructor(private readonly socket: WsSocket) {
    this.closed = new Promise((resolve) => {
      socket.on("close", (code, reason) => {
        this.isClosed = true
        this.closeInfo = `${code} ${reason.toString("utf8")}`
        resolve({ code, reason: reason.toString("utf8") })
        for (const listener of this.listeners) listener()
      })
    })
    socket.on("error", (error) => {
      this.errors.push(error.message)
    })
    socket.on("message", (data) => {
      this.frames.push(JSON.parse(data.toString("utf8")))
      for (const listener of this.listeners) listener()
    })
  }

  static connect(url: string): Promise<RpcClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { maxPayload: 64 * 1024 * 1024 })
      socket.on("error", reject)
      socket.on("unexpected-response", (_request, response) =>
        reject(new Error(`upgrade refused with HTTP ${response.statusCode}`))
      )
      socket.on("open", () => resolve(new RpcClient(socket)))
    })
  }

  /** Sends a frame: a string as is, anything else as JSON. */
  send(message: unknown): void {
    this.socket.send(typeof message === "string" ? message : JSON.stringify(message))
  }

  sendBytes(bytes: Uint8Array): void {
    this.socket.send(bytes)
  }

  /** The first frame not yet taken that satisfies `predicate`, waiting for it if needed. */
  take(predicate: (frame: any) => boolean, what = "a matching frame"): Promise<any> {
    return new Promise((resolve, reject) => {
      const check = () => {
        for (let i = 0; i < this.frames.length; i++) {
          if (!this.taken.has(i) && predicate(this.frames[i])) {
            this.taken.add(i)
            done()
            resolve(this.frames[i])
            return true
          }
        }
        return false
      }
      const timer = setTimeout(() => {
        done()
        reject(
          new Error(
            `no ${what} within ${SAFETY_NET_MS} ms; received ${JSON.stringify(this.frames).slice(-2000)}`
          )
        )
      }, SAFETY_NET_MS)
      const done = () => {
        clearTimeout(timer)
        this.listeners.delete(listener)
      }
      const listener = () => {
        if (check() || !this.isClosed) return
        done()
        reject(
          new Error(
            `no ${what}: the connection closed (${this.closeInfo}); received ${JSON.stringify(this.frames).slice(-2000)}`
          )
        )
      }
      if (check()) return
      // Already closed: nothing more will arrive (the close listener has run).
      if (this.isClosed) return listener()
      this.listeners.add(listener)
    })
  }

  /** The next frame not yet taken, in arrival order. */
  next(): Promise<any> {
    return this.take(() => true, "frame")
  }

  /** Sends a request with a fresh id and answers its reply. */
  call(method: string, params?: unknown): Promise<any> {
    const id = ++this.nextId
    this.send(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params })
    return this.take(
      (f) => !Array.isArray(f) && f.id === id && f.method === method,
      `reply to ${method} #${id}`
    )
  }

  /** The result of a call, or a rejection carrying its error. */
  async result(method: string, params?: unknown): Promise<any> {
    const reply = await this.call(method, params)
    if (reply.error !== undefined) throw new Error(`${method} failed: ${JSON.stringify(reply.error)}`)
    return reply.result
  }

  notification(predicate: (params: any) => boolean = () => true, what = "notification"): Promise<any> {
    return this.take((f) => f.method === "v1/subscription" && predicate(f.params), what).then((f) => f.params)
  }

  /** Notifications received so far (taken or not), in arrival order. */
  notifications(): Array<any> {
    return this.frames.filter((f) => f.method === "v1/subscription").map((f) => f.params)
  }

  pause(): void {
    this.socket.pause()
  }

  resume(): void {
    this.socket.resume()
  }

  close(code = 1000): Promise<Closed> {
    this.socket.close(code)
    return this.closed
  }

  terminate(): Promise<Closed> {
    this.socket.terminate()
    return this.closed
  }
}

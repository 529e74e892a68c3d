import { isRecord, rpcError, transportError } from "./RfqError.js"
import { frameText, OPEN, type WebSocketInstance, type WebSocketLike } from "./WebSocketLike.js"

/**
 * One WebSocket connection speaking JSON-RPC 2.0: requests matched to their replies by id,
 * notifications handed on, and the heartbeat the service requires (docs/websocket.md: none within
 * 30 s closes the connection with 4000). Heartbeats are requests, so a connection whose replies
 * stopped (a half-open TCP connection the OS has not noticed) is found: two heartbeats unanswered
 * and the connection is dropped. What to do after a close is the session's (`RfqSession.ts`).
 */

export interface ConnectionEvents {
  readonly onNotification: (method: string, params: unknown) => void
  /** Once, when the connection has ended for any reason (`code` 1006 when it was dropped). */
  readonly onClose: (code: number, reason: string) => void
}

interface Pending {
  readonly resolve: (result: unknown) => void
  readonly reject: (error: unknown) => void
}

/** Unanswered heartbeats after which the connection counts as dead. */
const MAX_UNANSWERED_HEARTBEATS = 2

export class RpcConnection {
  private nextId = 1
  private readonly pending = new Map<number, Pending>()
  private heartbeat: ReturnType<typeof setInterval> | undefined
  private unansweredHeartbeats = 0
  private ended = false
  private markClosed: () => void = () => {}
  /** Settles when the connection has ended. */
  readonly closed: Promise<void> = new Promise((resolve) => (this.markClosed = resolve))

  private constructor(
    private readonly socket: WebSocketInstance,
    private readonly events: ConnectionEvents
  ) {}

  /** Opens a connection; rejects when the socket closes before it opens. */
  static open(
    WebSocketImpl: WebSocketLike,
    url: string,
    heartbeatIntervalMs: number,
    events: ConnectionEvents
  ): Promise<RpcConnection> {
    return new Promise((resolve, reject) => {
      let socket: WebSocketInstance
      try {
        socket = new WebSocketImpl(url)
      } catch (cause) {
        return reject(transportError("network", `cannot open ${url}: ${String(cause)}`, cause))
      }
      const connection = new RpcConnection(socket, events)
      let opened = false
      socket.onopen = () => {
        opened = true
        connection.startHeartbeat(heartbeatIntervalMs)
        resolve(connection)
      }
      socket.onmessage = (event) => connection.receive(event.data)
      socket.onerror = () => {}
      socket.onclose = (event) => {
        if (!opened) {
          connection.ended = true
          reject(transportError("network", `cannot connect to ${url} (close ${event.code})`))
        } else connection.end(event.code, event.reason)
      }
    })
  }

  get isOpen(): boolean {
    return !this.ended && this.socket.readyState === OPEN
  }

  /** A request; resolves with `result`, rejects with the `error` as `RfqError` or a transport error. */
  request(method: string, params: unknown): Promise<unknown> {
    if (!this.isOpen) return Promise.reject(transportError("disconnected", `${method}: not connected`))
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      try {
        this.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }))
      } catch (cause) {
        this.pending.delete(id)
        reject(transportError("disconnected", `${method}: ${String(cause)}`, cause))
      }
    })
  }

  /** Closes normally (1000) and settles when the socket has closed, or after `graceMs` at the latest. */
  async close(graceMs = 2_000): Promise<void> {
    if (this.ended) return
    const timer = setTimeout(() => this.drop("close not confirmed"), graceMs)
    try {
      this.socket.close(1000)
    } catch {
      this.drop("close failed")
    }
    await this.closed
    clearTimeout(timer)
  }

  /** Abandons the connection now, without waiting for the other side. */
  drop(reason: string): void {
    if (this.ended) return
    const socket = this.socket as WebSocketInstance & { terminate?: () => void }
    socket.onclose = null
    socket.onmessage = null
    try {
      if (typeof socket.terminate === "function") socket.terminate()
      else socket.close(4000, reason)
    } catch {
      // Already closing: nothing more to do with it.
    }
    this.end(1006, reason)
  }

  private end(code: number, reason: string): void {
    if (this.ended) return
    this.ended = true
    if (this.heartbeat !== undefined) clearInterval(this.heartbeat)
    const lost = transportError(
      "disconnected",
      `the connection closed (${code}${reason ? ` ${reason}` : ""})`
    )
    for (const pending of this.pending.values()) pending.reject(lost)
    this.pending.clear()
    this.markClosed()
    this.events.onClose(code, reason)
  }

  private startHeartbeat(intervalMs: number): void {
    this.heartbeat = setInterval(() => {
      if (this.unansweredHeartbeats >= MAX_UNANSWERED_HEARTBEATS) {
        this.drop("heartbeats unanswered")
        return
      }
      this.unansweredHeartbeats++
      this.request("heartbeat", {}).then(
        () => (this.unansweredHeartbeats = 0),
        () => {}
      )
    }, intervalMs)
  }

  private receive(data: unknown): void {
    const text = frameText(data)
    if (text === undefined) return
    let message: unknown
    try {
      message = JSON.parse(text)
    } catch {
      return
    }
    for (const one of Array.isArray(message) ? message : [message]) this.dispatch(one)
  }

  private dispatch(message: unknown): void {
    if (!isRecord(message)) return
    const id = message["id"]
    if (typeof id === "number" && ("result" in message || "error" in message)) {
      const pending = this.pending.get(id)
      if (pending === undefined) return
      this.pending.delete(id)
      if ("error" in message && message["error"] !== undefined) pending.reject(rpcError(message["error"]))
      else pending.resolve(message["result"])
      return
    }
    if (typeof message["method"] === "string" && id === undefined) {
      this.events.onNotification(message["method"], message["params"])
    }
  }
}

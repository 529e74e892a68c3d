import WebSocket from "ws"

/**
 * A JSON-RPC client over the host's WebSocket for the reliability runs: raw frames out, every
 * reply collected, the close (code, reason) observed. `connectWs` fails when the endpoint is not
 * served, which the runs report as "WebSocket not wired" and skip.
 */
export interface WsConnection {
  readonly socket: WebSocket
  /** Sends one text frame and resolves with the next reply (or undefined: none within `timeoutMs`). */
  readonly exchange: (frame: string | Buffer, timeoutMs?: number) => Promise<unknown>
  /** The next reply (not a notification), or undefined after `timeoutMs`. */
  readonly receive: (timeoutMs: number) => Promise<unknown>
  /** Sends a frame and resolves with the parsed reply whose `id` matches. */
  readonly rpc: (method: string, params?: unknown, timeoutMs?: number) => Promise<RpcReply>
  readonly closed: Promise<{ code: number; reason: string }>
  /** `v1/subscription` notifications received so far (not handed to `exchange` / `rpc`). */
  readonly notifications: Array<unknown>
  readonly close: () => void
}

export interface RpcReply {
  readonly id?: unknown
  readonly result?: unknown
  readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown }
}

export const wsUrl = (httpBase: string) => `${httpBase.replace(/^http/, "ws")}/ws/v1`

export const connectWs = (httpBase: string, options: { maxPayload?: number } = {}): Promise<WsConnection> =>
  new Promise((resolve, reject) => {
    const socket = new WebSocket(wsUrl(httpBase), { maxPayload: options.maxPayload ?? 256 * 1024 * 1024 })
    const replies: Array<unknown> = []
    const notifications: Array<unknown> = []
    const waiters: Array<(value: unknown) => void> = []
    let nextId = 1
    const closed = new Promise<{ code: number; reason: string }>((done) =>
      socket.on("close", (code, reason) => {
        done({ code, reason: reason.toString() })
        for (const w of waiters.splice(0)) w(undefined)
      })
    )
    socket.on("message", (data) => {
      let parsed: unknown
      try {
        parsed = JSON.parse(data.toString())
      } catch {
        parsed = { unparsable: data.toString().slice(0, 200) }
      }
      // Subscription notifications are kept apart: they answer nothing.
      if ((parsed as { method?: unknown })?.method === "v1/subscription") {
        if (notifications.length < 10_000) notifications.push(parsed)
        return
      }
      const waiter = waiters.shift()
      if (waiter !== undefined) waiter(parsed)
      else replies.push(parsed)
    })
    socket.once("error", reject)
    socket.once("unexpected-response", (_req, res) =>
      reject(new Error(`no WebSocket endpoint (${res.statusCode})`))
    )
    const next = (timeoutMs: number) =>
      new Promise<unknown>((done) => {
        if (replies.length > 0) return done(replies.shift())
        if (socket.readyState !== WebSocket.OPEN) return done(undefined)
        const timer = setTimeout(() => {
          const i = waiters.indexOf(waiter)
          if (i !== -1) waiters.splice(i, 1)
          done(undefined)
        }, timeoutMs)
        const waiter = (value: unknown) => {
          clearTimeout(timer)
          done(value)
        }
        waiters.push(waiter)
      })
    socket.once("open", () => {
      socket.off("error", reject)
      socket.on("error", () => undefined)
      const exchange = async (frame: string | Buffer, timeoutMs = 5000) => {
        if (socket.readyState !== WebSocket.OPEN) return undefined
        socket.send(frame)
        return next(timeoutMs)
      }
      const rpc = async (method: string, params?: unknown, timeoutMs = 10_000): Promise<RpcReply> => {
        const id = nextId++
        socket.send(
          JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) })
        )
        const deadline = Date.now() + timeoutMs
        while (Date.now() < deadline) {
          const reply = (await next(deadline - Date.now())) as RpcReply | undefined
          if (reply === undefined) break
          if (reply.id === id) return reply
        }
        return { error: { code: 0, message: "no reply" } }
      }
      resolve({ socket, exchange, receive: next, rpc, closed, notifications, close: () => socket.close() })
    })
  })

/** Whether the host serves the WebSocket endpoint at all. */
export const wsAvailable = async (httpBase: string): Promise<boolean> => {
  try {
    const c = await connectWs(httpBase)
    c.close()
    return true
  } catch {
    return false
  }
}

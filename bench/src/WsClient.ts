import WebSocket from "ws"

/**
 * A JSON-RPC connection for the load children: sends calls, matches replies by id, and hands
 * every other frame (notifications) to `onFrame` as raw bytes, so a child can time a frame
 * without parsing it.
 */
export class RpcConnection {
  private nextId = 1
  private readonly pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>()
  onFrame: (data: Buffer) => void = () => undefined

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data: Buffer) => {
      // Replies start with {"jsonrpc":"2.0","id": or carry "id" early; notifications have a "method".
      if (data.includes(NOTIFICATION)) return this.onFrame(data)
      const reply = JSON.parse(data.toString("utf8")) as {
        id?: number
        result?: unknown
        error?: { message: string }
      }
      const waiter = reply.id === undefined ? undefined : this.pending.get(reply.id)
      if (waiter === undefined) return this.onFrame(data)
      this.pending.delete(reply.id!)
      if (reply.error !== undefined) waiter.reject(new RpcFailure(reply.error.message, reply.error))
      else waiter.resolve(reply.result)
    })
    socket.on("close", (code, reason) => {
      for (const waiter of this.pending.values())
        waiter.reject(new Error(`connection closed (${code} ${reason.toString("utf8")})`))
      this.pending.clear()
    })
  }

  /** Opens a connection; rejects with `UpgradeRefused` when the server answers the upgrade with HTTP. */
  static open(url: string): Promise<RpcConnection> {
    return new Promise((resolve, reject) => {
      // UTF-8 validation in JS costs more than everything else the client does per frame; with a
      // thousand sockets in one process it would be the client, not the server, that sets the latency.
      const socket = new WebSocket(url, {
        perMessageDeflate: false,
        maxPayload: 64 * 1024 * 1024,
        skipUTF8Validation: true
      })
      socket.on("unexpected-response", (_req, res) => {
        reject(new UpgradeRefused(res.statusCode ?? 0))
        socket.terminate()
      })
      socket.on("error", reject)
      socket.on("open", () => {
        socket.off("error", reject)
        socket.on("error", () => undefined)
        resolve(new RpcConnection(socket))
      })
    })
  }

  call<T = any>(method: string, params?: unknown): Promise<T> {
    const id = this.nextId++
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      this.socket.send(
        JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) })
      )
    })
  }

  close(): void {
    this.socket.terminate()
  }
}

const NOTIFICATION = Buffer.from('"method":"v1/subscription"')

export class RpcFailure extends Error {
  constructor(
    message: string,
    readonly error: unknown
  ) {
    super(message)
  }
}

export class UpgradeRefused extends Error {
  constructor(readonly status: number) {
    super(`the WebSocket upgrade was answered with HTTP ${status}`)
  }
}

/** Opens `count` connections, `parallel` at a time. */
export const openMany = async (url: string, count: number, parallel = 50): Promise<Array<RpcConnection>> => {
  const opened: Array<RpcConnection> = []
  for (let i = 0; i < count; i += parallel) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(parallel, count - i) }, () => RpcConnection.open(url))
    )
    opened.push(...batch)
  }
  return opened
}

/** Whether `url` accepts a WebSocket upgrade at all (the endpoint may not be served yet). */
export const webSocketServed = async (
  url: string
): Promise<{ served: true } | { served: false; reason: string }> => {
  try {
    const connection = await RpcConnection.open(url)
    connection.close()
    return { served: true }
  } catch (error) {
    return { served: false, reason: error instanceof Error ? error.message : String(error) }
  }
}

import * as net from "node:net"

/**
 * A TCP proxy in front of PostgreSQL that can stall: `pause()` stops forwarding both ways without
 * closing anything, the way a server whose backends were stopped (SIGSTOP) or a network that
 * silently drops packets looks from the client. Connections opened during the stall are accepted
 * (the kernel completes the handshake) but get no answer. Whatever either side sent meanwhile
 * stays in the sockets and is delivered on `resume()`, in order, as TCP would after the network
 * heals; a side that closed during the stall has its close passed on after its data.
 *
 * The tests point a host's `DATABASE_URL` at the proxy instead of stopping the machine's
 * PostgreSQL, which other tests use at the same time.
 */

interface Pair {
  readonly client: net.Socket
  readonly server: net.Socket
}

export class StallProxy {
  private paused = false
  private readonly pairs = new Set<Pair>()
  /** Closes seen during a stall, passed on at `resume()`. */
  private deferred: Array<() => void> = []

  private constructor(
    private readonly listener: net.Server,
    readonly port: number
  ) {}

  /** Listens on a free port of 127.0.0.1 and forwards to `target`. */
  static async start(target: { readonly host: string; readonly port: number }): Promise<StallProxy> {
    let proxy: StallProxy | undefined
    const listener = net.createServer((client) => proxy?.accept(client, target))
    await new Promise<void>((resolve, reject) => {
      listener.once("error", reject)
      listener.listen(0, "127.0.0.1", () => resolve())
    })
    proxy = new StallProxy(listener, (listener.address() as net.AddressInfo).port)
    return proxy
  }

  /** `url` (a postgres:// URL) with its host and port replaced by the proxy's. */
  urlFor(url: string): string {
    const parsed = new URL(url)
    parsed.hostname = "127.0.0.1"
    parsed.port = String(this.port)
    return parsed.toString()
  }

  get stalled(): boolean {
    return this.paused
  }

  get connections(): number {
    return this.pairs.size
  }

  /** Stops forwarding in both directions; nothing is closed. */
  pause(): void {
    this.paused = true
    for (const { client, server } of this.pairs) {
      client.pause()
      server.pause()
    }
  }

  /** Forwards again: what was held is delivered, then any close that happened meanwhile. */
  resume(): void {
    this.paused = false
    for (const { client, server } of this.pairs) {
      client.resume()
      server.resume()
    }
    const deferred = this.deferred
    this.deferred = []
    // After the held data has been read and written on.
    setImmediate(() => {
      for (const close of deferred) close()
    })
  }

  async close(): Promise<void> {
    for (const { client, server } of this.pairs) {
      client.destroy()
      server.destroy()
    }
    this.pairs.clear()
    await new Promise<void>((resolve) => this.listener.close(() => resolve()))
  }

  private accept(client: net.Socket, target: { readonly host: string; readonly port: number }): void {
    const server = net.connect(target.port, target.host)
    const pair: Pair = { client, server }
    this.pairs.add(pair)
    if (this.paused) {
      client.pause()
      server.pause()
    }
    this.forward(client, server)
    this.forward(server, client)
    const forget = () => this.pairs.delete(pair)
    client.on("close", forget)
    server.on("close", forget)
  }

  /** `from` → `to`, with back-pressure; a close of `from` reaches `to` only while forwarding. */
  private forward(from: net.Socket, to: net.Socket): void {
    from.on("data", (chunk) => {
      if (!to.write(chunk)) from.pause()
    })
    to.on("drain", () => {
      if (!this.paused) from.resume()
    })
    const passOn = (close: () => void) => {
      if (this.paused) this.deferred.push(close)
      else close()
    }
    from.on("end", () => passOn(() => to.end()))
    from.on("error", () => passOn(() => to.destroy()))
    from.on("close", (hadError) => {
      if (hadError) passOn(() => to.destroy())
    })
  }
}

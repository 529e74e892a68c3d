import * as net from "node:net"
import { jetstreamManager } from "@nats-io/jetstream"
import { connect } from "@nats-io/transport-node"
import { Context, Effect, Layer, Queue, type Scope } from "effect"
import { ClusterBus, type ClusterBusService } from "../../src/cluster/ClusterBus.js"
import { natsNames } from "../../src/cluster/NatsConnection.js"
import { NatsEventsLive, type NatsEventsOptions } from "../../src/cluster/NatsEvents.js"
import { type EngineEvent, Events, type EventsService } from "../../src/services/Events.js"

/** The local NATS server of the test machine. */
export const servers = process.env.NATS_URL ?? "nats://127.0.0.1:4222"

/** A namespace of its own for a test file. */
export const randomNamespace = (): string => `test_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`

/** One "host": the layer built in the current scope, torn down with it. */
export interface TestHost {
  readonly events: EventsService
  readonly bus: ClusterBusService
}

export const startHost = (
  options: Omit<NatsEventsOptions, "servers">
): Effect.Effect<TestHost, unknown, Scope.Scope> =>
  Effect.map(Layer.build(NatsEventsLive({ servers, ...options })), (ctx) => ({
    events: Context.get(ctx, Events),
    bus: Context.get(ctx, ClusterBus)
  }))

/** Events from `queue` up to, not including, the first of RFQ `markerRfqId`. */
export const takeUntilMarker = (queue: Queue.Dequeue<EngineEvent>, markerRfqId: number) =>
  Effect.gen(function* () {
    const got: Array<EngineEvent> = []
    for (;;) {
      const event = yield* Queue.take(queue)
      if (event.view.rfq.id === markerRfqId) return got
      got.push(event)
    }
  })

/** Runs `f` with a JetStream manager on its own connection. */
export const withJsm = <A>(
  f: (jsm: Awaited<ReturnType<typeof jetstreamManager>>) => Promise<A>
): Promise<A> =>
  connect({ servers }).then(async (nc) => {
    try {
      return await f(await jetstreamManager(nc))
    } finally {
      await nc.close()
    }
  })

/** Deletes the namespace's stream (and with it its consumers), if it exists. */
export const deleteStream = (namespace: string): Promise<void> =>
  withJsm(async (jsm) => {
    await jsm.streams.delete(natsNames(namespace).stream).catch(() => false)
  })

/**
 * A TCP proxy in front of the NATS server that can be cut: `cut()` drops every connection through
 * it and drops each new one at once (NATS unreachable for the clients behind it), `restore()`
 * forwards again. The server itself, shared with other tests, is never touched.
 */
export class CuttableProxy {
  private cutOff = false
  private readonly sockets = new Set<net.Socket>()

  private constructor(
    private readonly listener: net.Server,
    readonly url: string
  ) {}

  static async start(): Promise<CuttableProxy> {
    const target = new URL(servers.split(",")[0]!)
    let proxy: CuttableProxy | undefined
    const listener = net.createServer((client) => {
      if (proxy === undefined || proxy.cutOff) return client.destroy()
      const server = net.connect(Number(target.port || 4222), target.hostname)
      for (const socket of [client, server]) {
        proxy.sockets.add(socket)
        socket.on("close", () => proxy?.sockets.delete(socket))
        socket.on("error", () => undefined)
      }
      client.pipe(server).on("error", () => undefined)
      server.pipe(client).on("error", () => undefined)
      client.on("close", () => server.destroy())
      server.on("close", () => client.destroy())
    })
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve))
    const { port } = listener.address() as net.AddressInfo
    proxy = new CuttableProxy(listener, `nats://127.0.0.1:${port}`)
    return proxy
  }

  cut(): void {
    this.cutOff = true
    for (const socket of this.sockets) socket.destroy()
  }

  restore(): void {
    this.cutOff = false
  }

  close(): Promise<void> {
    this.cut()
    return new Promise((resolve) => this.listener.close(() => resolve()))
  }
}

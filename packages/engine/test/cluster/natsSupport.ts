import * as net from "node:net"
import { jetstream, jetstreamManager } from "@nats-io/jetstream"
import { connect, headers } from "@nats-io/transport-node"
import { Context, Effect, Layer, Logger, Queue, type Scope } from "effect"
import { ClusterBus, type ClusterBusService } from "../../src/cluster/ClusterBus.js"
import { AUDIENCE_HEADER, encodeAudience, encodeEvents } from "../../src/cluster/EventCodec.js"
import { natsNames } from "../../src/cluster/NatsConnection.js"
import { NatsEventsLive, type NatsEventsOptions } from "../../src/cluster/NatsEvents.js"
import type { EventAudience } from "../../src/services/EventAudience.js"
import { type EngineEvent, Events, type EventsService } from "../../src/services/Events.js"
import { stepEvents, withoutUndefined } from "./eventFixtures.js"

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

/** What a receiver must get of `steps`, in order: the events as JSON carries them. */
export const expected = (steps: ReadonlyArray<readonly [rfqId: number, seq: number]>) =>
  withoutUndefined(steps.flatMap(([rfqId, seq]) => stepEvents(rfqId, seq)))

export const ofRfq = (events: ReadonlyArray<EngineEvent>, rfqId: number) =>
  events.filter((e) => e.view.rfq.id === rfqId)

/** Stores a step's events in the stream directly, without a message id: a duplicate JetStream cannot see. */
export const storeWithoutId = (ns: string, rfqId: number, seq: number) =>
  Effect.promise(async () => {
    const nc = await connect({ servers })
    try {
      await jetstream(nc).publish(natsNames(ns).eventSubject(rfqId), encodeEvents(stepEvents(rfqId, seq)))
    } finally {
      await nc.close()
    }
  })

/**
 * The end of what a test sent: a step stored in the stream directly, so every host gets it from the
 * stream after everything stored before it. (A host's own steps reach its subscribers before they
 * are stored, and only the order within each RFQ is kept across RFQs: a marker a host published
 * itself could overtake steps of other RFQs the stream has not brought it yet.)
 */
export const marker = storeWithoutId

/**
 * Sends steps to the stream's subjects on one connection (plain publishes, no message ids, no
 * acknowledgements) and returns once the server has taken them: stored before anything sent later,
 * and most likely not yet read by the hosts.
 */
export const storeSteps = (ns: string, steps: ReadonlyArray<readonly [rfqId: number, seq: number]>) =>
  Effect.acquireRelease(
    Effect.promise(() => connect({ servers })),
    (nc) => Effect.promise(() => nc.close())
  ).pipe(
    Effect.flatMap((nc) =>
      Effect.promise(() => {
        for (const [rfqId, seq] of steps)
          nc.publish(natsNames(ns).eventSubject(rfqId), encodeEvents(stepEvents(rfqId, seq)))
        return nc.flush()
      })
    )
  )

/** Stores `text` as a message of RFQ `rfqId` under message id `id` (naming `audience` in its header, if given). */
export const storeRaw = (ns: string, rfqId: number, id: string, text: string, audience?: EventAudience) =>
  Effect.promise(async () => {
    const nc = await connect({ servers })
    try {
      const hdrs = headers()
      if (audience !== undefined) hdrs.set(AUDIENCE_HEADER, encodeAudience(audience))
      await jetstream(nc).publish(natsNames(ns).eventSubject(rfqId), new TextEncoder().encode(text), {
        msgID: id,
        headers: hdrs
      })
    } finally {
      await nc.close()
    }
  })

/** What a subscriber got, as JSON carries it (the owner's own steps arrive as the engine made them). */
export const received = (events: ReadonlyArray<EngineEvent>) => withoutUndefined(events)

/** A logger that keeps every message (`capture`, to provide) in `logged`. */
export const capturingLogger = () => {
  const logged: Array<string> = []
  const capture = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ message }) => {
      logged.push(String(message))
    })
  )
  return { logged, capture }
}

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
 * forwards again; or stalled (`stall()`, `resume()`). The server itself, shared with other tests, is never touched.
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

  /**
   * A stall, not an outage: every connection through the proxy stays open and forwards nothing
   * either way (NATS hangs); `resume()` forwards again.
   */
  stall(): void {
    for (const socket of this.sockets) socket.pause()
  }

  resume(): void {
    for (const socket of this.sockets) socket.resume()
  }

  restore(): void {
    this.cutOff = false
  }

  close(): Promise<void> {
    this.cut()
    return new Promise((resolve) => this.listener.close(() => resolve()))
  }
}

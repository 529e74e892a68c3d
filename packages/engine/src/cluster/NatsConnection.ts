import { connect, type NatsConnection } from "@nats-io/transport-node"
import { Data, Effect, type Scope } from "effect"

/** NATS could not be reached, or JetStream refused to set up the namespace's stream; a start error. */
export class NatsUnavailable extends Data.TaggedError("NatsUnavailable")<{ readonly message: string }> {}

/** The NATS names of one namespace: several services (or test files) share a server by namespace. */
export interface NatsNames {
  /** The JetStream stream of the namespace's engine events. */
  readonly stream: string
  /** The subjects the stream captures. */
  readonly eventSubjects: string
  /** The subject of one RFQ's events. */
  readonly eventSubject: (rfqId: number) => string
  /** The plain (not stored) subject of a bus topic. */
  readonly busSubject: (topic: string) => string
}

/**
 * The names of `namespace`: stream `RFQ_EVENTS_<ns>`, subjects `rfq.<ns>.events.<rfqId>` and
 * `rfq.<ns>.bus.<topic>`, where `<ns>` is the namespace with every character other than a letter,
 * digit, `_` or `-` replaced by `_` (so `a.b` and `a_b` share names).
 */
export const natsNames = (namespace: string): NatsNames => {
  const ns = namespace.replace(/[^A-Za-z0-9_-]/g, "_")
  if (ns.length === 0) throw new RangeError("the NATS namespace must not be empty")
  return {
    stream: `RFQ_EVENTS_${ns}`,
    eventSubjects: `rfq.${ns}.events.>`,
    eventSubject: (rfqId) => `rfq.${ns}.events.${rfqId}`,
    busSubject: (topic) => `rfq.${ns}.bus.${topic}`
  }
}

/**
 * A connection to `servers` (comma-separated URLs) for the life of the scope, closed with it. It
 * reconnects for ever once up, buffering what is sent meanwhile; failing to connect at first is
 * `NatsUnavailable`.
 */
export const natsConnection = (
  servers: string,
  name: string
): Effect.Effect<NatsConnection, NatsUnavailable, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () =>
        connect({
          servers: servers.split(",").map((s) => s.trim()),
          name,
          timeout: 5_000,
          maxReconnectAttempts: -1,
          // No stack trace captured for every request (each JetStream publish is one) in case it
          // fails: the publish path logs the error's message, never its stack.
          noAsyncTraces: true
        }),
      catch: (cause) =>
        new NatsUnavailable({ message: `NATS at ${servers} is unavailable: ${messageOf(cause)}` })
    }),
    (nc) => Effect.promise(() => nc.close().catch(() => undefined))
  )

/** A thrown value's message, for logs and errors. */
export const messageOf = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

/**
 * Runs `f` on each element of `iterable`, one at a time, until it ends (or fails). Unlike
 * `Stream.fromAsyncIterable` it does not call the iterator's `return()` when interrupted: on the
 * NATS clients' iterators that waits for the pending `next()`, i.e. for a message that may never
 * come. Whoever interrupts it must close the iterable by its own means (`unsubscribe`, `stop`).
 */
export const forEachAsync = <A, R>(
  iterable: AsyncIterable<A>,
  f: (a: A) => Effect.Effect<void, never, R>
): Effect.Effect<void, unknown, R> =>
  Effect.suspend(() => {
    const iterator = iterable[Symbol.asyncIterator]()
    return Effect.tryPromise({ try: () => iterator.next(), catch: (e) => e }).pipe(
      Effect.flatMap((r) => (r.done === true ? Effect.succeed(true) : Effect.as(f(r.value), false))),
      Effect.repeat({ until: (done) => done }),
      Effect.asVoid
    )
  })

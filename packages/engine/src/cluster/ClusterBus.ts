import type { Msg, NatsConnection } from "@nats-io/transport-node"
import { Context, Effect, Queue, type Scope } from "effect"
import { forEachAsync, messageOf, type NatsNames } from "./NatsConnection.js"

/** A JSON value: what the bus carries. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | ReadonlyArray<JsonValue>
  | { readonly [key: string]: JsonValue }

/**
 * A small broadcast bus between the hosts of one namespace, for news every host must act on soon
 * but that needs no history (cache clears, token revocations, client deactivations). It rides on
 * plain NATS publish/subscribe: a message reaches every host subscribed to its topic when it is
 * sent, the sender's own host included, at most once; a host that is disconnected at that moment
 * misses it (so it must also bound its caches by time).
 *
 * A topic is one or more dot-separated words of letters, digits, `_` and `-` (`tokens.revoked`);
 * anything else is a programming error (the effect dies).
 */
export interface ClusterBusService {
  /**
   * Sends `payload` to every subscriber of `topic` on every host; done once the NATS server has it.
   * It never fails: when NATS does not take it within 5 s, the loss is logged.
   */
  readonly broadcast: (topic: string, payload: JsonValue) => Effect.Effect<void>
  /**
   * The messages broadcast on `topic` from now on, by any host, for as long as the scope lives.
   * When the effect returns, the NATS server knows of the subscription (a later broadcast reaches it).
   */
  readonly subscribe: (topic: string) => Effect.Effect<Queue.Dequeue<JsonValue>, never, Scope.Scope>
}

export class ClusterBus extends Context.Tag("rfq/ClusterBus")<ClusterBus, ClusterBusService>() {}

const TOPIC = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/
const FLUSH_TIMEOUT = "5 seconds"

const checkTopic = (topic: string): Effect.Effect<void> =>
  TOPIC.test(topic) ? Effect.void : Effect.dieMessage(`not a bus topic: ${JSON.stringify(topic)}`)

const utf8Encoder = new TextEncoder()
const utf8Decoder = new TextDecoder()

/** The bus over connection `nc`, on the subjects of `names`. */
export const makeClusterBus = (nc: NatsConnection, names: NatsNames): ClusterBusService => {
  /** Waits until the server has processed everything sent so far on this connection. */
  const flush = (what: string) =>
    Effect.tryPromise(() => nc.flush()).pipe(
      Effect.timeout(FLUSH_TIMEOUT),
      Effect.catchAll((e) => Effect.logWarning(`cluster bus: ${what} not confirmed by NATS: ${messageOf(e)}`))
    )

  return {
    broadcast: (topic, payload) =>
      Effect.zipRight(
        checkTopic(topic),
        Effect.suspend(() => {
          try {
            nc.publish(names.busSubject(topic), utf8Encoder.encode(JSON.stringify(payload)))
          } catch (e) {
            return Effect.logWarning(`cluster bus: broadcast on ${topic} lost: ${messageOf(e)}`)
          }
          return flush(`broadcast on ${topic}`)
        })
      ),

    subscribe: (topic) =>
      Effect.gen(function* () {
        yield* checkTopic(topic)
        const queue = yield* Effect.acquireRelease(Queue.unbounded<JsonValue>(), Queue.shutdown)
        const sub = yield* Effect.acquireRelease(
          Effect.sync(() => nc.subscribe(names.busSubject(topic))),
          (s) => Effect.sync(() => s.unsubscribe())
        )
        const readable = (msg: Msg) =>
          Effect.try(() => JSON.parse(utf8Decoder.decode(msg.data)) as JsonValue).pipe(
            Effect.flatMap((value) => Queue.offer(queue, value)),
            Effect.catchAll((e) =>
              Effect.logWarning(`cluster bus: unreadable message on ${topic}: ${messageOf(e)}`)
            )
          )
        yield* forEachAsync(sub, readable).pipe(
          Effect.catchAll((e) =>
            Effect.logWarning(`cluster bus: subscription to ${topic} ended: ${messageOf(e)}`)
          ),
          Effect.forkScoped
        )
        yield* flush(`subscription to ${topic}`)
        return queue
      })
  }
}

import { Effect, Either, Schema, type Scope } from "effect"
import type { Redis } from "ioredis"
import { type Notice, NoticeEnvelope, type SharedInvalidation } from "./Invalidation.js"
import { SharedStateUnavailable, type Warn } from "./RedisConnection.js"

/**
 * `SharedInvalidation` over Redis pub/sub, on the channel `rfq:<namespace>:invalidate`. A notice
 * reaches the other hosts within Redis's delivery time (well under a millisecond on a LAN): that
 * is the bound while the hosts are connected.
 *
 * Pub/sub keeps nothing for a subscriber that is away, so a host that may have missed notices
 * treats everything as stale: when its subscription comes back after a break, its own handlers
 * hear `EverythingStale`; and when one of its notices could not be sent, it sends
 * `EverythingStale` to the others as soon as its connection is back. Between the break and the
 * return, the caches' own lifetimes bound staleness (5 s for account standing).
 */

export interface RedisInvalidationOptions {
  /** The connection notices are published on. */
  readonly redis: Redis
  /** A connection of its own, in subscriber mode from now on. */
  readonly subscriber: Redis
  /** `rfq:<namespace>:`. */
  readonly prefix: string
  readonly hostId: string
  readonly warn: Warn
}

export const makeRedisInvalidation = (
  options: RedisInvalidationOptions
): Effect.Effect<SharedInvalidation, SharedStateUnavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const { redis, subscriber, hostId, warn } = options
    const channel = `${options.prefix}invalidate`
    const handlers = new Set<(notice: Notice) => void>()
    const encode = Schema.encodeSync(NoticeEnvelope)
    const decode = Schema.decodeUnknownEither(NoticeEnvelope)

    const deliver = (notice: Notice) => {
      for (const handler of handlers) {
        try {
          handler(notice)
        } catch (error) {
          warn("an invalidation handler failed", error)
        }
      }
    }

    const onMessage = (from: string, text: string) => {
      if (from !== channel) return
      Either.match(decode(text), {
        onLeft: (error) => warn("an invalidation notice could not be read", error),
        onRight: (envelope) => {
          if (envelope.from !== hostId) deliver(envelope.notice)
        }
      })
    }
    subscriber.on("message", onMessage)
    yield* Effect.tryPromise({
      try: () => subscriber.subscribe(channel),
      catch: (error) =>
        new SharedStateUnavailable({
          message: `cannot subscribe to Redis: ${error instanceof Error ? error.message : String(error)}`
        })
    })

    // Any later "ready" is a reconnection (ioredis subscribes again by itself): notices of the
    // break are lost.
    const onSubscriberReady = () => deliver({ _tag: "EverythingStale" })
    subscriber.on("ready", onSubscriberReady)

    let unsent = false
    const publish = (notice: Notice) =>
      Effect.tryPromise(() => redis.publish(channel, encode({ from: hostId, notice })))
    const onReady = () => {
      if (!unsent) return
      unsent = false
      Effect.runFork(
        publish({ _tag: "EverythingStale" }).pipe(
          Effect.catchAll((error) =>
            Effect.sync(() => {
              unsent = true
              warn("invalidation notice not sent", error)
            })
          )
        )
      )
    }
    redis.on("ready", onReady)

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        subscriber.off("message", onMessage)
        subscriber.off("ready", onSubscriberReady)
        redis.off("ready", onReady)
      })
    )

    return {
      broadcast: (notice) =>
        publish(notice).pipe(
          Effect.asVoid,
          Effect.catchAll((error) =>
            Effect.sync(() => {
              unsent = true
              warn("invalidation notice not sent", error)
            })
          )
        ),
      listen: (handler) =>
        Effect.acquireRelease(
          Effect.sync(() => handlers.add(handler)),
          () => Effect.sync(() => handlers.delete(handler))
        ).pipe(Effect.asVoid)
    } satisfies SharedInvalidation
  })

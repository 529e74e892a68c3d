import { Effect, Schema } from "effect"
import type { ClusterConfig } from "../ClusterConfig.js"
import { NoticeEnvelope } from "./Invalidation.js"
import { connectRedis, keyPrefix } from "./RedisConnection.js"

/**
 * The admin command's word to running hosts (multi-host mode): after a change to accounts
 * (a client deactivated, a maker or counterparty added), every host drops its cached account
 * standing and reference data at once (`EverythingStale` on the invalidation channel), instead of
 * waiting up to the caches' 5 s. Sent when the admin runs with the hosts' environment
 * (`RUNNER_ADDRESS` and `REDIS_URL`); without it the caches' lifetime bounds the change, as on one
 * host. A notice that cannot be sent is a warning line, never a failed command: the change is made.
 */
export const announceChange = (cluster: ClusterConfig): Effect.Effect<string | undefined> =>
  Effect.gen(function* () {
    const redis = yield* connectRedis(cluster.redisUrl, "rfq admin")
    const message = Schema.encodeSync(NoticeEnvelope)({ from: "admin", notice: { _tag: "EverythingStale" } })
    yield* Effect.tryPromise(() => redis.publish(`${keyPrefix(cluster.namespace)}invalidate`, message))
    yield* Effect.promise(() => redis.quit()).pipe(Effect.ignore)
    return undefined
  }).pipe(
    Effect.scoped,
    Effect.catchAll((error) =>
      Effect.succeed(
        `warning: running hosts were not told (${error.message}); they see the change within 5 s`
      )
    )
  )

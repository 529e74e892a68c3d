import { EntityId, Sharding, ShardingConfig, ShardId } from "@effect/cluster"
import { Duration, Effect, Layer, Schedule } from "effect"
import { Recovery } from "../engine/Recovery.js"
import { shardOf } from "./ClusterOwnership.js"
import { RfqEntity } from "./RfqEntity.js"

/** How often this host compares the shards it holds with the ones it has taken over. */
export const SHARD_WATCH_INTERVAL_MS = 250

/**
 * Restore, reconcile and expiry per shard: when this host acquires a shard, it adopts the shard's
 * live RFQs (`Recovery.adopt`: expired ones expired once, quotes an MMP trip barred closed, timers
 * re-armed, settlements caught midway reconciled by their allocation keys, the last step's event
 * published again under its id for the stream to deduplicate); when it loses one, it forgets their actors, and their timers, which ask
 * `Ownership` before firing, leave them to the new owner. A shard whose adoption failed (the
 * database away) is tried again next round; until then its RFQs are still served, loaded from
 * storage on demand, and each read expires what is due.
 *
 * Ours, not a cluster feature: `@effect/cluster` 0.60 tells an entity when it starts, not a host
 * when it acquires a shard, and an RFQ with no message for a while still has an expiry to fire.
 */
const watch = Effect.gen(function* () {
  const sharding = yield* Sharding.Sharding
  const config = yield* ShardingConfig.ShardingConfig
  const recovery = yield* Recovery
  const group = RfqEntity.getShardGroup(EntityId.make("0"))
  const shards = Array.from({ length: config.shardsPerGroup }, (_, i) => ShardId.make(group, i + 1))
  const held = new Set<number>()
  const shardNumber = (rfqId: number) => shardOf(sharding, rfqId).id

  const round = Effect.gen(function* () {
    const now = new Set(shards.filter((s) => sharding.hasShardId(s)).map((s) => s.id))
    const lost = [...held].filter((id) => !now.has(id))
    if (lost.length > 0) {
      const gone = new Set(lost)
      for (const id of lost) held.delete(id)
      const released = yield* recovery.release((rfqId) => gone.has(shardNumber(rfqId)))
      yield* Effect.logInfo("shards released").pipe(Effect.annotateLogs({ shards: lost.length, released }))
    }
    const gained = [...now].filter((id) => !held.has(id))
    if (gained.length > 0) {
      const fresh = new Set(gained)
      const adopted = yield* recovery.adopt((rfqId) => fresh.has(shardNumber(rfqId)))
      for (const id of gained) held.add(id)
      yield* Effect.logInfo("shards acquired").pipe(
        Effect.annotateLogs({ shards: gained.length, ...adopted })
      )
    }
  })

  yield* round.pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("shard take-over failed; trying again", cause)),
    Effect.repeat(Schedule.spaced(Duration.millis(SHARD_WATCH_INTERVAL_MS))),
    Effect.forkScoped
  )
})

export const ShardRecoveryLive: Layer.Layer<
  never,
  never,
  Sharding.Sharding | ShardingConfig.ShardingConfig | Recovery
> = Layer.scopedDiscard(watch)

import { EntityId, Sharding, type ShardId } from "@effect/cluster"
import { Effect, Layer } from "effect"
import { Ownership } from "../engine/Ownership.js"
import { entityIdOf, RfqEntity } from "./RfqEntity.js"

/** The cluster's shard of an RFQ (a number in 1..shardsPerGroup of the RFQ entity's group). */
export const shardOf = (sharding: Sharding.Sharding["Type"], rfqId: number): ShardId.ShardId => {
  const entityId = EntityId.make(entityIdOf(rfqId))
  return sharding.getShardId(entityId, RfqEntity.getShardGroup(entityId))
}

/** This host owns an RFQ while it holds the RFQ's shard. */
export const ClusterOwnership: Layer.Layer<Ownership, never, Sharding.Sharding> = Layer.effect(
  Ownership,
  Effect.map(Sharding.Sharding, (sharding) => ({
    shared: true,
    owns: (rfqId: number) => sharding.hasShardId(shardOf(sharding, rfqId))
  }))
)

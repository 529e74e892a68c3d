import type { Layer } from "effect"
import { Layer as L } from "effect"
import { EngineLive } from "../engine/Engine.js"
import { type EngineLayerOptions, engineServicesLayer } from "../engine/EngineLayer.js"
import type { Events } from "../services/Events.js"
import { ClusterOwnership } from "./ClusterOwnership.js"
import { ActiveQuotesOwned } from "./OwnedActiveQuotes.js"
import { RoutedEngineLive } from "./RoutedEngine.js"
import { ShardRecoveryLive } from "./ShardRecovery.js"

/**
 * The engine of one host among several (`RUNNER_ADDRESS` set): the same engine as one host's, with
 * what the hosts share in place of one process's memory: RFQ ownership from `@effect/cluster`'s
 * shards, the event stream (NATS JetStream, given as `events`), the active-quote index in SQL
 * (answered first from the owned RFQs' actors, `OwnedActiveQuotes.ts`). The `Engine` it provides
 * routes each call to the RFQ's owner (`RoutedEngine.ts`); shards are adopted and released as they
 * move (`ShardRecovery.ts`). It needs the cluster's `Sharding` and `ShardingConfig` besides what
 * `makeEngineLayer` needs.
 */
export const makeSharedEngineLayer = <E, R>(
  options: EngineLayerOptions & { readonly events: Layer.Layer<Events, E, R> }
) => {
  const services = engineServicesLayer(options, {
    ownership: ClusterOwnership,
    events: options.events,
    activeQuotes: ActiveQuotesOwned.pipe(L.provide(ClusterOwnership))
  })
  return L.merge(RoutedEngineLive, ShardRecoveryLive).pipe(
    L.provide(EngineLive({ rfqTtlMs: options.rfqTtlMs })),
    L.provideMerge(services)
  )
}

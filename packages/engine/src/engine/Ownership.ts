import { Context, Layer } from "effect"

/**
 * Which RFQs this engine owns: the only engine that keeps their actors in memory, runs their
 * commands and fires their expiry. One engine alone owns every RFQ (`SoleOwnership`). With several
 * hosts, `@effect/cluster` gives each host a set of shards and an RFQ belongs to the host holding its
 * shard (`cluster/ClusterOwnership.ts`); ownership moves when a host joins, leaves or dies.
 *
 * An RFQ this engine does not own is read fresh from storage on every access and never cached, so
 * a read here never shows a state older than its own statement; a write to one (ownership moved
 * while a command was on its way) is refused by the step's guard if the owner wrote first.
 */
export interface OwnershipService {
  readonly owns: (rfqId: number) => boolean
  /** Whether ownership is shared with other engines (several hosts). */
  readonly shared: boolean
}

export class Ownership extends Context.Tag("rfq/Ownership")<Ownership, OwnershipService>() {}

/** One engine owns everything: the single-host service and every test engine. */
export const SoleOwnership: Layer.Layer<Ownership> = Layer.succeed(Ownership, {
  owns: () => true,
  shared: false
})

import type { Effect, Scope } from "effect"
import { Schema } from "effect"

/**
 * What one host tells the others so that their caches do not outlive a change it saw: the bus of
 * multi-host mode for cache invalidation. Kept minimal (two calls, three notices) so that Redis
 * pub/sub (`RedisInvalidation.ts`, what `makeSharedState` uses) or any other broadcast bus (the
 * cluster's NATS core subjects) can back it.
 *
 * Delivery is at most once and unordered between hosts; a host that may have missed notices
 * (its subscription broke) hears `EverythingStale` and drops its caches whole.
 */

/** A token's holder no longer stands (refresh family revoked, client or user inactive). */
export const StandingRefused = Schema.TaggedStruct("StandingRefused", {
  userId: Schema.Number,
  clientId: Schema.optional(Schema.String),
  family: Schema.optional(Schema.String),
  active: Schema.Boolean,
  familyRevoked: Schema.Boolean
})

/** Exchange credentials or makers were written here: the engine's reference caches are stale. */
export const ReferenceDataChanged = Schema.TaggedStruct("ReferenceDataChanged", {})

/** Notices may have been lost: every cache kept for other hosts' changes is stale. */
export const EverythingStale = Schema.TaggedStruct("EverythingStale", {})

export const Notice = Schema.Union(StandingRefused, ReferenceDataChanged, EverythingStale)
export type Notice = typeof Notice.Type

/** The notice on the wire, with the host that sent it (a host ignores its own). */
export const NoticeEnvelope = Schema.parseJson(Schema.Struct({ from: Schema.String, notice: Notice }))

export interface SharedInvalidation {
  /** Tells every other host. Never fails: a notice that cannot be sent is logged. */
  readonly broadcast: (notice: Notice) => Effect.Effect<void>
  /**
   * Calls `handler` with every notice of another host until the scope closes. Handlers run
   * synchronously on delivery and must not throw.
   */
  readonly listen: (handler: (notice: Notice) => void) => Effect.Effect<void, never, Scope.Scope>
}

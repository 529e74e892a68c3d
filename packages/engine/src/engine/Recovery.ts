import { Context, Effect, Layer } from "effect"
import { RfqActors } from "../rfq/RfqActors.js"
import { ActiveQuotes } from "./ActiveQuotes.js"
import { ActorAccess } from "./ActorAccess.js"

export interface RecoveryService {
  /** Live RFQs found in storage at start. */
  readonly restored: number
  /** Of those, the ones caught mid-settlement and reconciled with their venue. */
  readonly reconciled: number
}

/**
 * The engine's start: live RFQs back into memory, those that expired while the process was down
 * expired at once (before anyone can read or quote them), their active quotes indexed, the expiry
 * timers of the open ones re-armed, and trades caught mid-settlement reconciled with the venue by
 * their idempotency keys. It all happens while the layer is built, so before any command runs.
 */
export class Recovery extends Context.Tag("rfq/Recovery")<Recovery, RecoveryService>() {}

const recover = Effect.gen(function* () {
  const actors = yield* RfqActors
  const access = yield* ActorAccess
  const index = yield* ActiveQuotes
  const restored = yield* actors.restoreLive
  for (const actor of [...actors.live.values()]) {
    yield* actor.mailbox.withPermits(1)(actors.expireIfDue(actor))
    yield* index.reindex(actor.state.rfq.id, actor.state.quotes)
    if (actor.value === "open") yield* access.scheduleExpiry(actor.state.rfq.id, actor.state.rfq.expiresAt)
  }
  const settling = [...actors.live.values()].filter((a) => a.value === "settling")
  for (const actor of settling) yield* actor.mailbox.withPermits(1)(access.finishSettlement(actor))
  const service: RecoveryService = { restored, reconciled: settling.length }
  return service
})

export const RecoveryLive: Layer.Layer<Recovery, never, RfqActors | ActorAccess | ActiveQuotes> =
  Layer.effect(Recovery, recover)

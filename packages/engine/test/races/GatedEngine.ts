import { Context, Effect, Exit, Layer, Scope } from "effect"
import type * as fc from "fast-check"
import { mmpLayer } from "../../src/mmp/MmpLayer.js"
import { Engine, EngineLive, type EngineService } from "../../src/engine/Engine.js"
import { SoleOwnership } from "../../src/engine/Ownership.js"
import { ActiveQuotesInMemory } from "../../src/engine/ActiveQuotes.js"
import { SimulatedPricing } from "../../src/pricing/SimulatedPricing.js"
import { RfqStore } from "../../src/rfq/RfqStore.js"
import { SecretBoxLive } from "../../src/security/SecretBox.js"
import { EventsLive } from "../../src/services/Events.js"
import { Venues } from "../../src/services/Venues.js"
import { SqlAccountStoreLive } from "../../src/storage/SqlAccountStore.js"
import { SqlRfqStoreLive } from "../../src/storage/SqlRfqStore.js"
import { SimulatedVenues } from "../../src/venues/SimulatedVenues.js"
import { SqlVenueLedger } from "../../src/venues/SqlVenueLedger.js"
import { type AccountRegistration, VenueAccounts } from "../../src/venues/VenueAccounts.js"
import { type EngineContext, encryptionKeys, rfqTtlMs } from "../support/engineHarness.js"
import type { RunningEngine } from "../model/RfqSystem.js"

/**
 * An engine whose every storage commit and every venue execution first passes a gate. Open, the
 * gate lets everything through; during a race it is a fast-check scheduler, which then decides
 * the order in which commits and executions proceed, so the interleavings are the scheduler's.
 */
export class Gate {
  private pass: ((label: string) => Promise<void>) | undefined
  /** Waits until the scheduler (if any) lets `label` through. */
  readonly wait = (label: string): Promise<void> =>
    this.pass === undefined ? Promise.resolve() : this.pass(label)
  /** From now on `s` decides. */
  scheduleWith(s: fc.Scheduler): void {
    this.pass = (label) => s.schedule(Promise.resolve(), label)
  }
  open(): void {
    this.pass = undefined
  }
}

const passing = (gate: Gate, label: string) => Effect.promise(() => gate.wait(label))

/** `makeEngineLayer`'s composition with the gate in front of `RfqStore.applyStep` and venue executions. */
export const gatedEngineLayer = (venueAccounts: ReadonlyArray<AccountRegistration>, gate: Gate) => {
  const store = Layer.effect(
    RfqStore,
    Effect.map(RfqStore, (s) => ({
      ...s,
      applyStep: (...args: Parameters<typeof s.applyStep>) =>
        Effect.zipRight(passing(gate, `commit ${args[2]} of rfq ${args[0]}`), s.applyStep(...args))
    }))
  ).pipe(Layer.provide(SqlRfqStoreLive))
  const venues = Layer.effect(
    Venues,
    Effect.map(Venues, (v) => ({
      ...v,
      executeBlockTrade: (request: Parameters<typeof v.executeBlockTrade>[0]) =>
        Effect.zipRight(passing(gate, `execute ${request.idempotencyKey}`), v.executeBlockTrade(request))
    }))
  ).pipe(
    Layer.provide(SimulatedVenues.layer()),
    Layer.provideMerge(
      Layer.mergeAll(SimulatedPricing.layer(), VenueAccounts.layer(venueAccounts), SqlVenueLedger.layer)
    )
  )
  const services = Layer.mergeAll(
    store,
    SqlAccountStoreLive,
    venues,
    SecretBoxLive(encryptionKeys),
    EventsLive,
    SoleOwnership,
    ActiveQuotesInMemory,
    mmpLayer()
  )
  return EngineLive({ rfqTtlMs }).pipe(Layer.provideMerge(services))
}

/** `startEngine` over the gated layer. */
export const startGatedEngine = (venueAccounts: ReadonlyArray<AccountRegistration>, gate: Gate) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(gatedEngineLayer(venueAccounts, gate), scope)
    const running: RunningEngine = {
      context: context as unknown as EngineContext,
      engine: Context.get(context, Engine) as EngineService,
      stop: Scope.close(scope, Exit.void)
    }
    return running
  })

import { Effect, Layer } from "effect"
import { Venues, type VenuesService } from "../services/Venues.js"
import { mmpLayer } from "../mmp/MmpLayer.js"
import { SimulatedPricing, type SimulatedPricingOptions } from "../pricing/SimulatedPricing.js"
import { SecretBoxLive } from "../security/SecretBox.js"
import { type Events, EventsLive } from "../services/Events.js"
import { SqlAccountStoreLive } from "../storage/SqlAccountStore.js"
import { SqlRfqStoreLive } from "../storage/SqlRfqStore.js"
import { SimulatedVenues, type SimulatedVenuesOptions } from "../venues/SimulatedVenues.js"
import { SqlVenueLedger } from "../venues/SqlVenueLedger.js"
import { type AccountRegistration, VenueAccounts } from "../venues/VenueAccounts.js"
import { type ActiveQuotes, ActiveQuotesInMemory } from "./ActiveQuotes.js"
import { EngineLive } from "./Engine.js"
import { type Ownership, SoleOwnership } from "./Ownership.js"

/**
 * What several hosts share instead of one process's memory (`cluster/`): who owns which RFQ, the
 * event stream every host feeds its subscribers from, and the active-quote index in SQL.
 */
export interface SharedEngineParts<EO, RO, EE, RE, EA, RA> {
  readonly ownership: Layer.Layer<Ownership, EO, RO>
  readonly events: Layer.Layer<Events, EE, RE>
  readonly activeQuotes: Layer.Layer<ActiveQuotes, EA, RA>
}

export interface EngineLayerOptions {
  /** expiresAt = createdAt + rfqTtlMs. */
  readonly rfqTtlMs: number
  /** The AES-256-GCM key ring for secrets at rest: version → 32-byte key; the highest seals. */
  readonly encryptionKeys: ReadonlyMap<number, Uint8Array>
  /** Venue accounts with special behaviour (permissions, failing executions) for the simulations. */
  readonly venueAccounts?: ReadonlyArray<AccountRegistration>
  readonly pricing?: SimulatedPricingOptions
  readonly venues?: SimulatedVenuesOptions
  /** Told of every venue call and its outcome (metrics). */
  readonly onVenueCall?: (
    venue: string,
    operation: "simulate" | "execute",
    outcome: "ok" | "rejected"
  ) => void
}

/** Wraps the venues so each simulation and execution reports its outcome. */
const observed = (observe: NonNullable<EngineLayerOptions["onVenueCall"]>) =>
  Layer.effect(
    Venues,
    Effect.map(
      Venues,
      (venues): VenuesService => ({
        ...venues,
        simulateBlockTrade: (request) =>
          venues.simulateBlockTrade(request).pipe(
            Effect.tapBoth({
              onFailure: () => Effect.sync(() => observe(request.venue, "simulate", "rejected")),
              onSuccess: () => Effect.sync(() => observe(request.venue, "simulate", "ok"))
            })
          ),
        executeBlockTrade: (request) =>
          venues.executeBlockTrade(request).pipe(
            Effect.tapBoth({
              onFailure: () => Effect.sync(() => observe(request.venue, "execute", "rejected")),
              onSuccess: () => Effect.sync(() => observe(request.venue, "execute", "ok"))
            })
          )
      })
    )
  )

/**
 * The engine over a migrated `SqlClient` with the shipped simulated venues and pricing: everything
 * an application needs besides the database. It also provides the venues, pricing, account
 * registry, ledger and stores, so a host or a test can reach them. A real venue adapter replaces
 * `SimulatedVenues` by providing its own `Venues` layer to `EngineLive`.
 */
/** The services the engine runs on, over a migrated `SqlClient`; `shared` swaps the ones several hosts share. */
export const engineServicesLayer = <EO = never, RO = never, EE = never, RE = never, EA = never, RA = never>(
  options: EngineLayerOptions,
  shared?: SharedEngineParts<EO, RO, EE, RE, EA, RA>
) => {
  const simulated = SimulatedVenues.layer(options.venues)
  const venues = (
    options.onVenueCall === undefined
      ? simulated
      : observed(options.onVenueCall).pipe(Layer.provide(simulated))
  ).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        SimulatedPricing.layer(options.pricing),
        VenueAccounts.layer(options.venueAccounts),
        SqlVenueLedger.layer
      )
    )
  )
  // With several hosts the account store hears of other hosts' writes on the events' bus (the
  // same layer, so the same connection: layers are built once per build).
  const accounts =
    shared === undefined ? SqlAccountStoreLive : SqlAccountStoreLive.pipe(Layer.provide(shared.events))
  // Market-maker protection's notices ride on the same bus with several hosts.
  const mmp = mmpLayer(shared?.events)
  return Layer.mergeAll(
    SqlRfqStoreLive,
    accounts,
    mmp,
    venues,
    SecretBoxLive(options.encryptionKeys),
    shared?.events ?? EventsLive,
    shared?.ownership ?? SoleOwnership,
    shared?.activeQuotes ?? ActiveQuotesInMemory
  )
}

/**
 * The engine over a migrated `SqlClient` with the shipped simulated venues and pricing: everything
 * an application needs besides the database. It also provides the venues, pricing, account
 * registry, ledger and stores, so a host or a test can reach them. A real venue adapter replaces
 * `SimulatedVenues` by providing its own `Venues` layer to `EngineLive`. One engine owns every RFQ
 * here; `cluster/SharedEngineLayer.ts` assembles the engine of one host among several.
 */
export const makeEngineLayer = (options: EngineLayerOptions) =>
  EngineLive({ rfqTtlMs: options.rfqTtlMs }).pipe(Layer.provideMerge(engineServicesLayer(options)))

export type EngineLayerServices = Layer.Layer.Success<ReturnType<typeof makeEngineLayer>>

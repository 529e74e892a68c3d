import { Context, Effect, Layer, type Queue, type Scope } from "effect"
import type { AccountStore } from "../accounts/AccountStore.js"
import { Mmp, type MmpService } from "../mmp/Mmp.js"
import { MmpEnforcerLive } from "../mmp/MmpEnforcer.js"
import type { MmpNotices } from "../mmp/MmpNotices.js"
import { RfqActors, RfqActorsLive } from "../rfq/RfqActors.js"
import type { RfqStore } from "../rfq/RfqStore.js"
import type { SecretBox } from "../security/SecretBox.js"
import { type EngineEvent, Events } from "../services/Events.js"
import type { Pricing } from "../services/Pricing.js"
import type { Venues } from "../services/Venues.js"
import { Accounts, AccountsLive, type AccountsService } from "./Accounts.js"
import type { ActiveQuotes } from "./ActiveQuotes.js"
import { ActorAccessLive } from "./ActorAccess.js"
import type { Ownership } from "./Ownership.js"
import { QuoteCommands, QuoteCommandsLive, type QuoteCommandsService } from "./QuoteCommands.js"
import { Recovery, RecoveryLive } from "./Recovery.js"
import { RfqCommands, RfqCommandsLive, type RfqCommandsService } from "./RfqCommands.js"
import { RfqQueries, RfqQueriesLive, type RfqQueriesService } from "./RfqQueries.js"
import { TradeCommands, TradeCommandsLive, type TradeCommandsService } from "./TradeCommands.js"
import { TradeTape, TradeTapeLive, type TradeTapeService } from "./TradeTape.js"

export interface EngineConfig {
  /** Time an RFQ stays open: expiresAt = createdAt + rfqTtlMs. */
  readonly rfqTtlMs: number
}

/**
 * The engine's front door: a command or query per operation of the spec, each checking the
 * caller's role first. It is the union of the single-concern services below, flat, so a host
 * calls `engine.createRfq`, `engine.trade`, ... without knowing how the engine is cut.
 */
/** Market-maker protection's endpoints (`mmp/Mmp.ts`): a maker desk's users only; viewers read. */
export interface MmpEndpointsService {
  readonly mmpConfig: MmpService["getConfig"]
  readonly setMmpConfig: MmpService["setConfig"]
  readonly deleteMmpConfig: MmpService["deleteConfig"]
  readonly resetMmp: MmpService["reset"]
  readonly mmpStatus: MmpService["status"]
}

export interface EngineService
  extends RfqCommandsService,
    QuoteCommandsService,
    TradeCommandsService,
    RfqQueriesService,
    TradeTapeService,
    AccountsService,
    MmpEndpointsService {
  /** Engine events: subscribe in a scope. */
  readonly events: Effect.Effect<Queue.Dequeue<EngineEvent>, never, Scope.Scope>
  /** Live RFQs held in memory (open or settling). */
  readonly liveCount: () => number
}

export class Engine extends Context.Tag("rfq/Engine")<Engine, EngineService>() {}

const makeEngine = Effect.gen(function* () {
  const actors = yield* RfqActors
  const hub = yield* Events
  const mmp = yield* Mmp
  const engine: EngineService = {
    mmpConfig: mmp.getConfig,
    setMmpConfig: mmp.setConfig,
    deleteMmpConfig: mmp.deleteConfig,
    resetMmp: mmp.reset,
    mmpStatus: mmp.status,
    ...(yield* RfqCommands),
    ...(yield* QuoteCommands),
    ...(yield* TradeCommands),
    ...(yield* RfqQueries),
    ...(yield* TradeTape),
    ...(yield* Accounts),
    events: hub.subscribe,
    liveCount: () => actors.live.size
  }
  return engine
})

/**
 * The engine layer. It needs its stores, venues, pricing, secret box and event hub; it restores
 * live RFQs and reconciles interrupted settlements while it is built (`Recovery`, built before
 * any service that takes commands), and stops its expiry scheduler when its scope closes.
 */
export const EngineLive = (
  config: EngineConfig
): Layer.Layer<Engine | Recovery, never, Exclude<EngineRequirements, Scope.Scope>> => {
  const actors = RfqActorsLive
  const access = ActorAccessLive.pipe(Layer.provideMerge(actors))
  const recovered = RecoveryLive.pipe(Layer.provideMerge(access))
  // A trip's cancellations go through the mailboxes, like any command (`mmp/MmpEnforcer.ts`).
  const enforced = MmpEnforcerLive.pipe(Layer.provideMerge(recovered))
  const services = Layer.mergeAll(
    RfqCommandsLive(config),
    QuoteCommandsLive,
    TradeCommandsLive,
    RfqQueriesLive,
    TradeTapeLive,
    AccountsLive
  ).pipe(Layer.provideMerge(enforced))
  // Recovery stays reachable: with several hosts, shards are adopted and released as they move.
  const recovery = Layer.effectContext(Effect.map(Recovery, (r) => Context.make(Recovery, r)))
  return Layer.merge(Layer.effect(Engine, makeEngine), recovery).pipe(Layer.provide(services))
}

export type EngineRequirements =
  | RfqStore
  | AccountStore
  | Venues
  | Pricing
  | SecretBox
  | Events
  | Ownership
  | ActiveQuotes
  | Mmp
  | MmpNotices
  | Scope.Scope

import { Clock, Duration, Effect, Layer, Option } from "effect"
import { formatDecimal } from "../domain/Instrument.js"
import { waitSpan } from "../services/WaitProbe.js"
import { Pricing } from "../services/Pricing.js"
import {
  type BlockTradeRequest,
  type ExecutedBlockTrade,
  VenueRejection,
  Venues,
  type VenuesService
} from "../services/Venues.js"
import { SimulatedPricing, type SimulatedPricingOptions } from "../pricing/SimulatedPricing.js"
import { blockTradeViolation, type LegView } from "./BlockTradeRules.js"
import { VenueCatalog } from "./Catalog.js"
import { type AccountRegistration, VenueAccounts } from "./VenueAccounts.js"
import { VenueLedger } from "./VenueLedger.js"
import { priceBand } from "./VenueParameters.js"

/**
 * DBT and BULL as simulations with the real venues' rules (docs/venues.md): the catalog relative
 * to the clock, the parameter table, block-trade simulation, and idempotent execution booked in a
 * `VenueLedger`. Needs `Pricing` (marks for the band check), `VenueAccounts` and `VenueLedger`.
 */

export interface SimulatedVenuesOptions {
  /** Time every execution takes before it books (benchmarks, races in tests). Default: none. */
  readonly executionLatency?: Duration.DurationInput
}

/**
 * Runs effects one at a time per key; keys nobody waits on are forgotten. The effect gets the key's
 * entry, where it may leave its result for the callers queued behind it on the same key.
 */
const makeKeyedLock = <B>() => {
  interface Entry {
    readonly semaphore: Effect.Semaphore
    users: number
    result: B | undefined
  }
  const locks = new Map<string, Entry>()
  return <A, E, R>(key: string, effect: (entry: Entry) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      let entry = locks.get(key)
      if (entry === undefined) {
        entry = { semaphore: Effect.unsafeMakeSemaphore(1), users: 0, result: undefined }
        locks.set(key, entry)
      }
      const held = entry
      held.users++
      return held.semaphore
        .withPermits(1)(effect(held))
        .pipe(
          Effect.ensuring(
            Effect.sync(() => {
              if (--held.users === 0) locks.delete(key)
            })
          )
        )
    })
}

export const makeSimulatedVenues = (options: SimulatedVenuesOptions = {}) =>
  Effect.gen(function* () {
    const pricing = yield* Pricing
    const accounts = yield* VenueAccounts
    const ledger = yield* VenueLedger
    const catalog = new VenueCatalog()
    const withKeyLock = makeKeyedLock<ExecutedBlockTrade>()
    const latency =
      options.executionLatency === undefined ? undefined : Duration.decode(options.executionLatency)

    /** Everything the rules look at, as the venue sees it now. */
    const inspect = (request: BlockTradeRequest) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const maker = yield* accounts.lookup(request.venue, request.maker.clientId)
        const taker = yield* accounts.lookup(request.venue, request.taker.clientId)
        const legs = yield* Effect.forEach(request.legs, (leg): Effect.Effect<LegView> => {
          const listed =
            leg.instrument.venue === request.venue
              ? catalog.resolve(
                  request.venue,
                  leg.instrument.instrumentName,
                  leg.instrument.quoteCurrency,
                  now
                )
              : undefined
          if (listed === undefined) return Effect.succeed({ listed, mark: undefined, band: undefined })
          return Effect.map(pricing.mark(listed), (mark) => ({
            listed,
            mark,
            band: priceBand(listed.kind, listed.tickSize, mark)
          }))
        })
        const violation = blockTradeViolation(request, {
          maker: maker.permissions,
          taker: taker.permissions,
          legs
        })
        return { violation, maker, taker, now }
      })

    const reject = (request: BlockTradeRequest, reason: string) =>
      Effect.fail(new VenueRejection({ venue: request.venue, reason }))

    const service: VenuesService = {
      instruments: (venue, filter) =>
        Effect.map(Clock.currentTimeMillis, (now) => catalog.instruments(venue, now, filter)),
      // The hot path of every quote: a clock read and a map lookup, no span.
      resolve: (venue, instrumentName, quoteCurrency) =>
        Effect.map(Clock.currentTimeMillis, (now) =>
          Option.fromNullable(catalog.resolve(venue, instrumentName, quoteCurrency, now))
        ),
      priceBand: (instrument, mark) => priceBand(instrument.kind, instrument.tickSize, mark),
      permissions: (venue, account) =>
        waitSpan("Venues.permissions")(
          Effect.map(accounts.lookup(venue, account.clientId), (found) => found.permissions)
        ),
      simulateBlockTrade: (request) =>
        waitSpan("Venues.simulateBlockTrade")(
          Effect.flatMap(inspect(request), ({ violation }) =>
            violation === undefined ? Effect.void : reject(request, violation)
          )
        ),
      // One ledger round trip for a new key: the rules first (in memory), then the booking, which
      // answers the earlier booking when the key was booked before. A key booked before answers its
      // booking even when the rules would refuse it now (a retry after a crash): looked up only then.
      executeBlockTrade: (request) =>
        waitSpan("Venues.executeBlockTrade")(
          withKeyLock(`${request.venue}|${request.idempotencyKey}`, (entry) =>
            Effect.gen(function* () {
              // Executions of one key queued behind this one's booking share it.
              if (entry.result !== undefined) return entry.result
              if (latency !== undefined) yield* Effect.sleep(latency)
              const { violation, maker, taker } = yield* inspect(request)
              const refusal = violation ?? maker.behaviour.failExecution ?? taker.behaviour.failExecution
              if (refusal !== undefined) {
                const earlier = yield* ledger.find(request.venue, request.idempotencyKey)
                if (Option.isSome(earlier)) return earlier.value
                return yield* reject(request, refusal)
              }
              const executedAt = yield* Clock.currentTimeMillis
              const booked = yield* ledger.record({
                venue: request.venue,
                idempotencyKey: request.idempotencyKey,
                executedAt,
                makerClientId: request.maker.clientId,
                takerClientId: request.taker.clientId,
                legs: request.legs.map((leg) => ({
                  venueName: leg.instrument.venueName,
                  direction: leg.direction,
                  price: formatDecimal(leg.price),
                  amount: formatDecimal(leg.amount)
                }))
              })
              entry.result = booked
              return booked
            })
          )
        ),
      findByKey: (venue, idempotencyKey) => waitSpan("Venues.findByKey")(ledger.find(venue, idempotencyKey)),
      ledger: (venue) => waitSpan("Venues.ledger")(ledger.list(venue))
    }
    return service
  })

export interface InMemoryVenuesOptions extends SimulatedVenuesOptions {
  readonly pricing?: SimulatedPricingOptions
  readonly accounts?: ReadonlyArray<AccountRegistration>
}

export const SimulatedVenues = {
  /** The venues over the `Pricing`, `VenueAccounts` and `VenueLedger` the application provides. */
  layer: (
    options: SimulatedVenuesOptions = {}
  ): Layer.Layer<Venues, never, Pricing | VenueAccounts | VenueLedger> =>
    Layer.effect(Venues, makeSimulatedVenues(options)),
  /**
   * Venues with simulated pricing, an account registry and a ledger, all in memory (tests,
   * throw-away runs). Also provides those three services so a test can register accounts, read
   * marks and inspect the ledger.
   */
  layerInMemory: (
    options: InMemoryVenuesOptions = {}
  ): Layer.Layer<Venues | Pricing | VenueAccounts | VenueLedger> =>
    Layer.effect(Venues, makeSimulatedVenues(options)).pipe(
      Layer.provideMerge(
        Layer.mergeAll(
          SimulatedPricing.layer(options.pricing),
          VenueAccounts.layer(options.accounts),
          VenueLedger.memory
        )
      )
    )
}

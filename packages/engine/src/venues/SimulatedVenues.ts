import { Clock, Duration, Effect, Layer, Option } from "effect"
import { formatDecimal } from "../domain/Instrument.js"
import { Pricing } from "../services/Pricing.js"
import { type BlockTradeRequest, VenueRejection, Venues, type VenuesService } from "../services/Venues.js"
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

/** Runs effects one at a time per key; keys nobody waits on are forgotten. */
const makeKeyedLock = () => {
  const locks = new Map<string, { readonly semaphore: Effect.Semaphore; users: number }>()
  return <A, E, R>(key: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      let entry = locks.get(key)
      if (entry === undefined) {
        entry = { semaphore: Effect.unsafeMakeSemaphore(1), users: 0 }
        locks.set(key, entry)
      }
      const held = entry
      held.users++
      return held.semaphore
        .withPermits(1)(effect)
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
    const withKeyLock = makeKeyedLock()
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
      permissions: Effect.fn("Venues.permissions")(function* (venue, account) {
        return (yield* accounts.lookup(venue, account.clientId)).permissions
      }),
      simulateBlockTrade: Effect.fn("Venues.simulateBlockTrade")(function* (request) {
        const { violation } = yield* inspect(request)
        if (violation !== undefined) return yield* reject(request, violation)
      }),
      executeBlockTrade: Effect.fn("Venues.executeBlockTrade")(function* (request) {
        return yield* withKeyLock(
          `${request.venue}|${request.idempotencyKey}`,
          Effect.gen(function* () {
            const earlier = yield* ledger.find(request.venue, request.idempotencyKey)
            if (Option.isSome(earlier)) return earlier.value
            if (latency !== undefined) yield* Effect.sleep(latency)
            const { violation, maker, taker } = yield* inspect(request)
            if (violation !== undefined) return yield* reject(request, violation)
            const failure = maker.behaviour.failExecution ?? taker.behaviour.failExecution
            if (failure !== undefined) return yield* reject(request, failure)
            const executedAt = yield* Clock.currentTimeMillis
            return yield* ledger.record({
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
          })
        )
      }),
      findByKey: Effect.fn("Venues.findByKey")(function* (venue, idempotencyKey) {
        return yield* ledger.find(venue, idempotencyKey)
      }),
      ledger: Effect.fn("Venues.ledger")(function* (venue) {
        return yield* ledger.list(venue)
      })
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

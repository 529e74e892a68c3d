import { assert, describe, it } from "@effect/vitest"
import { BigDecimal, Cause, Effect, Exit, Fiber, Option, TestClock } from "effect"
import { maxDecimal, minDecimal, roundToStep } from "../../src/domain/Decimal.js"
import type { Direction, QuoteCurrency, SettlementOption } from "../../src/domain/Primitives.js"
import { Pricing } from "../../src/services/Pricing.js"
import {
  type BlockTradeLeg,
  type BlockTradeRequest,
  type VenueAccount,
  VenueRejection,
  Venues
} from "../../src/services/Venues.js"
import { SimulatedVenues } from "../../src/venues/SimulatedVenues.js"
import { VenueAccounts } from "../../src/venues/VenueAccounts.js"

// Sunday 22 Nov 2026, 04:53 UTC; 22NOV26 is the first daily and expires at 08:00 today.
const NOW = Date.UTC(2026, 10, 22, 4, 53)
const maker: VenueAccount = { credentialsId: 1, clientId: "maker-key" }
const taker: VenueAccount = { credentialsId: 2, clientId: "taker-key" }
const dec = BigDecimal.unsafeFromString

const inMemory = SimulatedVenues.layerInMemory()

/** A leg priced at its mark rounded to the tick (inside the band), on a contract the venue lists. */
const leg = (
  venue: SettlementOption,
  name: string,
  quoteCurrency: QuoteCurrency,
  amount: string,
  direction: Direction = "sell"
) =>
  Effect.gen(function* () {
    const venues = yield* Venues
    const instrument = Option.getOrThrow(yield* venues.resolve(venue, name, quoteCurrency))
    const mark = yield* (yield* Pricing).mark(instrument)
    const band = venues.priceBand(instrument, mark)
    const price = minDecimal(band.high, maxDecimal(band.low, roundToStep(mark, instrument.tickSize)))
    return { instrument, direction, price, amount: dec(amount) } satisfies BlockTradeLeg
  })

const optionLeg = (amount = "25") => leg("DBT", "BTC-27DEC30-100000-C", "BTC", amount)
const futureLeg = (amount = "200000") => leg("DBT", "BTC-PERPETUAL", "USDC", amount, "buy")

const request = (legs: ReadonlyArray<BlockTradeLeg>, idempotencyKey = "key-1"): BlockTradeRequest => ({
  venue: "DBT",
  idempotencyKey,
  maker,
  taker,
  legs
})

const rejectionOf = <A>(effect: Effect.Effect<A, VenueRejection, Venues>) =>
  Effect.gen(function* () {
    const exit = yield* Effect.exit(effect)
    if (Exit.isSuccess(exit)) return assert.fail("expected a VenueRejection")
    const error = Option.getOrThrow(Cause.failureOption(exit.cause))
    assert.instanceOf(error, VenueRejection)
    return error
  })

const withPrice = (l: BlockTradeLeg, price: BigDecimal.BigDecimal): BlockTradeLeg => ({ ...l, price })

describe("simulateBlockTrade", () => {
  it.effect("accepts a trade within every rule", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const venues = yield* Venues
      yield* venues.simulateBlockTrade(request([yield* optionLeg(), yield* futureLeg()]))
      assert.strictEqual((yield* venues.ledger("DBT")).length, 0)
    }).pipe(Effect.provide(inMemory))
  )

  const violations: ReadonlyArray<{
    readonly rule: string
    readonly reason: string
    readonly build: Effect.Effect<BlockTradeRequest, never, Venues | Pricing | VenueAccounts>
  }> = [
    { rule: "no legs", reason: "a block trade needs at least one leg", build: Effect.succeed(request([])) },
    {
      rule: "maker is taker",
      reason: "maker and taker must be different accounts (both are maker-key)",
      build: Effect.map(optionLeg(), (l) => ({
        ...request([l]),
        taker: { credentialsId: 9, clientId: "maker-key" }
      }))
    },
    {
      rule: "maker without block trade permission",
      reason: "maker account maker-key has no block trade permission",
      build: Effect.gen(function* () {
        yield* (yield* VenueAccounts).register({
          venue: "DBT",
          clientId: "maker-key",
          permissions: { blockTrade: false }
        })
        return request([yield* optionLeg()])
      })
    },
    {
      rule: "taker without block trade permission",
      reason: "taker account taker-key has no block trade permission",
      build: Effect.gen(function* () {
        yield* (yield* VenueAccounts).register({
          venue: "DBT",
          clientId: "taker-key",
          permissions: { blockTrade: false }
        })
        return request([yield* optionLeg()])
      })
    },
    {
      rule: "a leg of the other venue",
      reason: "leg 2 (BTC_USDC-27DEC30-100000-C) is a BULL contract, not a DBT one",
      build: Effect.gen(function* () {
        return request([yield* optionLeg(), yield* leg("BULL", "BTC-27DEC30-100000-C", "USDC", "25")])
      })
    },
    {
      rule: "a contract that expired",
      reason: "leg 1 (BTC-22NOV26-100000-C) is not listed on DBT",
      build: Effect.gen(function* () {
        const daily = yield* leg("DBT", "BTC-22NOV26-100000-C", "BTC", "25")
        yield* TestClock.setTime(Date.UTC(2026, 10, 22, 8))
        return request([daily])
      })
    },
    {
      rule: "amount zero",
      reason: "leg 1 (BTC-27DEC30-100000-C): amount 0 must be greater than 0",
      build: Effect.map(optionLeg("0"), (l) => request([l]))
    },
    {
      rule: "amount off the step",
      reason: "leg 1 (BTC-27DEC30-100000-C): amount 25.05 is not a multiple of the amount step 0.1",
      build: Effect.map(optionLeg("25.05"), (l) => request([l]))
    },
    {
      rule: "amount below the minimum",
      reason: "leg 1 (BTC-27DEC30-100000-C): amount 24.9 is below the minimum block trade amount 25",
      build: Effect.map(optionLeg("24.9"), (l) => request([l]))
    },
    {
      rule: "future amount below the minimum",
      reason: "leg 2 (BTC_USDC-PERPETUAL): amount 199990 is below the minimum block trade amount 200000",
      build: Effect.gen(function* () {
        return request([yield* optionLeg(), yield* futureLeg("199990")])
      })
    },
    {
      rule: "price off the tick",
      reason: "leg 1 (BTC-27DEC30-100000-C): price 0.25005 is not a multiple of the tick size 0.0001",
      build: Effect.map(optionLeg(), (l) => request([withPrice(l, dec("0.25005"))]))
    }
  ]

  for (const { rule, reason, build } of violations) {
    it.effect(`rejects ${rule}, saying why`, () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const venues = yield* Venues
        const rejection = yield* rejectionOf(venues.simulateBlockTrade(yield* build))
        assert.strictEqual(rejection.reason, reason)
        assert.strictEqual(rejection.venue, "DBT")
      }).pipe(Effect.provide(inMemory))
    )
  }

  it.effect("rejects a price one tick outside the band on either side, naming the band and the mark", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const venues = yield* Venues
      const l = yield* optionLeg()
      const mark = yield* (yield* Pricing).mark(l.instrument)
      const band = venues.priceBand(l.instrument, mark)
      const tick = l.instrument.tickSize
      const where = `the band [${BigDecimal.format(band.low)}, ${BigDecimal.format(band.high)}] around the mark ${BigDecimal.format(mark)}`
      yield* venues.simulateBlockTrade(request([withPrice(l, band.low)]))
      yield* venues.simulateBlockTrade(request([withPrice(l, band.high)]))
      const below = BigDecimal.subtract(band.low, tick)
      const above = BigDecimal.sum(band.high, tick)
      const low = yield* rejectionOf(venues.simulateBlockTrade(request([withPrice(l, below)])))
      assert.strictEqual(
        low.reason,
        `leg 1 (BTC-27DEC30-100000-C): price ${BigDecimal.format(below)} is below ${where}`
      )
      const high = yield* rejectionOf(venues.simulateBlockTrade(request([withPrice(l, above)])))
      assert.strictEqual(
        high.reason,
        `leg 1 (BTC-27DEC30-100000-C): price ${BigDecimal.format(above)} is above ${where}`
      )
    }).pipe(Effect.provide(inMemory))
  )

  it.effect("judges a leg by the venue's own listing, not by the rules the request carries", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const l = yield* optionLeg("25.05")
      const forged = { ...l, instrument: { ...l.instrument, amountStep: dec("0.01") } }
      const rejection = yield* rejectionOf((yield* Venues).simulateBlockTrade(request([forged])))
      assert.include(rejection.reason, "not a multiple of the amount step 0.1")
    }).pipe(Effect.provide(inMemory))
  )
})

describe("executeBlockTrade", () => {
  it.effect("books the trade once, with ids, the execution time and the legs as given", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const venues = yield* Venues
      const legs = [yield* optionLeg(), yield* futureLeg()]
      const trade = yield* venues.executeBlockTrade(request(legs))
      assert.strictEqual(trade.venue, "DBT")
      assert.strictEqual(trade.idempotencyKey, "key-1")
      assert.strictEqual(trade.executedAt, NOW)
      assert.strictEqual(trade.makerClientId, "maker-key")
      assert.strictEqual(trade.takerClientId, "taker-key")
      assert.deepStrictEqual(
        trade.legs.map((l) => [l.venueName, l.direction, l.price, l.amount]),
        legs.map((l) => [
          l.instrument.venueName,
          l.direction,
          BigDecimal.format(l.price),
          BigDecimal.format(l.amount)
        ])
      )
      assert.deepStrictEqual(yield* venues.ledger("DBT"), [trade])
      assert.deepStrictEqual(yield* venues.findByKey("DBT", "key-1"), Option.some(trade))
      assert.deepStrictEqual(yield* venues.ledger("BULL"), [])
      assert.isTrue(Option.isNone(yield* venues.findByKey("BULL", "key-1")))
    }).pipe(Effect.provide(inMemory))
  )

  it.effect("executes a key once: a repeat returns the first result and books nothing", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const venues = yield* Venues
      const first = yield* venues.executeBlockTrade(request([yield* optionLeg()]))
      yield* TestClock.adjust("1 minute")
      const again = yield* venues.executeBlockTrade(request([yield* optionLeg("30")]))
      assert.deepStrictEqual(again, first)
      assert.strictEqual((yield* venues.ledger("DBT")).length, 1)
    }).pipe(Effect.provide(inMemory))
  )

  it.effect("answers a key booked before with its booking, even when the rules refuse the repeat now", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const venues = yield* Venues
      const first = yield* venues.executeBlockTrade(request([yield* optionLeg()]))
      // Below the minimum block amount: refused as a new trade, yet this key was executed before.
      const again = yield* venues.executeBlockTrade(request([yield* optionLeg("24.9")]))
      assert.deepStrictEqual(again, first)
      yield* (yield* VenueAccounts).register({
        venue: "DBT",
        clientId: taker.clientId,
        behaviour: { failExecution: "execution failed: account is being liquidated" }
      })
      assert.deepStrictEqual(yield* venues.executeBlockTrade(request([yield* optionLeg()])), first)
      assert.strictEqual((yield* venues.ledger("DBT")).length, 1)
      const other = yield* rejectionOf(venues.executeBlockTrade(request([yield* optionLeg()], "key-2")))
      assert.include(other.reason, "liquidated")
    }).pipe(Effect.provide(inMemory))
  )

  it.effect("executes a key once when the same key arrives concurrently", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const venues = yield* Venues
      const trade = request([yield* optionLeg()])
      const fibers = yield* Effect.forEach([1, 2, 3, 4, 5], () =>
        Effect.fork(venues.executeBlockTrade(trade))
      )
      yield* TestClock.adjust("1 second")
      const results = yield* Fiber.joinAll(fibers)
      for (const r of results) assert.deepStrictEqual(r, results[0])
      assert.strictEqual((yield* venues.ledger("DBT")).length, 1)
    }).pipe(Effect.provide(SimulatedVenues.layerInMemory({ executionLatency: "1 second" })))
  )

  it.effect("gives every block trade and every leg trade its own id", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const venues = yield* Venues
      const legs = [yield* optionLeg(), yield* futureLeg()]
      const keys = ["a", "b", "c", "d"]
      const trades = yield* Effect.forEach(keys, (k) => venues.executeBlockTrade(request(legs, k)), {
        concurrency: "unbounded"
      })
      assert.strictEqual(new Set(trades.map((t) => t.blockTradeId)).size, keys.length)
      assert.strictEqual(
        new Set(trades.flatMap((t) => t.legs.map((l) => l.tradeId))).size,
        keys.length * legs.length
      )
      assert.deepStrictEqual((yield* venues.ledger("DBT")).map((t) => t.idempotencyKey).sort(), keys)
    }).pipe(Effect.provide(inMemory))
  )

  it.effect("books nothing when the trade breaks a rule", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const venues = yield* Venues
      const rejection = yield* rejectionOf(venues.executeBlockTrade(request([yield* optionLeg("24.9")])))
      assert.include(rejection.reason, "minimum block trade amount 25")
      assert.deepStrictEqual(yield* venues.ledger("DBT"), [])
      assert.isTrue(Option.isNone(yield* venues.findByKey("DBT", "key-1")))
    }).pipe(Effect.provide(inMemory))
  )

  it.effect("lets a flaky account pass simulation and fails each of its executions", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const venues = yield* Venues
      const reason = "execution failed: account is being liquidated"
      yield* (yield* VenueAccounts).register({
        venue: "DBT",
        clientId: "flaky-key",
        behaviour: { failExecution: reason }
      })
      const trade = { ...request([yield* optionLeg()]), taker: { credentialsId: 3, clientId: "flaky-key" } }
      yield* venues.simulateBlockTrade(trade)
      for (const attempt of [1, 2]) {
        const rejection = yield* rejectionOf(venues.executeBlockTrade(trade))
        assert.strictEqual(rejection.reason, reason, `attempt ${attempt}`)
      }
      assert.deepStrictEqual(yield* venues.ledger("DBT"), [])
      // the same account trades normally on the other venue
      yield* venues.executeBlockTrade({
        ...trade,
        venue: "BULL",
        legs: [yield* leg("BULL", "BTC-27DEC30-100000-C", "USDC", "25")]
      })
    }).pipe(Effect.provide(inMemory))
  )
})

describe("permissions and listing", () => {
  it.effect("grants an unknown account everything, and a registered one what it was given, per venue", () =>
    Effect.gen(function* () {
      const venues = yield* Venues
      assert.deepStrictEqual(yield* venues.permissions("DBT", maker), { blockRfq: true, blockTrade: true })
      yield* (yield* VenueAccounts).register({
        venue: "DBT",
        clientId: "maker-key",
        permissions: { blockRfq: false }
      })
      assert.deepStrictEqual(yield* venues.permissions("DBT", maker), { blockRfq: false, blockTrade: true })
      assert.deepStrictEqual(yield* venues.permissions("BULL", maker), { blockRfq: true, blockTrade: true })
    }).pipe(Effect.provide(inMemory))
  )

  it.effect("takes initial registrations from the layer", () =>
    Effect.gen(function* () {
      const venues = yield* Venues
      const perms = yield* venues.permissions("BULL", { credentialsId: 5, clientId: "viewer-key" })
      assert.deepStrictEqual(perms, { blockRfq: true, blockTrade: false })
    }).pipe(
      Effect.provide(
        SimulatedVenues.layerInMemory({
          accounts: [{ venue: "BULL", clientId: "viewer-key", permissions: { blockTrade: false } }]
        })
      )
    )
  )

  it.effect("lists and resolves relative to the clock", () =>
    Effect.gen(function* () {
      const venues = yield* Venues
      const dailyNames = (kind: "option") =>
        Effect.map(
          venues.instruments("DBT", { baseCurrency: "BTC", kind }),
          (is) => new Set(is.map((i) => i.instrumentName))
        )
      yield* TestClock.setTime(NOW)
      assert.isTrue((yield* dailyNames("option")).has("BTC-22NOV26-100000-C"))
      assert.isTrue(Option.isSome(yield* venues.resolve("DBT", "BTC-22NOV26-100000-C", "BTC")))
      yield* TestClock.setTime(Date.UTC(2026, 10, 22, 8))
      assert.isFalse((yield* dailyNames("option")).has("BTC-22NOV26-100000-C"))
      assert.isTrue(Option.isNone(yield* venues.resolve("DBT", "BTC-22NOV26-100000-C", "BTC")))
      assert.isTrue((yield* dailyNames("option")).has("BTC-25NOV26-100000-C"))
    }).pipe(Effect.provide(inMemory))
  )
})

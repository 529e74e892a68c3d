import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { assert, describe, it, layer } from "@effect/vitest"
import { BigDecimal, Effect, Layer, Option, TestClock } from "effect"
import { roundToStep } from "../../src/domain/Decimal.js"
import { SimulatedPricing } from "../../src/pricing/SimulatedPricing.js"
import { Pricing } from "../../src/services/Pricing.js"
import { withMigrations } from "../../src/storage/Database.js"
import * as PgliteClient from "../../src/storage/PgliteClient.js"
import { Venues } from "../../src/services/Venues.js"
import { SimulatedVenues } from "../../src/venues/SimulatedVenues.js"
import { SqlVenueLedger } from "../../src/venues/SqlVenueLedger.js"
import { VenueAccounts } from "../../src/venues/VenueAccounts.js"
import { type BlockTradeBooking, VenueLedger } from "../../src/venues/VenueLedger.js"
import { pgliteTestClientLayer, testDatabases } from "../support/TestDatabases.js"

/** Two PGlite starts on disk: seconds each on a busy machine. */
const RESTART_TIMEOUT = 60_000

const booking = (idempotencyKey: string, overrides: Partial<BlockTradeBooking> = {}): BlockTradeBooking => ({
  venue: "DBT",
  idempotencyKey,
  executedAt: 1_800_000_000_000,
  makerClientId: "maker-key",
  takerClientId: "taker-key",
  legs: [
    { venueName: "BTC-27DEC30-100000-C", direction: "sell", price: "0.2515", amount: "25" },
    { venueName: "BTC-PERPETUAL", direction: "buy", price: "100000.5", amount: "200000" }
  ],
  ...overrides
})

// Each test uses its own keys: the tests of a block share one database.
describe.each(testDatabases)("SqlVenueLedger on $name", ({ layer: database }) => {
  layer(Layer.provideMerge(SqlVenueLedger.layer, database))((it) => {
    it.effect("books a trade and finds it by key", () =>
      Effect.gen(function* () {
        const ledger = yield* VenueLedger
        const trade = yield* ledger.record(booking("find-1"))
        assert.deepStrictEqual(
          trade.legs.map((l) => l.price),
          ["0.2515", "100000.5"]
        )
        assert.deepStrictEqual(yield* ledger.find("DBT", "find-1"), Option.some(trade))
        assert.isTrue(Option.isNone(yield* ledger.find("BULL", "find-1")))
      })
    )

    it.effect("stores each booking as the trade it answers, ids included, whatever its legs", () =>
      Effect.gen(function* () {
        const ledger = yield* VenueLedger
        const legs = booking("x").legs
        for (const [key, some] of [
          ["stored-0", []],
          ["stored-3", [...legs, { ...legs[0]!, amount: "50" }]]
        ] as const) {
          const trade = yield* ledger.record(booking(key, { legs: some }))
          assert.deepStrictEqual(
            trade.legs.map((l) => l.tradeId),
            some.map((_, i) => `${trade.blockTradeId.replace("-BT-", "-T-")}-${i + 1}`)
          )
          assert.deepStrictEqual(yield* ledger.find("DBT", key), Option.some(trade))
        }
      })
    )

    it.effect("books a key once: a second booking returns the first trade unchanged", () =>
      Effect.gen(function* () {
        const ledger = yield* VenueLedger
        const first = yield* ledger.record(booking("once-1"))
        const second = yield* ledger.record(
          booking("once-1", { executedAt: 1_900_000_000_000, takerClientId: "x" })
        )
        assert.deepStrictEqual(second, first)
        assert.strictEqual((yield* ledger.list("DBT")).filter((t) => t.idempotencyKey === "once-1").length, 1)
      })
    )

    it.effect("books a key once under concurrent bookings", () =>
      Effect.gen(function* () {
        const ledger = yield* VenueLedger
        const results = yield* Effect.forEach([1, 2, 3, 4, 5, 6], () => ledger.record(booking("race-1")), {
          concurrency: "unbounded"
        })
        for (const r of results) assert.deepStrictEqual(r, results[0])
        assert.strictEqual((yield* ledger.list("DBT")).filter((t) => t.idempotencyKey === "race-1").length, 1)
      })
    )

    it.effect("lists a venue's trades oldest first, with distinct ids", () =>
      Effect.gen(function* () {
        const ledger = yield* VenueLedger
        const keys = ["order-1", "order-2", "order-3"]
        for (const k of keys) yield* ledger.record(booking(k, { venue: "BULL" }))
        const listed = (yield* ledger.list("BULL")).filter((t) => t.idempotencyKey.startsWith("order-"))
        assert.deepStrictEqual(
          listed.map((t) => t.idempotencyKey),
          keys
        )
        assert.strictEqual(new Set(listed.map((t) => t.blockTradeId)).size, keys.length)
        assert.strictEqual(new Set(listed.flatMap((t) => t.legs.map((l) => l.tradeId))).size, keys.length * 2)
        assert.isTrue((yield* ledger.list("DBT")).every((t) => t.venue === "DBT"))
      })
    )
  })
})

describe("SimulatedVenues over the database ledger", () => {
  it.effect(
    "does not execute a key again after a restart",
    () =>
      Effect.gen(function* () {
        const dir = yield* Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "rfq-venue-ledger-")))
        // The first start loads the migrated snapshot into the empty directory; the restart opens what is there.
        const venuesOnDisk = (start: "first" | "restart") =>
          SimulatedVenues.layer().pipe(
            Layer.provideMerge(Layer.mergeAll(SimulatedPricing.layer(), VenueAccounts.layer())),
            Layer.provideMerge(SqlVenueLedger.layer),
            Layer.provide(
              withMigrations(
                start === "first" ? pgliteTestClientLayer(dir) : PgliteClient.layer({ dataDir: dir })
              )
            )
          )
        const execute = Effect.gen(function* () {
          const venues = yield* Venues
          const instrument = Option.getOrThrow(yield* venues.resolve("DBT", "BTC-27DEC30-100000-C", "BTC"))
          const mark = yield* Effect.flatMap(Pricing, (p) => p.mark(instrument))
          const trade = yield* venues.executeBlockTrade({
            venue: "DBT",
            idempotencyKey: "restart-1",
            maker: { credentialsId: 1, clientId: "maker-key" },
            taker: { credentialsId: 2, clientId: "taker-key" },
            legs: [
              {
                instrument,
                direction: "sell",
                price: roundToStep(mark, instrument.tickSize),
                amount: BigDecimal.unsafeFromString("25")
              }
            ]
          })
          return { trade, ledger: yield* venues.ledger("DBT") }
        })
        yield* TestClock.setTime(Date.UTC(2026, 10, 22, 4, 53))
        const before = yield* Effect.scoped(
          Layer.build(venuesOnDisk("first")).pipe(Effect.flatMap((ctx) => Effect.provide(execute, ctx)))
        )
        yield* TestClock.adjust("1 hour")
        const after = yield* Effect.scoped(
          Layer.build(venuesOnDisk("restart")).pipe(Effect.flatMap((ctx) => Effect.provide(execute, ctx)))
        )
        assert.deepStrictEqual(after.trade, before.trade)
        assert.deepStrictEqual(after.ledger, [before.trade])
        yield* Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
      }),
    RESTART_TIMEOUT
  )
})

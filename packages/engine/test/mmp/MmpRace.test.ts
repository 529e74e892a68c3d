import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Runtime, TestClock } from "effect"
import * as fc from "fast-check"
import { decodeRequest } from "../../src/api/Decode.js"
import { MmpCurrencyRequest } from "../../src/api/MmpRequests.js"
import { createQuote, createSpreadRfq, dbtLedger, rfqAmount } from "../model/RfqSystem.js"
import { seedAndResolve, startEngine, testEpoch } from "../support/engineHarness.js"
import { testDatabases } from "../support/TestDatabases.js"
import { configure, outcome } from "./support.js"

/**
 * Accepts racing a trip: the taker accepts the maker's quotes on several RFQs at once (each RFQ
 * its own mailbox, so they run together). Whatever the interleaving, exactly the fills up to the
 * tripping one execute on the venue; every later accept is refused with `mmp frozen`, books
 * nothing, and no fill is recorded after the tripping one.
 */

const limits = fc.record({
  rfqs: fc.integer({ min: 1, max: 6 }),
  trips: fc.integer({ min: 1, max: 5 }),
  by: fc.constantFrom("tradeCount" as const, "amount" as const)
})

describe.each(testDatabases)("accepts racing an mmp trip on $name", ({ layer }) => {
  it.scoped(
    "no fill after the tripping one executes",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const sql = yield* SqlClient.SqlClient
        const { callers, venueAccounts } = yield* seedAndResolve
        const running = yield* startEngine(venueAccounts)
        const { engine } = running
        const btc = yield* decodeRequest(MmpCurrencyRequest, { baseCurrency: "BTC" })
        const runtime = yield* Effect.runtime<never>()
        const desk = callers.maker1.deskId

        const race = (run: { rfqs: number; trips: number; by: "tradeCount" | "amount" }) =>
          Effect.gen(function* () {
            yield* configure(running, callers.maker1, {
              baseCurrency: "BTC",
              intervalMs: 3_600_000,
              frozenMs: 0,
              ...(run.by === "tradeCount"
                ? { tradeCountLimit: run.trips }
                : { amountLimit: rfqAmount * run.trips - rfqAmount / 2 })
            })
            yield* engine.resetMmp(callers.maker1, btc)
            // Quotes put in the very millisecond of the last trip stay barred, even after a reset
            // in that millisecond (`MmpRules.ts#staleBeforeOfReset`): this round's quotes come after.
            yield* TestClock.adjust(1)
            const quotes: Array<number> = []
            for (let i = 0; i < run.rfqs; i++) {
              const rfqId = yield* createSpreadRfq(engine, callers, "single")
              quotes.push(
                yield* createQuote(running, callers, "maker1", rfqId, {
                  direction: "sell",
                  amount: rfqAmount
                })
              )
            }
            const booked = (yield* dbtLedger(running)).length
            const answers = yield* Effect.forEach(quotes, (q) => outcome(engine.trade(callers.taker, q)), {
              concurrency: "unbounded"
            })
            const filled = Math.min(run.rfqs, run.trips)
            assert.strictEqual(answers.filter((a) => a === "ok").length, filled, answers.join(", "))
            assert.isTrue(
              answers.every((a) => a === "ok" || a === "mmp frozen"),
              answers.join(", ")
            )
            assert.strictEqual((yield* dbtLedger(running)).length - booked, filled)
            const [state] = yield* sql<{
              frozenAt: number | null
              tripFillId: number | null
              clearedThrough: number
            }>`
              SELECT frozen_at AS "frozenAt", trip_fill_id AS "tripFillId", cleared_through AS "clearedThrough"
              FROM mmp_configs WHERE desk_id = ${desk} AND base_currency = 'BTC'`
            assert.strictEqual(state!.frozenAt !== null, run.rfqs >= run.trips)
            const fills = yield* sql<{ id: number }>`SELECT id FROM mmp_fills
              WHERE desk_id = ${desk} AND id > ${state!.clearedThrough} ORDER BY id`
            assert.strictEqual(fills.length, filled)
            if (state!.tripFillId !== null)
              assert.strictEqual(Number(fills.at(-1)!.id), Number(state!.tripFillId))
          })

        yield* race({ rfqs: 6, trips: 2, by: "tradeCount" })
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(limits, (run) => Runtime.runPromise(runtime)(race(run))),
            { numRuns: 6 }
          )
        )
        yield* running.stop
      }).pipe(Effect.provide(layer)),
    { timeout: 180_000 }
  )
})

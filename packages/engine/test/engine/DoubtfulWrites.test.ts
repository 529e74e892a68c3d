import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope, TestClock } from "effect"
import { decodeRequest } from "../../src/api/Decode.js"
import { CreateRfqRequest } from "../../src/api/RfqRequests.js"
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
import { deadlineError } from "../../src/storage/StatementDeadline.js"
import { SimulatedVenues } from "../../src/venues/SimulatedVenues.js"
import { SqlVenueLedger } from "../../src/venues/SqlVenueLedger.js"
import { type AccountRegistration, VenueAccounts } from "../../src/venues/VenueAccounts.js"
import { createQuote, createSpreadRfq, dbtLedger, type RunningEngine } from "../model/RfqSystem.js"
import {
  type EngineContext,
  encryptionKeys,
  rfqTtlMs,
  seedAndResolve,
  testEpoch
} from "../support/engineHarness.js"
import { testDatabases } from "../support/TestDatabases.js"

/**
 * A write whose outcome the engine does not learn: the database stalled past the statement
 * deadline, so the engine got an error, yet the write committed (or did not). The engine must
 * never let its memory disagree with storage: the RFQ is reloaded before it is used again, a
 * settlement left half done is finished by idempotency key (never executed twice), and this
 * happens by itself shortly after, without a client coming back.
 */

/** The next write (or venue execution) fails in the chosen way, once; `skip` steps pass first. */
interface Faults {
  step: "commitThenFail" | "failWithoutCommit" | undefined
  skip: number
  insert: "commitThenFail" | undefined
  execute: "bookThenFail" | undefined
}

const lost = Effect.die(deadlineError(3000, "statement"))

const faultyEngineLayer = (venueAccounts: ReadonlyArray<AccountRegistration>, faults: Faults) => {
  const store = Layer.effect(
    RfqStore,
    Effect.map(RfqStore, (s) => ({
      ...s,
      applyStep: (...args: Parameters<typeof s.applyStep>) =>
        Effect.suspend(() => {
          if (faults.step !== undefined && faults.skip > 0) {
            faults.skip--
            return s.applyStep(...args)
          }
          const fault = faults.step
          faults.step = undefined
          if (fault === "failWithoutCommit") return lost
          return fault === "commitThenFail"
            ? Effect.zipRight(s.applyStep(...args), lost)
            : s.applyStep(...args)
        }),
      insertRfq: (...args: Parameters<typeof s.insertRfq>) =>
        Effect.suspend(() => {
          const fault = faults.insert
          faults.insert = undefined
          return fault === undefined ? s.insertRfq(...args) : Effect.zipRight(s.insertRfq(...args), lost)
        })
    }))
  ).pipe(Layer.provide(SqlRfqStoreLive))
  const venues = Layer.effect(
    Venues,
    Effect.map(Venues, (v) => ({
      ...v,
      executeBlockTrade: (request: Parameters<typeof v.executeBlockTrade>[0]) =>
        Effect.suspend(() => {
          const fault = faults.execute
          faults.execute = undefined
          return fault === undefined
            ? v.executeBlockTrade(request)
            : Effect.zipRight(v.executeBlockTrade(request), lost)
        })
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

const startFaultyEngine = (venueAccounts: ReadonlyArray<AccountRegistration>, faults: Faults) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(faultyEngineLayer(venueAccounts, faults), scope)
    const running: RunningEngine = {
      context: context as unknown as EngineContext,
      engine: Context.get(context, Engine) as EngineService,
      stop: Scope.close(scope, Exit.void)
    }
    return running
  })

const stored = (rfqId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ status: string; seq: number; active: number }>`SELECT r.status,
        (SELECT max(seq)::int FROM rfq_events e WHERE e.rfq_id = r.id) AS seq,
        (SELECT count(*)::int FROM quotes q WHERE q.rfq_id = r.id AND q.status = 'active') AS active
      FROM rfqs r WHERE r.id = ${rfqId}`,
      (rows) => rows[0]
    )
  )

/** Lets the engine's second look run: the scheduler's time, then real time for its database work. */
const letRetriesRun = Effect.gen(function* () {
  for (let i = 0; i < 20; i++) {
    yield* TestClock.adjust("1 second")
    yield* Effect.promise(() => new Promise((done) => setTimeout(done, 25)))
  }
})

const failed = <A, E>(exit: Exit.Exit<A, E>) => Exit.isFailure(exit)

describe.each(testDatabases)("writes whose outcome the engine does not learn, on $name", ({ layer }) => {
  it.effect(
    "a quote that committed, one that did not, an accept and a venue booking cut off: memory follows storage",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const faults: Faults = { step: undefined, skip: 0, insert: undefined, execute: undefined }
        const running = yield* startFaultyEngine(venueAccounts, faults)
        const { engine } = running

        // 1. A quote whose write committed although the engine was told it failed.
        const rfq1 = yield* createSpreadRfq(engine, callers, "single")
        faults.step = "commitThenFail"
        const lostQuote = yield* Effect.exit(
          createQuote(running, callers, "maker1", rfq1, { direction: "sell", amount: 100, label: "kept" })
        )
        assert.isTrue(failed(lostQuote))
        assert.strictEqual((yield* stored(rfq1))!.active, 1)
        // The next read reloads the RFQ: the taker sees the stored quote, and the label is taken.
        const book = (yield* engine.takerQuotes(callers.taker, rfq1)) as Array<any>
        const asks = book.flatMap((b) => b.asks.map((q: any) => q.rfqQuoteId))
        assert.lengthOf(asks, 1)
        const again = yield* Effect.exit(
          createQuote(running, callers, "maker1", rfq1, { direction: "sell", amount: 100, label: "kept" })
        )
        assert.isTrue(failed(again), "the committed quote holds its label")
        // And it trades: the step after the reload continues the stored sequence.
        const traded = (yield* engine.trade(callers.taker, asks[0])) as any
        assert.strictEqual(traded.rfqId, rfq1)
        assert.strictEqual((yield* stored(rfq1))!.status, "filled")

        // 2. A quote whose write did not commit: nothing shows it, its label is free again.
        const rfq2 = yield* createSpreadRfq(engine, callers, "single")
        faults.step = "failWithoutCommit"
        assert.isTrue(
          failed(
            yield* Effect.exit(
              createQuote(running, callers, "maker2", rfq2, {
                direction: "sell",
                amount: 100,
                label: "freed"
              })
            )
          )
        )
        assert.lengthOf((yield* engine.takerQuotes(callers.taker, rfq2)) as Array<any>, 0)
        const retried = yield* createQuote(running, callers, "maker2", rfq2, {
          direction: "sell",
          amount: 100,
          label: "freed"
        })
        assert.isNumber(retried)

        // 3. An accept whose write committed, unanswered: no client comes back, yet the trade is
        // settled shortly after, once.
        const rfq3 = yield* createSpreadRfq(engine, callers, "split")
        const q3 = yield* createQuote(running, callers, "maker1", rfq3, { direction: "sell", amount: 100 })
        faults.step = "commitThenFail"
        assert.isTrue(failed(yield* Effect.exit(engine.trade(callers.taker, q3))))
        assert.strictEqual((yield* stored(rfq3))!.status, "trading")
        yield* letRetriesRun
        assert.strictEqual((yield* stored(rfq3))!.status, "filled")
        const view3 = (yield* engine.getRfq(callers.taker, rfq3)) as any
        assert.strictEqual(view3.status, "filled")
        const booked3 = (yield* dbtLedger(running)).filter((t) => t.idempotencyKey.startsWith(`rfq-${rfq3}-`))
        assert.lengthOf(booked3, 2, "one block trade per account")
        // A client retrying the accept gets no second trade.
        assert.isTrue(failed(yield* Effect.exit(engine.trade(callers.taker, q3))))

        // 4. The venue booked the block trade but its answer was lost: reconciled by key, not rebooked.
        const rfq4 = yield* createSpreadRfq(engine, callers, "single")
        const q4 = yield* createQuote(running, callers, "maker2", rfq4, { direction: "sell", amount: 100 })
        faults.execute = "bookThenFail"
        assert.isTrue(failed(yield* Effect.exit(engine.trade(callers.taker, q4))))
        yield* letRetriesRun
        const booked4 = (yield* dbtLedger(running)).filter((t) => t.idempotencyKey.startsWith(`rfq-${rfq4}-`))
        assert.lengthOf(booked4, 1, "booked once")
        const view4 = (yield* engine.getRfq(callers.taker, rfq4)) as any
        assert.strictEqual(view4.status, "filled")
        assert.strictEqual((yield* stored(rfq4))!.status, "filled")

        // 5. The settlement's own write committed, unanswered (the accept's write passes first).
        const rfq5 = yield* createSpreadRfq(engine, callers, "single")
        const q5 = yield* createQuote(running, callers, "maker3", rfq5, { direction: "sell", amount: 100 })
        const beforeLedger = (yield* dbtLedger(running)).length
        faults.step = "commitThenFail"
        faults.skip = 1
        assert.isTrue(failed(yield* Effect.exit(engine.trade(callers.taker, q5))))
        assert.strictEqual((yield* stored(rfq5))!.status, "filled")
        assert.strictEqual(((yield* engine.getRfq(callers.taker, rfq5)) as any).status, "filled")
        yield* letRetriesRun
        assert.strictEqual((yield* dbtLedger(running)).length, beforeLedger + 1, "executed once")

        // 6. An RFQ insert that committed, unanswered: the retry with the same request id finds it.
        const withId = yield* decodeRequest(CreateRfqRequest, {
          id: 4242,
          baseCurrency: "BTC",
          amount: 100,
          anonymous: false,
          settlementOptions: ["DBT"],
          makers: { DBT: ["maker-1"] },
          legs: [{ direction: "buy", instrumentName: "BTC-27DEC30-90000-C", ratio: 1 }]
        })
        faults.insert = "commitThenFail"
        assert.isTrue(failed(yield* Effect.exit(engine.createRfq(callers.taker, withId))))
        const found = yield* engine.createRfq(callers.taker, withId)
        const rows = yield* Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql<{ id: number }>`SELECT id FROM rfqs WHERE request_id = 4242`
        )
        assert.deepStrictEqual(
          rows.map((r) => Number(r.id)),
          [found.rfqId]
        )
        assert.strictEqual(((yield* engine.getRfq(callers.taker, found.rfqId)) as any).status, "open")

        yield* running.stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )
})

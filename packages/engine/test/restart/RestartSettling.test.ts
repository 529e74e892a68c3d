import { assert, describe, it } from "@effect/vitest"
import { BigDecimal, Clock, Context, Effect, Exit, Layer, Option, Scope, TestClock } from "effect"
import { AccountStore } from "../../src/accounts/AccountStore.js"
import { Engine, type EngineService } from "../../src/engine/Engine.js"
import { makeEngineLayer } from "../../src/engine/EngineLayer.js"
import { venueInstrumentOf } from "../../src/engine/QuoteBuilder.js"
import { planTrade } from "../../src/engine/Settlement.js"
import { makerLegDirection } from "../../src/rfq/QuoteRules.js"
import { restoreSnapshot, stateOf, step } from "../../src/rfq/RfqMachine.js"
import type { AllocationRecord, Caller, QuoteRecord, RfqRecord } from "../../src/rfq/RfqRecord.js"
import { RfqStore } from "../../src/rfq/RfqStore.js"
import type { Pricing } from "../../src/services/Pricing.js"
import { Venues } from "../../src/services/Venues.js"
import type { AccountRegistration } from "../../src/venues/VenueAccounts.js"
import {
  type AccountPlan,
  createQuote,
  createSpreadRfq,
  dbtLedger,
  type RunningEngine
} from "../model/RfqSystem.js"
import {
  type EngineContext,
  encryptionKeys,
  rfqTtlMs,
  seedAndResolve,
  testEpoch
} from "../support/engineHarness.js"
import { testDatabases } from "../support/TestDatabases.js"

/**
 * A crash between the venue's execution and the database write: the accept is committed (the
 * trade, its allocations pending), some allocations were executed on the venue, and then the
 * process died. The next engine must reconcile by idempotency key: an executed allocation is
 * taken as filled without calling the venue again, the others are executed now.
 */

type Services = RfqStore | Venues | AccountStore | Pricing

/** An engine that counts its venue executions. */
const startCountingEngine = (
  venueAccounts: ReadonlyArray<AccountRegistration>,
  executions: { count: number }
) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const layer = makeEngineLayer({
      rfqTtlMs,
      encryptionKeys,
      venueAccounts,
      onVenueCall: (_venue, operation) => {
        if (operation === "execute") executions.count += 1
      }
    })
    const context = yield* Layer.buildWithScope(layer, scope)
    const running: RunningEngine = {
      context: context as unknown as EngineContext,
      engine: Context.get(context, Engine) as EngineService,
      stop: Scope.close(scope, Exit.void)
    }
    return { running, services: context as unknown as Context.Context<Services> }
  })

/** What the engine commits on an accept before it calls the venue: the trade, every allocation pending. */
const commitAccept = (services: Context.Context<Services>, taker: Caller, rfqId: number, quoteId: number) =>
  Effect.gen(function* () {
    const store = Context.get(services, RfqStore)
    const stored = Option.getOrThrow(yield* store.load(rfqId))
    const quote = stored.state.quotes[quoteId]!
    const now = yield* Clock.currentTimeMillis
    const tradeId = yield* store.nextTradeId
    const accounts = stored.state.rfq.settlementAccounts[quote.settlementOption] ?? []
    const allocationIds = yield* Effect.forEach(accounts, () => store.nextAllocationId)
    const trade = yield* planTrade(stored.state.rfq, quote, { tradeId, allocationIds, now })
    const accepted = step(restoreSnapshot(stored.value, stored.state), {
      type: "ACCEPT",
      quoteId,
      caller: taker,
      now,
      trade
    })
    assert.strictEqual(stateOf(accepted.next), "settling")
    yield* store.applyStep(rfqId, stored.seq + 1, "ACCEPT", "settling", accepted.effects)
    return { rfq: stored.state.rfq, quote, trade }
  }).pipe(Effect.provide(services))

/** The block trade of one allocation, executed on the venue directly (the engine's call that made it). */
const executeAllocation = (
  services: Context.Context<Services>,
  rfq: RfqRecord,
  quote: QuoteRecord,
  allocation: AllocationRecord
) =>
  Effect.gen(function* () {
    const accounts = Context.get(services, AccountStore)
    const maker = Option.getOrThrow(yield* accounts.credentials(quote.settlementCredentials))
    const taker = Option.getOrThrow(yield* accounts.credentials(allocation.credentialsId))
    const legs = yield* Effect.forEach(rfq.legs, (leg, i) =>
      Effect.map(venueInstrumentOf("DBT", leg.instrumentName, leg.contracts.DBT), (instrument) => ({
        instrument,
        direction: makerLegDirection(quote.direction, leg),
        price: BigDecimal.unsafeFromString(quote.legs[i]!.price),
        amount: BigDecimal.multiply(
          BigDecimal.unsafeFromString(allocation.amount),
          BigDecimal.unsafeFromString(leg.ratio)
        )
      }))
    )
    return yield* Context.get(services, Venues).executeBlockTrade({
      venue: "DBT",
      idempotencyKey: allocation.idempotencyKey,
      maker: { credentialsId: maker.id, clientId: maker.clientId },
      taker: { credentialsId: taker.id, clientId: taker.clientId },
      legs
    })
  }).pipe(Effect.provide(services))

interface Crash {
  readonly plan: AccountPlan
  /** Allocations (by position) the venue executed before the crash. */
  readonly executed: ReadonlyArray<number>
  /** After the restart: the RFQ's status and each allocation's. */
  readonly status: "filled" | "filledPartial" | "open"
  readonly allocations: ReadonlyArray<"filled" | "failed">
}

const crashes: ReadonlyArray<Crash> = [
  { plan: "split", executed: [0], status: "filled", allocations: ["filled", "filled"] },
  { plan: "split", executed: [], status: "filled", allocations: ["filled", "filled"] },
  { plan: "split", executed: [0, 1], status: "filled", allocations: ["filled", "filled"] },
  { plan: "partial", executed: [0], status: "filledPartial", allocations: ["filled", "failed"] },
  // Every account fails: the trade is refused and the RFQ is open again, its quote active.
  { plan: "refused", executed: [], status: "open", allocations: ["failed"] }
]

describe.each(testDatabases)("restart with a trade caught mid-settlement on $name", ({ layer }) => {
  it.effect(
    "pending allocations are reconciled by key: executed ones are not executed again, the others are executed once",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const executions = { count: 0 }
        const first = yield* startCountingEngine(venueAccounts, executions)

        const pending = yield* Effect.forEach(crashes, (crash) =>
          Effect.gen(function* () {
            const rfqId = yield* createSpreadRfq(first.running.engine, callers, crash.plan)
            const quoteId = yield* createQuote(first.running, callers, "maker1", rfqId, {
              direction: "sell",
              amount: 100
            })
            const { rfq, quote, trade } = yield* commitAccept(first.services, callers.taker, rfqId, quoteId)
            const executed = yield* Effect.forEach(crash.executed, (i) =>
              executeAllocation(first.services, rfq, quote, trade.allocations[i]!)
            )
            return { crash, rfqId, quoteId, trade, executed }
          })
        )
        const keys = pending.flatMap((p) => p.trade.allocations.map((a) => a.idempotencyKey))
        const bookedBefore = (yield* dbtLedger(first.running)).filter((t) => keys.includes(t.idempotencyKey))
        assert.lengthOf(bookedBefore, pending.flatMap((p) => p.executed).length)
        yield* first.running.stop

        executions.count = 0
        const second = yield* startCountingEngine(venueAccounts, executions)
        const notExecuted = pending.flatMap((p) =>
          p.trade.allocations.filter((_, i) => !p.crash.executed.includes(i))
        )
        assert.strictEqual(
          executions.count,
          notExecuted.length,
          "the venue is called only for what it never saw"
        )

        const ledger = yield* dbtLedger(second.running)
        for (const p of pending) {
          const what = `${p.crash.plan} with ${p.crash.executed.length} executed before the crash`
          const view = (yield* second.running.engine.getRfq(callers.taker, p.rfqId)) as any
          assert.strictEqual(view.status, p.crash.status, what)
          p.trade.allocations.forEach((allocation, i) => {
            const booked = ledger.filter((t) => t.idempotencyKey === allocation.idempotencyKey)
            const filled = p.crash.allocations[i] === "filled"
            assert.lengthOf(booked, filled ? 1 : 0, `${what}: allocation ${i} booked once if filled`)
            const before = p.executed[p.crash.executed.indexOf(i)]
            if (before !== undefined) assert.strictEqual(booked[0]?.blockTradeId, before.blockTradeId)
          })
          if (p.crash.status === "open") {
            assert.isUndefined(view.tradeId, what)
            const book = (yield* second.running.engine.takerQuotes(callers.taker, p.rfqId)) as Array<any>
            assert.deepStrictEqual(
              book.flatMap((b) => b.asks.map((q: any) => q.rfqQuoteId)),
              [p.quoteId],
              `${what}: the quote is still active`
            )
          } else {
            assert.strictEqual(view.tradeId, p.trade.id, what)
            assert.deepStrictEqual(
              view.tradeAllocations.map((a: any) => a.status),
              p.crash.allocations,
              what
            )
            assert.sameMembers(
              view.tradeAllocations
                .filter((a: any) => a.status === "filled")
                .map((a: any) => a.exchangeTradeId),
              ledger.filter((t) => t.idempotencyKey.startsWith(`rfq-${p.rfqId}-`)).map((t) => t.blockTradeId),
              `${what}: each filled allocation is its booked block trade`
            )
          }
        }
        const views = yield* Effect.forEach(pending, (p) =>
          second.running.engine.getRfq(callers.taker, p.rfqId)
        )
        yield* second.running.stop

        // Once reconciled, a further restart calls no venue and changes nothing.
        executions.count = 0
        const third = yield* startCountingEngine(venueAccounts, executions)
        assert.strictEqual(executions.count, 0)
        assert.deepStrictEqual(yield* dbtLedger(third.running), ledger)
        assert.deepStrictEqual(
          yield* Effect.forEach(pending, (p) => third.running.engine.getRfq(callers.taker, p.rfqId)),
          views
        )
        yield* third.running.stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )
})

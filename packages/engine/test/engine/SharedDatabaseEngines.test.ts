import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Context, Deferred, Effect, Either, Exit, Fiber, Layer, TestClock } from "effect"
import type { ApiError } from "../../src/domain/Errors.js"
import { ActiveQuotes } from "../../src/engine/ActiveQuotes.js"
import { Engine, EngineLive, type EngineService } from "../../src/engine/Engine.js"
import { engineServicesLayer } from "../../src/engine/EngineLayer.js"
import { SoleOwnership } from "../../src/engine/Ownership.js"
import { RfqStore } from "../../src/rfq/RfqStore.js"
import { EventsLive } from "../../src/services/Events.js"
import { withMigrations } from "../../src/storage/Database.js"
import * as PostgresClient from "../../src/storage/PostgresClient.js"
import { ActiveQuotesSql } from "../../src/storage/SqlActiveQuotes.js"
import type { AccountRegistration } from "../../src/venues/VenueAccounts.js"
import {
  type DemoCallers,
  type EngineContext,
  encryptionKeys,
  rfqTtlMs,
  seedAndResolve,
  testEpoch,
  quoteAtMark,
  spreadRfqRequest
} from "../support/engineHarness.js"
import { postgresTestClientLayer, randomTestSchema, testPostgresUrl } from "../support/TestDatabases.js"

/**
 * Two engines on one PostgreSQL schema, each with its own pool and its own memory, as two hosts
 * have, the active-quote index read from SQL (`ActiveQuotesSql`): the database's unique indexes
 * decide what the engines' own checks cannot see (a label taken on the other engine, a request id
 * created there), answering the spec's errors, never a defect; and a step by an engine whose copy of
 * the RFQ is stale is refused by the step's guard (its event must follow the RFQ's last), written
 * nowhere, and the engine reloads.
 *
 * Over 300 lines on purpose: the five races share one two-engine harness, read together.
 */

const legs = ["BTC-27DEC30-90000-C", "BTC-27DEC30-110000-C"] as const

/** Hooks a test holds an engine at: after the label check, after the request-id lookup. */
interface Holds {
  readonly afterLabelCheck?: Effect.Effect<void>
  readonly afterRequestLookup?: Effect.Effect<void>
}

interface TestEngine {
  readonly engine: EngineService
  readonly context: EngineContext
  /** How many times the engine loaded each RFQ from storage. */
  readonly loads: Map<number, number>
}

/** An engine over `sql` with the SQL index, every RFQ its own (a stale copy is possible). */
const startEngine = (
  sql: SqlClient.SqlClient,
  venueAccounts: ReadonlyArray<AccountRegistration>,
  holds: Holds = {}
) =>
  Effect.gen(function* () {
    const loads = new Map<number, number>()
    const held = Layer.mergeAll(
      Layer.effect(
        ActiveQuotes,
        Effect.map(ActiveQuotes, (index) => ({
          ...index,
          reserveLabel: (deskId: number, label: string, quoteId: number) =>
            Effect.zipLeft(index.reserveLabel(deskId, label, quoteId), holds.afterLabelCheck ?? Effect.void)
        }))
      ),
      Layer.effect(
        RfqStore,
        Effect.map(RfqStore, (store) => ({
          ...store,
          findByRequestId: (userId: number, requestId: number) =>
            Effect.zipLeft(store.findByRequestId(userId, requestId), holds.afterRequestLookup ?? Effect.void),
          load: (rfqId: number) =>
            Effect.zipRight(
              Effect.sync(() => loads.set(rfqId, (loads.get(rfqId) ?? 0) + 1)),
              store.load(rfqId)
            )
        }))
      )
    )
    const services = engineServicesLayer(
      { rfqTtlMs, encryptionKeys, venueAccounts },
      { ownership: SoleOwnership, events: EventsLive, activeQuotes: ActiveQuotesSql }
    )
    const layer = EngineLive({ rfqTtlMs }).pipe(
      Layer.provide(held),
      Layer.provideMerge(services),
      Layer.provide(Layer.succeed(SqlClient.SqlClient, sql))
    )
    const context = yield* Layer.build(layer)
    const engine: TestEngine = {
      engine: Context.get(context, Engine),
      context: context as unknown as EngineContext,
      loads
    }
    return engine
  })

/** A fresh schema with the demo data, and a client of its own for each of two engines. */
const sharedSchema = Effect.gen(function* () {
  const schema = randomTestSchema()
  const first = Context.get(
    yield* Layer.build(withMigrations(postgresTestClientLayer(schema))),
    SqlClient.SqlClient
  )
  const second = Context.get(
    yield* Layer.build(PostgresClient.layer({ url: testPostgresUrl, schema, maxConnections: 4 })),
    SqlClient.SqlClient
  )
  const { callers, venueAccounts } = yield* Effect.provideService(seedAndResolve, SqlClient.SqlClient, first)
  return { first, second, callers, venueAccounts }
})

const rfqRequest = (callers: DemoCallers, requestId: number, amount = 100) =>
  spreadRfqRequest(callers, legs, requestId, amount)

const createRfq = (e: TestEngine, callers: DemoCallers) =>
  Effect.flatMap(rfqRequest(callers, 0), (req) => e.engine.createRfq(callers.taker, req)).pipe(
    Effect.map((r) => r.rfqId)
  )

const quote = (
  e: TestEngine,
  callers: DemoCallers,
  who: "maker1" | "maker2",
  rfqId: number,
  label?: string
) =>
  Effect.gen(function* () {
    const req = yield* quoteAtMark(e.context, rfqId, legs, label === undefined ? {} : { label })
    return (yield* e.engine.createQuote(callers[who], req)).rfqQuoteId
  })

/** What storage holds of an RFQ's steps: its last event's seq and its event count. */
const stepsOf = (sql: SqlClient.SqlClient, rfqId: number) =>
  Effect.map(
    sql<{ last: number; events: number }>`SELECT max(e.seq) AS last, count(*) AS events
      FROM rfq_events e WHERE e.rfq_id = ${rfqId}`,
    ([row]) => [Number(row!.last), Number(row!.events)]
  )

const activeWithLabel = (sql: SqlClient.SqlClient, deskId: number, label: string) =>
  Effect.map(
    sql<{ id: number }>`SELECT id FROM quotes WHERE maker_desk_id = ${deskId} AND label = ${label}
      AND status = 'active'`,
    (rows) => rows.map((r) => Number(r.id))
  )

const isApiError = (exit: Exit.Exit<unknown, ApiError>, message: string) =>
  Exit.isFailure(exit) &&
  Either.match(Cause.failureOrCause(exit.cause), {
    onLeft: (error) => error.message === message,
    onRight: () => false
  })

/** A latch: `reached` once the engine gets there, which then waits for `release`. */
const latch = Effect.gen(function* () {
  const reached = yield* Deferred.make<void>()
  const release = yield* Deferred.make<void>()
  const hold = Effect.zipRight(Deferred.succeed(reached, undefined), Deferred.await(release))
  return { reached, release, hold }
})

describe("two engines on one PostgreSQL schema", () => {
  it.scoped(
    "a label taken on the other engine after this one's check: the unique index refuses the step, 400, nothing written, no doubt",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { first, second, callers, venueAccounts } = yield* sharedSchema
        const held = yield* latch
        let holding = true
        const a = yield* startEngine(first, venueAccounts)
        const b = yield* startEngine(second, venueAccounts, {
          afterLabelCheck: Effect.suspend(() => (holding ? held.hold : Effect.void))
        })
        const rfqA = yield* createRfq(a, callers)
        const rfqB = yield* createRfq(b, callers)
        const loadsBefore = b.loads.get(rfqB) ?? 0

        // B checks the label (free), then A takes it, then B writes.
        const onB = yield* Effect.fork(Effect.exit(quote(b, callers, "maker1", rfqB, "L")))
        yield* Deferred.await(held.reached)
        holding = false
        const winner = yield* quote(a, callers, "maker1", rfqA, "L")
        yield* Deferred.succeed(held.release, undefined)
        const lost = yield* Fiber.join(onB)

        assert.isTrue(isApiError(lost, "a quote with the same clientQuoteId already exists"), String(lost))
        assert.deepStrictEqual(yield* activeWithLabel(first, callers.maker1.deskId, "L"), [winner])
        assert.deepStrictEqual(yield* stepsOf(first, rfqB), [1, 1])
        // B's RFQ is not in doubt: its next command runs on its snapshot, without reloading it.
        yield* quote(b, callers, "maker1", rfqB, "M")
        assert.strictEqual(b.loads.get(rfqB) ?? 0, loadsBefore)
        assert.deepStrictEqual(yield* stepsOf(first, rfqB), [2, 2])
      }),
    { timeout: 120_000 }
  )

  it.scoped(
    "the same label quoted on two RFQs through two engines at once: exactly one wins, the other is told it is taken",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { first, second, callers, venueAccounts } = yield* sharedSchema
        const a = yield* startEngine(first, venueAccounts)
        const b = yield* startEngine(second, venueAccounts)
        const rfqA = yield* createRfq(a, callers)
        const rfqB = yield* createRfq(b, callers)
        for (let round = 0; round < 20; round++) {
          const label = `race-${round}`
          const [onA, onB] = yield* Effect.all(
            [
              Effect.exit(quote(a, callers, "maker2", rfqA, label)),
              Effect.exit(quote(b, callers, "maker2", rfqB, label))
            ],
            { concurrency: 2 }
          )
          const won = [onA, onB].filter(Exit.isSuccess)
          assert.strictEqual(won.length, 1, `round ${round}: ${String(onA)} ${String(onB)}`)
          const lost = Exit.isSuccess(onA) ? onB : onA
          assert.isTrue(isApiError(lost, "a quote with the same clientQuoteId already exists"), String(lost))
          assert.deepStrictEqual(yield* activeWithLabel(first, callers.maker2.deskId, label), [
            (won[0] as Exit.Success<number, ApiError>).value
          ])
        }
      }),
    { timeout: 120_000 }
  )

  it.scoped(
    "a create under a request id the other engine created after this one's lookup answers as a retry: one RFQ",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { first, second, callers, venueAccounts } = yield* sharedSchema
        const a = yield* startEngine(first, venueAccounts)
        let held = yield* latch
        const b = yield* startEngine(second, venueAccounts, {
          afterRequestLookup: Effect.suspend(() => held.hold)
        })
        const rfqsOf = (requestId: number) =>
          Effect.map(
            first<{ id: number }>`SELECT id FROM rfqs WHERE taker_user_id = ${callers.taker.userId}
              AND request_id = ${requestId}`,
            (rows) => rows.map((r) => Number(r.id))
          )

        // The same body: B answers A's RFQ.
        const same = yield* rfqRequest(callers, 7001)
        const onB = yield* Effect.fork(Effect.exit(b.engine.createRfq(callers.taker, same)))
        yield* Deferred.await(held.reached)
        const created = yield* a.engine.createRfq(callers.taker, same)
        yield* Deferred.succeed(held.release, undefined)
        assert.deepStrictEqual(yield* Fiber.join(onB), Exit.succeed(created))
        assert.deepStrictEqual(yield* rfqsOf(7001), [created.rfqId])

        // Another body: B is refused as a retry with another body is.
        held = yield* latch
        const other = yield* Effect.fork(
          Effect.exit(
            Effect.flatMap(rfqRequest(callers, 7002, 50), (req) => b.engine.createRfq(callers.taker, req))
          )
        )
        yield* Deferred.await(held.reached)
        const firstOf7002 = yield* a.engine.createRfq(callers.taker, yield* rfqRequest(callers, 7002))
        yield* Deferred.succeed(held.release, undefined)
        const refused = yield* Fiber.join(other)
        assert.isTrue(
          Exit.isFailure(refused) &&
            Either.match(Cause.failureOrCause(refused.cause), {
              onLeft: (e) =>
                e.message === "invalid request" &&
                e.reason?.includes("id: request id 7002 was already used with a different body") === true,
              onRight: () => false
            }),
          String(refused)
        )
        assert.deepStrictEqual(yield* rfqsOf(7002), [firstOf7002.rfqId])
      }),
    { timeout: 120_000 }
  )

  it.scoped(
    "creates under one request id through two engines at once: one RFQ, both answer its id",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { first, second, callers, venueAccounts } = yield* sharedSchema
        const a = yield* startEngine(first, venueAccounts)
        const b = yield* startEngine(second, venueAccounts)
        for (let round = 0; round < 20; round++) {
          const req = yield* rfqRequest(callers, 8000 + round)
          const [onA, onB] = yield* Effect.all(
            [a.engine.createRfq(callers.taker, req), b.engine.createRfq(callers.taker, req)],
            { concurrency: 2 }
          )
          assert.strictEqual(onA.rfqId, onB.rfqId)
          const rows = yield* first<{ n: number }>`SELECT count(*) AS n FROM rfqs
          WHERE taker_user_id = ${callers.taker.userId} AND request_id = ${8000 + round}`
          assert.strictEqual(Number(rows[0]!.n), 1)
        }
      }),
    { timeout: 120_000 }
  )

  it.scoped(
    "a step by an engine holding a stale copy of the RFQ is refused by its guard: nothing written, the engine reloads",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { first, second, callers, venueAccounts } = yield* sharedSchema
        const a = yield* startEngine(first, venueAccounts)
        const b = yield* startEngine(second, venueAccounts)
        const rfqId = yield* createRfq(a, callers)
        // B holds the RFQ as it was created; A then steps it.
        yield* b.engine.getRfq(callers.taker, rfqId)
        const ask = yield* quote(a, callers, "maker1", rfqId)
        assert.deepStrictEqual(yield* stepsOf(first, rfqId), [2, 2])

        const stale = yield* Effect.exit(quote(b, callers, "maker2", rfqId))
        assert.isTrue(Exit.isFailure(stale) && Cause.isDie(stale.cause), String(stale))
        assert.deepStrictEqual(yield* stepsOf(first, rfqId), [2, 2])
        const quoted = yield* first<{ id: number }>`SELECT id FROM quotes WHERE rfq_id = ${rfqId}`
        assert.deepStrictEqual(
          quoted.map((q) => Number(q.id)),
          [ask]
        )

        // B reloads before its next read or command: it sees A's quote, and its own step now writes.
        const book = (yield* b.engine.takerQuotes(callers.taker, rfqId)) as Array<any>
        assert.deepStrictEqual(
          book.flatMap((option) => option.asks.map((q: any) => q.rfqQuoteId)),
          [ask]
        )
        yield* quote(b, callers, "maker2", rfqId)
        assert.deepStrictEqual(yield* stepsOf(first, rfqId), [3, 3])
      }),
    { timeout: 120_000 }
  )
})

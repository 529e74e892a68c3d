import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, TestClock } from "effect"
import { decodeRequest } from "../../src/api/Decode.js"
import { ListQuotesQuery } from "../../src/api/Queries.js"
import type { ApiError } from "../../src/domain/Errors.js"
import { messages } from "../model/RfqModel.js"
import {
  type AccountPlan,
  createQuote,
  createSpreadRfq,
  dbtLedger,
  type QuoteTerms,
  type RunningEngine
} from "../model/RfqSystem.js"
import {
  type DemoCallers,
  rfqTtlMs,
  seedAndResolve,
  startEngine,
  testEpoch
} from "../support/engineHarness.js"
import { testDatabases } from "../support/TestDatabases.js"

/**
 * The engine stopped and started on the same database with RFQs in every state: everything each
 * party can read is the same after the restart, no venue call is made again, and the RFQs go on
 * from where they were.
 */

const refusal = <A>(result: Either.Either<A, ApiError>) =>
  Either.isLeft(result) ? result.left.message : "ok"

/** What a read answers, as plain data: the body, or the error message. */
const answer = <A>(read: Effect.Effect<A, ApiError>) =>
  Effect.map(Effect.either(read), (r) => (Either.isLeft(r) ? { error: r.left.message } : { body: r.right }))

/** Everything the parties of `rfqIds` can read about them, as they would read it. */
const readable = (running: RunningEngine, callers: DemoCallers, rfqIds: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const { engine } = running
    const out: Record<string, unknown> = {}
    for (const id of rfqIds) {
      out[`taker rfq ${id}`] = yield* answer(engine.getRfq(callers.taker, id))
      out[`maker rfq ${id}`] = yield* answer(engine.getRfq(callers.maker1, id))
      out[`taker book ${id}`] = yield* answer(engine.takerQuotes(callers.taker, id))
      for (const maker of ["maker1", "maker2"] as const) {
        const query = yield* decodeRequest(ListQuotesQuery, { rfqId: id })
        out[`${maker} quotes ${id}`] = yield* engine.listQuotes(callers[maker], query)
      }
    }
    out.ledger = yield* dbtLedger(running)
    return out
  })

describe.each(testDatabases)("restart in every RFQ state on $name", ({ layer }) => {
  it.effect(
    "open (with quotes, or after a refused trade), filled, filledPartial, cancelled, expired and deleted RFQs read the same after a restart and go on from there",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const first = yield* startEngine(venueAccounts)
        const { engine } = first
        const rfq = (plan: AccountPlan) => createSpreadRfq(engine, callers, plan)
        const quote = (maker: "maker1" | "maker2", rfqId: number, terms: QuoteTerms) =>
          createQuote(first, callers, maker, rfqId, terms)
        const ask = { direction: "sell", amount: 100 } as const

        const expired = yield* rfq("single")
        yield* quote("maker1", expired, { ...ask, label: "gone" })
        yield* TestClock.adjust(rfqTtlMs)
        assert.strictEqual(((yield* engine.getRfq(callers.taker, expired)) as any).status, "expired")

        const open = yield* rfq("split")
        const openAsk = yield* quote("maker1", open, { ...ask, label: "kept" })
        yield* quote("maker2", open, { direction: "buy", amount: 80 })
        const refused = yield* rfq("refused")
        const refusedAsk = yield* quote("maker2", refused, ask)
        assert.strictEqual(
          refusal(yield* Effect.either(engine.trade(callers.taker, refusedAsk))),
          messages.invalid
        )
        const filled = yield* rfq("split")
        const filledAsk = yield* quote("maker1", filled, ask)
        yield* engine.trade(callers.taker, filledAsk)
        const partial = yield* rfq("partial")
        yield* engine.trade(callers.taker, yield* quote("maker2", partial, { ...ask, amount: 80 }))
        const cancelled = yield* rfq("single")
        yield* quote("maker1", cancelled, ask)
        yield* engine.cancelRfq(callers.taker, cancelled)
        const deleted = yield* rfq("single")
        yield* engine.cancelRfq(callers.taker, deleted)
        yield* engine.deleteRfq(callers.taker, deleted)

        const all = [expired, open, refused, filled, partial, cancelled, deleted]
        const before = yield* readable(first, callers, all)
        assert.deepStrictEqual(
          all.map((id) => {
            const read = before[`taker rfq ${id}`] as { body?: { status: string }; error?: string }
            return read.body?.status ?? read.error
          }),
          ["expired", "open", "open", "filled", "filledPartial", "cancelled", messages.notFound],
          "every state is there before the restart"
        )
        yield* first.stop
        const second = yield* startEngine(venueAccounts)
        assert.deepStrictEqual(yield* readable(second, callers, all), before, "nothing read differs")

        // ...and each RFQ goes on from its state.
        const again = second.engine
        const status = (id: number) => Effect.map(again.getRfq(callers.taker, id), (v) => (v as any).status)
        const relabel = yield* Effect.either(
          createQuote(second, callers, "maker1", refused, { ...ask, label: "kept" })
        )
        assert.strictEqual(refusal(relabel), messages.duplicateLabel, "an active quote keeps its label")
        assert.strictEqual(
          refusal(
            yield* Effect.either(createQuote(second, callers, "maker1", refused, { ...ask, label: "gone" }))
          ),
          "ok",
          "an expired quote's label is free"
        )
        assert.strictEqual(
          refusal(yield* Effect.either(again.trade(callers.taker, refusedAsk))),
          messages.invalid
        )
        assert.strictEqual(yield* status(refused), "open")
        // The filled quote's taker is told the RFQ is no longer open.
        assert.strictEqual(
          refusal(yield* Effect.either(again.trade(callers.taker, filledAsk))),
          messages.invalid
        )
        assert.strictEqual(
          refusal(yield* Effect.either(again.cancelRfq(callers.taker, filled))),
          messages.cannotCancel
        )
        assert.strictEqual(
          refusal(yield* Effect.either(again.cancelRfq(callers.taker, expired))),
          messages.expired
        )
        assert.strictEqual(
          refusal(yield* Effect.either(again.cancelRfq(callers.taker, deleted))),
          messages.notFound
        )
        yield* again.deleteRfq(callers.taker, cancelled)
        const traded = yield* again.trade(callers.taker, openAsk)
        assert.lengthOf(traded.trades, 2)
        assert.strictEqual(yield* status(open), "filled")
        const ledger = yield* dbtLedger(second)
        assert.strictEqual(ledger.length, (before.ledger as ReadonlyArray<unknown>).length + 2)

        // A second restart keeps what the restored engine did.
        const now = [open, refused, cancelled]
        const after = yield* readable(second, callers, now)
        yield* second.stop
        const third = yield* startEngine(venueAccounts)
        assert.deepStrictEqual(yield* readable(third, callers, now), after)
        yield* third.stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )
})

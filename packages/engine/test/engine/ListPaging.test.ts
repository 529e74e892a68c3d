import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, TestClock } from "effect"
import { decodeRequest } from "../../src/api/Decode.js"
import { CreateRfqRequest } from "../../src/api/RfqRequests.js"
import type { EngineService } from "../../src/engine/Engine.js"
import type { RfqId } from "../../src/domain/Primitives.js"
import type { Caller } from "../../src/rfq/RfqRecord.js"
import {
  type DemoCallers,
  type EngineContext,
  seedAndResolve,
  startEngine,
  testEpoch,
  quoteAtMark
} from "../support/engineHarness.js"
import { testDatabases } from "../support/TestDatabases.js"

/**
 * Issue 12, classes 6 and 10: list paging. Every page size over every list size returns each item
 * exactly once, newest first, with cursor 0 on the last page (also when it is exactly full) and
 * never an empty page after a non-zero cursor; a cursor the caller could not have received is
 * answered exactly like one that names nothing, before and after a restart.
 */

const legs = ["BTC-27DEC30-90000-C", "BTC-27DEC30-110000-C"]

const createRfq = (engine: EngineService, callers: DemoCallers, makers: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const req = yield* decodeRequest(CreateRfqRequest, {
      id: 0,
      baseCurrency: "BTC",
      amount: 100,
      anonymous: false,
      settlementOptions: ["DBT"],
      makers: { DBT: makers },
      legs: [
        { direction: "buy", instrumentName: legs[0], ratio: 1 },
        { direction: "sell", instrumentName: legs[1], ratio: 1 }
      ]
    })
    return (yield* engine.createRfq(callers.taker, req)).rfqId
  })

const createQuote = (engine: EngineService, ctx: EngineContext, maker: Caller, rfqId: number) =>
  Effect.gen(function* () {
    const req = yield* quoteAtMark(ctx, rfqId, legs)
    return (yield* engine.createQuote(maker, req)).rfqQuoteId
  })

interface Page {
  readonly totalResults: number
  readonly cursor: number
  readonly results: ReadonlyArray<{ readonly rfqId: number; readonly rfqQuoteId?: number }>
}

/** Pages through a list with `limit`; checks the paging rules and returns the ids in order. */
const pageThrough = (list: (cursor: number | undefined) => Effect.Effect<unknown, unknown>, what: string) =>
  Effect.gen(function* () {
    const ids: Array<number> = []
    let cursor: number | undefined
    for (let pages = 0; pages < 100; pages++) {
      const page = (yield* list(cursor)) as Page
      if (cursor !== undefined)
        assert.isAbove(page.results.length, 0, `${what}: empty page after cursor ${cursor}`)
      ids.push(...page.results.map((r) => r.rfqQuoteId ?? r.rfqId))
      if (page.cursor === 0) return { ids, total: page.totalResults }
      assert.strictEqual(page.cursor, ids.at(-1), `${what}: the cursor is the page's last item`)
      cursor = page.cursor
    }
    assert.fail(`${what}: paging did not end`)
  })

describe.each(testDatabases)("list paging on $name", ({ layer }) => {
  it.effect(
    "every list size and page size: each item once, newest first, cursor 0 on the last page",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const { engine, context, stop } = yield* startEngine(venueAccounts)
        const rfqs: Array<number> = []
        const quotes: Array<number> = []
        for (let size = 0; size <= 7; size++) {
          if (size > 0) {
            const rfqId = yield* createRfq(engine, callers, ["maker-1"])
            rfqs.unshift(rfqId)
            quotes.unshift(yield* createQuote(engine, context, callers.maker1, rfqId))
            // Two items per millisecond: the keyset must break ties on the id.
            if (size % 2 === 0) yield* TestClock.adjust(1)
          }
          for (let limit = 1; limit <= size + 2; limit++) {
            const what = `size ${size}, limit ${limit}`
            const asTaker = yield* pageThrough(
              (cursor) =>
                engine.listRfqs(callers.taker, { limit, ...(cursor === undefined ? {} : { cursor }) }),
              `RFQs ${what}`
            )
            assert.deepStrictEqual(asTaker, { ids: rfqs, total: size }, `RFQs ${what}`)
            const asMaker = yield* pageThrough(
              (cursor) =>
                engine.listRfqs(callers.maker1, {
                  limit,
                  role: "maker",
                  ...(cursor === undefined ? {} : { cursor })
                }),
              `maker RFQs ${what}`
            )
            assert.deepStrictEqual(asMaker, { ids: rfqs, total: size }, `maker RFQs ${what}`)
            const myQuotes = yield* pageThrough(
              (cursor) =>
                engine.listQuotes(callers.maker1, { limit, ...(cursor === undefined ? {} : { cursor }) }),
              `quotes ${what}`
            )
            assert.deepStrictEqual(myQuotes, { ids: quotes, total: size }, `quotes ${what}`)
          }
        }
        yield* stop
      }).pipe(Effect.provide(layer)),
    { timeout: 240_000 }
  )

  it.effect(
    "a cursor the caller could not have received is answered like one that names nothing",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        let running = yield* startEngine(venueAccounts)
        const forMaker1 = yield* createRfq(running.engine, callers, ["maker-1"])
        const forMaker2 = yield* createRfq(running.engine, callers, ["maker-2"])
        const deleted = yield* createRfq(running.engine, callers, ["maker-1"])
        yield* running.engine.cancelRfq(callers.taker, deleted)
        yield* running.engine.deleteRfq(callers.taker, deleted)
        const quoteOfMaker1 = yield* createQuote(running.engine, running.context, callers.maker1, forMaker1)
        const missing = 987_654

        /** The error body of a list call with `cursor`, with the cursor's number taken out. */
        const refusal = (call: Effect.Effect<unknown, { toBody: () => unknown }>, cursor: number) =>
          Effect.map(Effect.either(call), (outcome) =>
            Either.isRight(outcome)
              ? "accepted"
              : JSON.stringify(outcome.left.toBody()).replaceAll(String(cursor), "N")
          )
        const rfqCursor = (engine: EngineService, caller: Caller, cursor: number) =>
          refusal(engine.listRfqs(caller, { limit: 10, cursor }), cursor)
        const quoteCursor = (engine: EngineService, caller: Caller, cursor: number) =>
          refusal(engine.listQuotes(caller, { limit: 10, cursor }), cursor)

        for (let round = 0; round < 2; round++) {
          const { engine } = running
          const nothing = yield* rfqCursor(engine, callers.maker3, missing)
          assert.include(nothing, "cursor: N is not a cursor of this list")
          // Not invited, another desk's, or deleted: exactly the answer for an id that names nothing.
          for (const [caller, cursor] of [
            [callers.maker3, forMaker1],
            [callers.maker3, forMaker2],
            [callers.maker2, forMaker1],
            [callers.maker1, forMaker2],
            [callers.maker1, deleted],
            [callers.taker, deleted]
          ] as const) {
            assert.strictEqual(yield* rfqCursor(engine, caller, cursor), nothing, `rfq cursor ${cursor}`)
          }
          // The parties of an RFQ may page from it.
          assert.strictEqual(yield* rfqCursor(engine, callers.maker1, forMaker1), "accepted")
          assert.strictEqual(yield* rfqCursor(engine, callers.taker, forMaker2), "accepted")

          const noQuote = yield* quoteCursor(engine, callers.maker2, missing)
          assert.include(noQuote, "cursor: N is not a cursor of this list")
          assert.strictEqual(yield* quoteCursor(engine, callers.maker2, quoteOfMaker1), noQuote)
          assert.strictEqual(yield* quoteCursor(engine, callers.taker, quoteOfMaker1), noQuote)
          assert.strictEqual(yield* quoteCursor(engine, callers.maker1, quoteOfMaker1), "accepted")

          // The rfqId filter of the quote list: another desk's RFQ and no RFQ look the same.
          const empty = { totalResults: 0, cursor: 0, results: [] }
          assert.deepStrictEqual(
            yield* engine.listQuotes(callers.maker2, { limit: 10, rfqId: forMaker1 as RfqId }),
            empty
          )
          assert.deepStrictEqual(
            yield* engine.listQuotes(callers.maker2, { limit: 10, rfqId: missing as RfqId }),
            empty
          )

          // The same answers from a restarted engine (nothing cached).
          yield* running.stop
          if (round === 0) running = yield* startEngine(venueAccounts)
        }
      }).pipe(Effect.provide(layer)),
    { timeout: 240_000 }
  )
})

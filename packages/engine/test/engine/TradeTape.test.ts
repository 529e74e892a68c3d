import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Either, Queue, TestClock } from "effect"
import { decodeRequest } from "../../src/api/Decode.js"
import { PublicTradesQuery } from "../../src/api/TradeTapeRequests.js"
import type { Caller } from "../../src/rfq/RfqRecord.js"
import { type EngineEvent, renderEvent } from "../../src/services/Events.js"
import type { RunningEngine } from "../model/RfqSystem.js"
import { createQuote, createRfq, nextEvent } from "../support/expiryTape.js"
import { seedAndResolve, startEngine, testEpoch } from "../support/engineHarness.js"
import { testDatabases } from "../support/TestDatabases.js"

/**
 * The public block-trade tape (issue 16, item 3) in the engine: one print per traded RFQ (the
 * filled amount of a partial fill, nothing for a wholly failed trade), the same element over the
 * query and the `trades` channel, paged like the other lists, and nothing of the parties.
 */

/** Someone of no desk involved: the tape is public to every authenticated caller. */
const outsider: Caller = { deskId: 987_654, userId: 987_654, roles: ["viewer"] }

const page = (running: RunningEngine, caller: Caller, query: Record<string, unknown>) =>
  Effect.flatMap(decodeRequest(PublicTradesQuery, query), (q) => running.engine.publicTrades(caller, q))

describe.each(testDatabases)("the public tape on $name", ({ layer }) => {
  it.effect(
    "prints filled and partly filled trades once, never a failed one; REST and channel agree; pages and filters",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(testEpoch)
        const { callers, venueAccounts } = yield* seedAndResolve
        const running: RunningEngine = yield* startEngine(venueAccounts)
        const { prints, ids } = yield* Effect.scoped(
          Effect.gen(function* () {
            const events = yield* running.engine.events
            const isPrint = (e: EngineEvent) => e.type === "trade"
            // Filled, not anonymous: the taker buys (accepts an ask).
            const filled = yield* createRfq(running, callers, { label: "tape-secret-label" })
            const ask = yield* createQuote(running, callers, "maker1", filled, {
              label: "maker-secret-label"
            })
            yield* running.engine.trade(callers.taker, ask)
            const first = yield* nextEvent(events, isPrint, "the first print")
            yield* TestClock.adjust(1_000)
            // Half settles, anonymous: the taker sells (accepts a bid).
            const partial = yield* createRfq(running, callers, { plan: "partial", anonymous: true })
            const bid = yield* createQuote(running, callers, "maker2", partial, { direction: "buy" })
            yield* running.engine.trade(callers.taker, bid)
            const second = yield* nextEvent(events, isPrint, "the second print")
            yield* TestClock.adjust(1_000)
            // Every account fails: no print.
            const refused = yield* createRfq(running, callers, { plan: "refused" })
            const doomed = yield* createQuote(running, callers, "maker3", refused)
            assert.isTrue(Either.isLeft(yield* Effect.either(running.engine.trade(callers.taker, doomed))))
            // Its events were published with its steps, before the answer: none is a print.
            const after = yield* Queue.takeAll(events)
            assert.isTrue(
              Chunk.some(after, (e) => e.view.rfq.id === refused),
              "the refused steps were heard"
            )
            assert.isFalse(Chunk.some(after, isPrint))
            return { prints: [first, second], ids: { filled, partial, refused, ask, bid } }
          })
        )

        const all = yield* page(running, callers.viewer, {})
        assert.strictEqual(all.totalResults, 2)
        assert.strictEqual(all.cursor, 0)
        const [partialPrint, filledPrint] = all.results as Array<any>
        assert.deepStrictEqual(
          filledPrint.legs.map((l: any) => [l.instrumentName, l.direction, l.ratio]),
          [
            ["BTC-27DEC30-90000-C", "buy", 1],
            ["BTC-27DEC30-110000-C", "sell", 1]
          ]
        )
        assert.deepStrictEqual([filledPrint.amount, filledPrint.strategy], [100, "Call Spread"])
        assert.strictEqual(partialPrint.amount, 50, "a partial fill prints its filled amount")
        assert.isTrue(
          partialPrint.legs.every((l: any) => !("direction" in l)),
          "anonymous: no side"
        )

        // The channel shows everyone exactly the REST element.
        for (const [event, element] of [
          [prints[0]!, filledPrint],
          [prints[1]!, partialPrint]
        ] as const) {
          for (const who of [outsider, callers.maker3, callers.taker]) {
            assert.deepStrictEqual(renderEvent(event, "trades", who), { event: "created", ...element })
          }
          assert.isUndefined(renderEvent(event, "rfq.taker", outsider))
        }

        // Hostile: nothing of the parties anywhere in the answer.
        const text = JSON.stringify(all)
        for (const secret of ["tape-secret-label", "maker-secret-label", "maker-1", "maker-2", "dbt-main"]) {
          assert.notInclude(text, secret)
        }
        const numbers = new Set<number>()
        const keys = new Set<string>()
        const walk = (u: unknown): void => {
          if (typeof u === "number") numbers.add(u)
          else if (Array.isArray(u)) u.forEach(walk)
          else if (u !== null && typeof u === "object")
            for (const [k, v] of Object.entries(u)) {
              keys.add(k)
              // The trade's own id comes from its own sequence, and ratios are small integers: either
              // may equal a (small, fresh) RFQ or quote id by coincidence.
              if (k !== "tradeId" && k !== "ratio") walk(v)
            }
        }
        walk(all.results)
        for (const id of [ids.filled, ids.partial, ids.refused, ids.ask, ids.bid])
          assert.isFalse(numbers.has(id))
        for (const id of Object.values(callers.credentials))
          assert.isFalse(numbers.has(id), `credentials ${id}`)
        for (const key of keys) assert.notMatch(key, /desk|maker|account|label|rfq|credential|user|quote/i)

        // Pages of one, newest first; the last page's cursor is 0.
        const one = yield* page(running, outsider, { limit: 1 })
        assert.deepStrictEqual([one.totalResults, (one.results[0] as any).tradeId], [2, partialPrint.tradeId])
        assert.strictEqual(one.cursor, partialPrint.tradeId)
        const two = yield* page(running, outsider, { limit: "1", cursor: String(one.cursor) })
        assert.deepStrictEqual([(two.results[0] as any).tradeId, two.cursor], [filledPrint.tradeId, 0])
        // Filters: currency, and exclusive time bounds.
        assert.strictEqual((yield* page(running, outsider, { baseCurrency: "ETH" })).totalResults, 0)
        const before = yield* page(running, outsider, { endTime: partialPrint.createdAt })
        assert.deepStrictEqual(
          before.results.map((r: any) => r.tradeId),
          [filledPrint.tradeId]
        )
        const since = yield* page(running, outsider, { startTime: filledPrint.createdAt })
        assert.deepStrictEqual(
          since.results.map((r: any) => r.tradeId),
          [partialPrint.tradeId]
        )
        // A cursor that is no print (the failed trade's id, an id of nothing) is refused alike.
        const sql = yield* SqlClient.SqlClient
        const failed = yield* sql<{ id: number }>`SELECT id FROM trades WHERE rfq_id = ${ids.refused}`
        assert.strictEqual(failed.length, 1)
        for (const cursor of [Number(failed[0]!.id), 999_999_999]) {
          const refused = yield* Effect.either(page(running, outsider, { cursor }))
          assert.isTrue(
            Either.isLeft(refused) &&
              refused.left.reason?.[0] === `cursor: ${cursor} is not a cursor of this list`
          )
        }
        yield* running.stop
      }).pipe(Effect.provide(layer)),
    { timeout: 120_000 }
  )
})

import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import * as fc from "fast-check"
import { decodeRequest } from "../../src/api/Decode.js"
import { ListQuotesQuery } from "../../src/api/Queries.js"
import { messages } from "../model/RfqModel.js"
import { createQuote, createSpreadRfq, RfqSystem, updateQuote } from "../model/RfqSystem.js"
import { seedAndResolve, testEpoch } from "../support/engineHarness.js"
import { testDatabases } from "../support/TestDatabases.js"
import { Gate, startGatedEngine } from "./GatedEngine.js"
import { assertNotTraded, assertTradedOnce, scheduled, underScheduler, winnersOf } from "./raceChecks.js"

/**
 * Commands racing on one RFQ, every storage commit and venue execution released in an order the
 * fast-check scheduler picks. Each run trades a fresh RFQ split 60/40 over two accounts (two
 * block trades per fill), so runs share one database.
 */

/** Runs per race and backend. */
const numRuns = 15

type Json = Record<string, any>

describe.each(testDatabases)("races on one RFQ on $name", ({ layer }) => {
  const withGatedEngine = (body: (r: RfqSystem, gate: Gate) => Promise<void>) =>
    Effect.gen(function* () {
      yield* TestClock.setTime(testEpoch)
      const { callers, venueAccounts } = yield* seedAndResolve
      const gate = new Gate()
      const r = yield* RfqSystem.make(callers, venueAccounts, startGatedEngine(venueAccounts, gate))
      yield* Effect.promise(() => body(r, gate))
      yield* r.running.stop
    }).pipe(Effect.provide(layer))

  const openRfq = (r: RfqSystem) => r.run(createSpreadRfq(r.engine, r.callers, "split"))
  const trade = (r: RfqSystem, quoteId: number) => () => r.attempt(r.engine.trade(r.callers.taker, quoteId))

  it.effect(
    "two accepts of one quote: exactly one trades",
    () =>
      withGatedEngine((r, gate) =>
        fc.assert(
          fc.asyncProperty(fc.scheduler(), async (s) => {
            const rfqId = await openRfq(r)
            const q = await r.run(
              createQuote(r.running, r.callers, "maker1", rfqId, { direction: "sell", amount: 100 })
            )
            await underScheduler(s, gate, async () => {
              const results = await Promise.all([
                scheduled(s, "accept", trade(r, q)),
                scheduled(s, "accept again", trade(r, q))
              ])
              const winners = winnersOf(results, [messages.recordNotFound, messages.invalid])
              assert.lengthOf(winners, 1, "one winner")
              await assertTradedOnce(r, rfqId, {
                tradeId: winners[0]!.rfqTradeId,
                amount: 100,
                status: "filled"
              })
            })
          }),
          { numRuns }
        )
      ),
    { timeout: 120_000 }
  )

  it.effect(
    "accepts of two quotes of one RFQ: exactly one trades, the other quote is cancelled",
    () =>
      withGatedEngine((r, gate) =>
        fc.assert(
          fc.asyncProperty(fc.scheduler(), async (s) => {
            const rfqId = await openRfq(r)
            const ask = await r.run(
              createQuote(r.running, r.callers, "maker1", rfqId, { direction: "sell", amount: 100 })
            )
            const bid = await r.run(
              createQuote(r.running, r.callers, "maker2", rfqId, { direction: "buy", amount: 80 })
            )
            await underScheduler(s, gate, async () => {
              const results = await Promise.all([
                scheduled(s, "accept the ask", trade(r, ask)),
                scheduled(s, "accept the bid", trade(r, bid))
              ])
              const winners = winnersOf(results, [messages.recordNotFound, messages.invalid])
              assert.lengthOf(winners, 1, "one winner")
              const askWon = results[0]._tag === "Right"
              const view = await assertTradedOnce(r, rfqId, {
                tradeId: winners[0]!.rfqTradeId,
                amount: askWon ? 100 : 80,
                status: "filled"
              })
              // The taker's side is the opposite of the accepted quote's.
              assert.strictEqual(view.tradeDirection, askWon ? "buy" : "sell")
              const statusOf = async (maker: "maker1" | "maker2", id: number) => {
                const query = await r.run(decodeRequest(ListQuotesQuery, { rfqId }))
                const listed = await r.run(r.engine.listQuotes(r.callers[maker], query))
                return (listed.results as Array<Json>).find((x) => x.rfqQuoteId === id)?.status
              }
              assert.strictEqual(await statusOf("maker1", ask), askWon ? "filled" : "cancelled")
              assert.strictEqual(await statusOf("maker2", bid), askWon ? "cancelled" : "filled")
            })
          }),
          { numRuns }
        )
      ),
    { timeout: 120_000 }
  )

  it.effect(
    "accept against cancel: exactly one wins",
    () =>
      withGatedEngine((r, gate) =>
        fc.assert(
          fc.asyncProperty(fc.scheduler(), async (s) => {
            const rfqId = await openRfq(r)
            const q = await r.run(
              createQuote(r.running, r.callers, "maker1", rfqId, { direction: "sell", amount: 100 })
            )
            await underScheduler(s, gate, async () => {
              const [accepted, cancelled] = await Promise.all([
                scheduled(s, "accept", trade(r, q)),
                scheduled(s, "cancel", () => r.attempt(r.engine.cancelRfq(r.callers.taker, rfqId)))
              ])
              assert.lengthOf(
                winnersOf([accepted], [messages.recordNotFound, messages.invalid]),
                accepted._tag === "Right" ? 1 : 0
              )
              winnersOf([cancelled], [messages.cannotCancel])
              assert.notStrictEqual(accepted._tag, cancelled._tag, "exactly one wins")
              if (accepted._tag === "Right") {
                await assertTradedOnce(r, rfqId, {
                  tradeId: accepted.right.rfqTradeId,
                  amount: 100,
                  status: "filled"
                })
              } else {
                await assertNotTraded(r, rfqId, "cancelled")
              }
            })
          }),
          { numRuns }
        )
      ),
    { timeout: 120_000 }
  )

  it.effect(
    "accept against a quote update: the trade is of the quote as last updated, no update is lost",
    () =>
      withGatedEngine((r, gate) =>
        fc.assert(
          fc.asyncProperty(fc.scheduler(), async (s) => {
            const rfqId = await openRfq(r)
            const q = await r.run(
              createQuote(r.running, r.callers, "maker1", rfqId, { direction: "sell", amount: 100 })
            )
            await underScheduler(s, gate, async () => {
              const [accepted, updated] = await Promise.all([
                scheduled(s, "accept", trade(r, q)),
                scheduled(s, "update to 80", () =>
                  r.attempt(updateQuote(r.running, r.callers, "maker1", q, { amount: 80 }))
                )
              ])
              const [traded] = winnersOf([accepted], [])
              assert.isDefined(traded, "the quote stays active until accepted")
              winnersOf([updated], [messages.recordNotFound])
              const amount = updated._tag === "Right" ? 80 : 100
              await assertTradedOnce(r, rfqId, {
                tradeId: traded!.rfqTradeId,
                amount,
                status: "filled"
              })
              const query = await r.run(decodeRequest(ListQuotesQuery, { rfqId }))
              const listed = await r.run(r.engine.listQuotes(r.callers.maker1, query))
              const stored = (listed.results as Array<Json>).find((x) => x.rfqQuoteId === q)
              assert.deepStrictEqual([stored?.status, stored?.amount], ["filled", amount])
            })
          }),
          { numRuns }
        )
      ),
    { timeout: 120_000 }
  )

  it.effect(
    "accept against expiry: exactly one wins",
    () =>
      withGatedEngine((r, gate) =>
        fc.assert(
          fc.asyncProperty(fc.scheduler(), async (s) => {
            const rfqId = await openRfq(r)
            const q = await r.run(
              createQuote(r.running, r.callers, "maker1", rfqId, { direction: "sell", amount: 100 })
            )
            const { expiresAt } = (await r.run(r.engine.getRfq(r.callers.taker, rfqId))) as Json
            const now = await r.run(Clock.currentTimeMillis)
            await underScheduler(s, gate, async () => {
              const [accepted] = await Promise.all([
                scheduled(s, "accept", trade(r, q)),
                scheduled(s, "the expiry comes", () => r.run(TestClock.adjust(expiresAt - now)))
              ])
              winnersOf([accepted], [messages.expired, messages.recordNotFound])
              if (accepted._tag === "Right") {
                await assertTradedOnce(r, rfqId, {
                  tradeId: accepted.right.rfqTradeId,
                  amount: 100,
                  status: "filled"
                })
              } else {
                await assertNotTraded(r, rfqId, "expired")
              }
            })
          }),
          { numRuns }
        )
      ),
    { timeout: 120_000 }
  )
})

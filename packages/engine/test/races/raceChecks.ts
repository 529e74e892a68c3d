import { assert } from "@effect/vitest"
import { Either } from "effect"
import type * as fc from "fast-check"
import type { ApiError } from "../../src/domain/Errors.js"
import { dbtLedger, type RfqSystem } from "../model/RfqSystem.js"
import type { Gate } from "./GatedEngine.js"

type Json = Record<string, any>

/**
 * Runs `body` with the engine's commits and venue executions under the scheduler `s`, letting it
 * release as many of them as `body` needs; then opens the gate and lets anything left finish.
 */
export const underScheduler = async <A>(s: fc.Scheduler, gate: Gate, body: () => Promise<A>): Promise<A> => {
  gate.scheduleWith(s)
  try {
    return await s.waitFor(body())
  } finally {
    gate.open()
    await s.waitIdle()
  }
}

/** `task`, started when the scheduler says. */
export const scheduled = <A>(s: fc.Scheduler, label: string, task: () => Promise<A>): Promise<A> =>
  s.schedule(Promise.resolve(), label).then(task)

/** The successes among `results`, and asserts the others failed with one of `messages`. */
export const winnersOf = <A>(
  results: ReadonlyArray<Either.Either<A, ApiError>>,
  messages: ReadonlyArray<string>
): Array<A> => {
  for (const r of results) {
    if (Either.isLeft(r)) assert.include(messages, r.left.message, "a loser's error")
  }
  return results.filter(Either.isRight).map((r) => r.right)
}

/** The block trades the venue booked for an RFQ (their keys start with the RFQ's id). */
export const bookedFor = async (r: RfqSystem, rfqId: number) =>
  (await r.run(dbtLedger(r.running))).filter((t) => t.idempotencyKey.startsWith(`rfq-${rfqId}-`))

/**
 * The RFQ traded once, as `trade`: its status, its one trade's id and amount, and the ledger holds
 * exactly one block trade per filled allocation of that trade (and none of any other trade).
 */
export const assertTradedOnce = async (
  r: RfqSystem,
  rfqId: number,
  trade: { readonly tradeId: number; readonly amount: number; readonly status: "filled" | "filledPartial" }
): Promise<Json> => {
  const view = (await r.run(r.engine.getRfq(r.callers.taker, rfqId))) as Json
  assert.strictEqual(view.status, trade.status, "the RFQ's status is the winner's")
  assert.strictEqual(view.tradeId, trade.tradeId, "the RFQ's trade is the winner's")
  assert.strictEqual(view.tradeAmount, trade.amount, "the trade is the accepted quote's amount")
  const filled = (view.tradeAllocations as Array<Json>).filter((a) => a.status === "filled")
  const booked = await bookedFor(r, rfqId)
  assert.strictEqual(booked.length, filled.length, "one block trade per filled allocation")
  assert.isTrue(
    booked.every((t) => t.idempotencyKey.startsWith(`rfq-${rfqId}-trade-${trade.tradeId}-`)),
    "never two trades for one RFQ"
  )
  assert.sameMembers(
    booked.map((t) => t.blockTradeId),
    filled.map((a) => a.exchangeTradeId),
    "each filled allocation is the block trade booked under its key"
  )
  return view
}

/** The RFQ did not trade: it is in `status`, and the venue booked nothing for it. */
export const assertNotTraded = async (r: RfqSystem, rfqId: number, status: string) => {
  const view = (await r.run(r.engine.getRfq(r.callers.taker, rfqId))) as Json
  assert.strictEqual(view.status, status)
  assert.isUndefined(view.tradeId, "no trade")
  assert.lengthOf(await bookedFor(r, rfqId), 0, "nothing booked on the venue")
}

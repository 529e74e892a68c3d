import { assert } from "@effect/vitest"
import { Either } from "effect"
import { decodeRequest } from "../../src/api/Decode.js"
import { ListQuotesQuery } from "../../src/api/Queries.js"
import type { ApiError } from "../../src/domain/Errors.js"
import { type RfqModel, quotesOf, realLabel } from "./RfqModel.js"
import { dbtLedger, makerNames, type RfqSystem } from "./RfqSystem.js"

/** A command's outcome: success when `expected` is undefined, else that error message. */
export const expectOutcome = <A>(
  result: Either.Either<A, ApiError>,
  expected: string | undefined,
  what: string
): A | undefined => {
  if (expected === undefined) {
    if (Either.isLeft(result)) assert.fail(`${what}: expected success, got "${result.left.message}"`)
    return result.right
  }
  if (Either.isRight(result)) assert.fail(`${what}: expected "${expected}", got success`)
  assert.strictEqual(result.left.message, expected, what)
  return undefined
}

type Json = Record<string, any>

/**
 * Everything observable agrees with the model: each RFQ's status and trade amounts as the taker
 * reads them, the taker's quote book, each maker's quotes (status, amount, label), and the venue
 * ledger (each fill booked exactly one block trade per settled account, each key once).
 */
export const assertSystemMatches = async (m: RfqModel, r: RfqSystem): Promise<void> => {
  const { engine, callers } = r
  for (const [i, rfq] of m.rfqs.entries()) {
    const what = `rfq@${i} (#${rfq.id})`
    const got = await r.attempt(engine.getRfq(callers.taker, rfq.id))
    if (rfq.status === "deleted") {
      assert.isTrue(Either.isLeft(got) && got.left.message === "rfq not found", `${what} is deleted`)
      continue
    }
    if (Either.isLeft(got)) return assert.fail(`${what}: getRfq failed with "${got.left.message}"`)
    const view = got.right as Json
    assert.strictEqual(view.status, rfq.status, `${what} status`)
    assert.strictEqual(view.expiresAt, rfq.expiresAt, `${what} expiresAt`)
    assert.strictEqual(view.tradeAmount, rfq.trade?.amount, `${what} tradeAmount`)
    assert.strictEqual(view.filledAmount, rfq.trade?.filledAmount, `${what} filledAmount`)

    const book = (await r.run(engine.takerQuotes(callers.taker, rfq.id))) as Array<Json>
    const booked = book
      .flatMap((side) => [...side.bids, ...side.asks] as Array<Json>)
      .map((q) => [q.rfqQuoteId, q.amount, q.makers[0]])
      .sort((a, b) => a[0] - b[0])
    const expected = quotesOf(m, i).map((q) => [q.id, q.amount, `maker-${q.maker.slice(-1)}`])
    assert.deepStrictEqual(booked, expected, `${what} quote book`)
  }

  const runQuotes = new Set(m.quotes.map((q) => q.id))
  for (const maker of makerNames) {
    // Quotes created since the run started (and a few of the run before, filtered out below).
    const query = await r.run(decodeRequest(ListQuotesQuery, { startTime: m.startedAt - 1, limit: 1000 }))
    const listed = await r.run(engine.listQuotes(callers[maker], query))
    const mine = (listed.results as Array<Json>)
      .filter((q) => runQuotes.has(q.rfqQuoteId))
      .map((q) => [q.rfqQuoteId, q.status, q.amount, q.label])
      .sort((a, b) => a[0] - b[0])
    const expected = m.quotes
      .filter((q) => q.maker === maker)
      .map((q) => [q.id, q.status, q.amount, realLabel(m, q.label)])
    assert.deepStrictEqual(mine, expected, `${maker}'s quotes`)
  }

  const ledger = await r.run(dbtLedger(r.running))
  assert.strictEqual(ledger.length, m.ledgerBase + m.ledgerAdded, "DBT ledger: one block trade per fill")
  assert.strictEqual(new Set(ledger.map((t) => t.idempotencyKey)).size, ledger.length, "each key booked once")
}

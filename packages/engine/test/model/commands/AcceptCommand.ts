import { assert } from "@effect/vitest"
import type * as fc from "fast-check"
import { assertSystemMatches, expectOutcome } from "../assertSystem.js"
import { describeQuote, messages, pickQuote, type RfqModel, settle } from "../RfqModel.js"
import { type RfqSystem, settledAccounts } from "../RfqSystem.js"

/**
 * The taker accepts the quote at a position. An active quote trades: every account of the RFQ's
 * plan settles (filled), some do (filledPartial), or none (the trade is refused and nothing moves).
 */
export class AcceptCommand implements fc.AsyncCommand<RfqModel, RfqSystem> {
  constructor(
    readonly quotePosition: number,
    readonly active: boolean
  ) {}
  check = (m: Readonly<RfqModel>) => m.quotes.length > 0
  async run(m: RfqModel, r: RfqSystem) {
    const quote = pickQuote(m, this.quotePosition, this.active)
    const rfq = m.rfqs[quote.rfq]!
    const settles = settledAccounts[rfq.plan]
    // An inactive quote: its taker is told why when the RFQ itself ended (expired, or traded or
    // cancelled); a quote withdrawn from an open RFQ, or one of a deleted RFQ, is simply not found.
    const ended =
      rfq.status === "expired"
        ? messages.expired
        : rfq.status === "filled" || rfq.status === "filledPartial" || rfq.status === "cancelled"
          ? messages.invalid
          : messages.recordNotFound
    const expected = quote.status !== "active" ? ended : settles === 0 ? messages.invalid : undefined
    const result = await r.attempt(r.engine.trade(r.callers.taker, quote.id))
    const traded = expectOutcome(result, expected, this.toString()) as Record<string, any> | undefined
    if (traded !== undefined) {
      assert.strictEqual(traded.rfqId, rfq.id)
      assert.strictEqual(traded.trades.length, settles, "one block trade per settled account")
      settle(m, quote)
      m.ledgerAdded += settles
    }
    await assertSystemMatches(m, r)
  }
  toString = () => `Accept(${describeQuote(this.quotePosition, this.active)})`
}

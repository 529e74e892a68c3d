import { Effect } from "effect"
import type * as fc from "fast-check"
import { decodeRequest } from "../../../src/api/Decode.js"
import { DeleteQuoteRequest } from "../../../src/api/QuoteRequests.js"
import { assertSystemMatches, expectOutcome } from "../assertSystem.js"
import { describeQuote, labelHolder, messages, pickQuote, type RfqModel, realLabel } from "../RfqModel.js"
import type { RfqSystem } from "../RfqSystem.js"

/**
 * The maker of the quote at a position deletes it, by id or by its label. A label names the
 * maker's active quote holding it now, which may be another quote than the one picked.
 */
export class DeleteQuoteCommand implements fc.AsyncCommand<RfqModel, RfqSystem> {
  constructor(
    readonly quotePosition: number,
    readonly active: boolean,
    readonly byLabel: boolean
  ) {}
  check = (m: Readonly<RfqModel>) => m.quotes.length > 0
  async run(m: RfqModel, r: RfqSystem) {
    const picked = pickQuote(m, this.quotePosition, this.active)
    const byLabel = this.byLabel && picked.label !== undefined
    const target = byLabel ? labelHolder(m, picked.maker, picked.label) : picked
    const expected = target === undefined || target.status !== "active" ? messages.recordNotFound : undefined
    const result = await r.attempt(
      Effect.flatMap(
        decodeRequest(
          DeleteQuoteRequest,
          byLabel ? { label: realLabel(m, picked.label) } : { rfqQuoteId: picked.id }
        ),
        (req) => r.engine.deleteQuote(r.callers[picked.maker], req)
      )
    )
    if (expectOutcome(result, expected, this.toString()) !== undefined) target!.status = "cancelled"
    await assertSystemMatches(m, r)
  }
  toString = () =>
    `DeleteQuote(${describeQuote(this.quotePosition, this.active)}${this.byLabel ? " by label" : ""})`
}

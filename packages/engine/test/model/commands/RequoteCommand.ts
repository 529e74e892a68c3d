import type * as fc from "fast-check"
import { assertSystemMatches, expectOutcome } from "../assertSystem.js"
import { describeQuote, labelHolder, messages, pickQuote, type RfqModel, realLabel } from "../RfqModel.js"
import { type RfqSystem, updateQuote } from "../RfqSystem.js"

/**
 * The maker of the quote at a position updates it by id: a new amount, prices at the current marks,
 * and possibly a new label (which, sent with the id, must not name another of its active quotes).
 */
export class RequoteCommand implements fc.AsyncCommand<RfqModel, RfqSystem> {
  constructor(
    readonly quotePosition: number,
    readonly active: boolean,
    readonly amount: number,
    readonly label: string | undefined
  ) {}
  check = (m: Readonly<RfqModel>) => m.quotes.length > 0
  async run(m: RfqModel, r: RfqSystem) {
    const quote = pickQuote(m, this.quotePosition, this.active)
    const holder = labelHolder(m, quote.maker, this.label)
    const expected =
      holder !== undefined && holder.id !== quote.id
        ? messages.multipleQuotes
        : quote.status !== "active"
          ? messages.recordNotFound
          : undefined
    const result = await r.attempt(
      updateQuote(r.running, r.callers, quote.maker, quote.id, {
        amount: this.amount,
        label: realLabel(m, this.label)
      })
    )
    if (expectOutcome(result, expected, this.toString()) !== undefined) {
      quote.amount = this.amount
      if (this.label !== undefined) quote.label = this.label
    }
    await assertSystemMatches(m, r)
  }
  toString = () =>
    `Requote(${describeQuote(this.quotePosition, this.active)} ${this.amount}${this.label === undefined ? "" : ` "${this.label}"`})`
}

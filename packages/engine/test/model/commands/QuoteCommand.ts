import type * as fc from "fast-check"
import type { Direction } from "../../../src/domain/Primitives.js"
import { assertSystemMatches, expectOutcome } from "../assertSystem.js"
import { describeRfq, labelHolder, messages, type RfqModel, pick, realLabel } from "../RfqModel.js"
import { createQuote, type MakerName, type RfqSystem } from "../RfqSystem.js"

/** A maker quotes on the RFQ at a position, whatever its state. */
export class QuoteCommand implements fc.AsyncCommand<RfqModel, RfqSystem> {
  constructor(
    readonly rfqPosition: number,
    readonly maker: MakerName,
    readonly direction: Direction,
    readonly amount: number,
    readonly label: string | undefined
  ) {}
  check = (m: Readonly<RfqModel>) => m.rfqs.length > 0
  async run(m: RfqModel, r: RfqSystem) {
    const position = this.rfqPosition % m.rfqs.length
    const rfq = pick(m.rfqs, position)
    // The engine's order: the RFQ must exist, the label be free, the RFQ be open.
    const expected =
      rfq.status === "deleted"
        ? messages.notFound
        : labelHolder(m, this.maker, this.label) !== undefined
          ? messages.duplicateLabel
          : rfq.status === "expired"
            ? messages.expired
            : rfq.status !== "open"
              ? messages.invalid
              : undefined
    const result = await r.attempt(
      createQuote(r.running, r.callers, this.maker, rfq.id, {
        direction: this.direction,
        amount: this.amount,
        label: realLabel(m, this.label)
      })
    )
    const id = expectOutcome(result, expected, this.toString())
    if (id !== undefined) {
      m.quotes.push({
        id,
        rfq: position,
        maker: this.maker,
        direction: this.direction,
        amount: this.amount,
        label: this.label,
        status: "active"
      })
    }
    await assertSystemMatches(m, r)
  }
  toString = () =>
    `Quote(${describeRfq(this.rfqPosition)} ${this.maker} ${this.direction} ${this.amount}${this.label === undefined ? "" : ` "${this.label}"`})`
}

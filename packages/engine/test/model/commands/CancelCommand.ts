import type * as fc from "fast-check"
import { assertSystemMatches, expectOutcome } from "../assertSystem.js"
import { closeRfq, describeRfq, messages, type RfqModel } from "../RfqModel.js"
import type { RfqSystem } from "../RfqSystem.js"

/** The taker cancels the RFQ at a position: only an open one; its quotes are cancelled with it. */
export class CancelCommand implements fc.AsyncCommand<RfqModel, RfqSystem> {
  constructor(readonly rfqPosition: number) {}
  check = (m: Readonly<RfqModel>) => m.rfqs.length > 0
  async run(m: RfqModel, r: RfqSystem) {
    const position = this.rfqPosition % m.rfqs.length
    const rfq = m.rfqs[position]!
    const expected = {
      open: undefined,
      expired: messages.expired,
      deleted: messages.notFound,
      filled: messages.cannotCancel,
      filledPartial: messages.cannotCancel,
      cancelled: messages.cannotCancel
    }[rfq.status]
    const result = await r.attempt(r.engine.cancelRfq(r.callers.taker, rfq.id))
    if (expectOutcome(result, expected, this.toString()) !== undefined) {
      closeRfq(m, position, "cancelled", "cancelled")
    }
    await assertSystemMatches(m, r)
  }
  toString = () => `Cancel(${describeRfq(this.rfqPosition)})`
}

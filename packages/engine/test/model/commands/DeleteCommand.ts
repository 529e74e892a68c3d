import type * as fc from "fast-check"
import { assertSystemMatches, expectOutcome } from "../assertSystem.js"
import { describeRfq, messages, type RfqModel, pick } from "../RfqModel.js"
import type { RfqSystem } from "../RfqSystem.js"

/** The taker deletes the RFQ at a position: only a cancelled one; then nobody finds it. */
export class DeleteCommand implements fc.AsyncCommand<RfqModel, RfqSystem> {
  constructor(readonly rfqPosition: number) {}
  check = (m: Readonly<RfqModel>) => m.rfqs.length > 0
  async run(m: RfqModel, r: RfqSystem) {
    const rfq = pick(m.rfqs, this.rfqPosition)
    const expected =
      rfq.status === "cancelled"
        ? undefined
        : rfq.status === "deleted"
          ? messages.notFound
          : messages.cannotDelete
    const result = await r.attempt(r.engine.deleteRfq(r.callers.taker, rfq.id))
    if (expectOutcome(result, expected, this.toString()) !== undefined) rfq.status = "deleted"
    await assertSystemMatches(m, r)
  }
  toString = () => `Delete(${describeRfq(this.rfqPosition)})`
}

import { assert } from "@effect/vitest"
import type * as fc from "fast-check"
import { rfqTtlMs } from "../../support/engineHarness.js"
import { assertSystemMatches } from "../assertSystem.js"
import type { RfqModel } from "../RfqModel.js"
import { type AccountPlan, createSpreadRfq, type RfqSystem } from "../RfqSystem.js"

/** Bounds the RFQs of one run, so that commands on RFQs by position keep meeting the same ones. */
export const maxRfqsPerRun = 6

/** The taker creates an RFQ settling per `plan`; it is open until `now + ttl`. */
export class CreateRfqCommand implements fc.AsyncCommand<RfqModel, RfqSystem> {
  constructor(readonly plan: AccountPlan) {}
  check = (m: Readonly<RfqModel>) => m.rfqs.length < maxRfqsPerRun
  async run(m: RfqModel, r: RfqSystem) {
    const rfqId = await r.run(createSpreadRfq(r.engine, r.callers, this.plan))
    assert.isFalse(
      m.rfqs.some((x) => x.id === rfqId),
      "a new RFQ gets a new id"
    )
    m.rfqs.push({ id: rfqId, plan: this.plan, expiresAt: m.now + rfqTtlMs, status: "open" })
    await assertSystemMatches(m, r)
  }
  toString = () => `CreateRfq(${this.plan})`
}

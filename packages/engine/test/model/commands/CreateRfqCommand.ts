import { assert } from "@effect/vitest"
import { TestClock } from "effect"
import type * as fc from "fast-check"
import { rfqTtlMs } from "../../support/engineHarness.js"
import { assertSystemMatches } from "../assertSystem.js"
import { expireDue, type RfqModel } from "../RfqModel.js"
import { type AccountPlan, createSpreadRfq, type RfqSystem } from "../RfqSystem.js"

/** Bounds the RFQs of one run, so that commands on RFQs by position keep meeting the same ones. */
export const maxRfqsPerRun = 6

/**
 * `afterSeconds` pass, then the taker creates an RFQ settling per `plan`; it is open until
 * `now + ttl`. (RFQs created apart expire apart.)
 */
export class CreateRfqCommand implements fc.AsyncCommand<RfqModel, RfqSystem> {
  constructor(
    readonly plan: AccountPlan,
    readonly afterSeconds: number
  ) {}
  check = (m: Readonly<RfqModel>) => m.rfqs.length < maxRfqsPerRun
  async run(m: RfqModel, r: RfqSystem) {
    await r.run(TestClock.adjust(this.afterSeconds * 1000))
    m.now += this.afterSeconds * 1000
    expireDue(m)
    const rfqId = await r.run(createSpreadRfq(r.engine, r.callers, this.plan))
    assert.isFalse(
      m.rfqs.some((x) => x.id === rfqId),
      "a new RFQ gets a new id"
    )
    m.rfqs.push({ id: rfqId, plan: this.plan, expiresAt: m.now + rfqTtlMs, status: "open" })
    await assertSystemMatches(m, r)
  }
  toString = () => `CreateRfq(${this.plan} after ${this.afterSeconds}s)`
}

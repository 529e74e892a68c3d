import { assert } from "@effect/vitest"
import { Clock, TestClock } from "effect"
import type * as fc from "fast-check"
import { assertSystemMatches } from "../assertSystem.js"
import { expireDue, openRfqs, type RfqModel, pick } from "../RfqModel.js"
import type { RfqSystem } from "../RfqSystem.js"

/**
 * Time passes up to the expiry of the open RFQ at a position (among open ones): it and every open
 * RFQ due by then expire, with their quotes.
 */
export class ExpireCommand implements fc.AsyncCommand<RfqModel, RfqSystem> {
  constructor(readonly openPosition: number) {}
  check = (m: Readonly<RfqModel>) => openRfqs(m as RfqModel).length > 0
  async run(m: RfqModel, r: RfqSystem) {
    const target = pick(openRfqs(m), this.openPosition)
    await r.run(TestClock.adjust(Math.max(0, target.expiresAt - m.now)))
    m.now = Math.max(m.now, target.expiresAt)
    assert.strictEqual(await r.run(Clock.currentTimeMillis), m.now, "the engine's clock is the test's")
    expireDue(m)
    // The expiry timer's own work may still be under way: the checks read through each RFQ's
    // mailbox, and a read of an RFQ past its expiry expires it first, so either way they agree.
    await assertSystemMatches(m, r)
  }
  toString = () => `Expire(open rfq@${this.openPosition})`
}

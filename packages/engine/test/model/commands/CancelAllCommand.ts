import { assert } from "@effect/vitest"
import type * as fc from "fast-check"
import { assertSystemMatches } from "../assertSystem.js"
import type { RfqModel } from "../RfqModel.js"
import type { MakerName, RfqSystem } from "../RfqSystem.js"

/** A maker cancels all its active quotes, on every RFQ. */
export class CancelAllCommand implements fc.AsyncCommand<RfqModel, RfqSystem> {
  constructor(readonly maker: MakerName) {}
  check = () => true
  async run(m: RfqModel, r: RfqSystem) {
    const active = m.quotes.filter((q) => q.maker === this.maker && q.status === "active")
    const result = await r.run(r.engine.cancelAllQuotes(r.callers[this.maker], {}))
    assert.strictEqual(result.cancelledCount, active.length, this.toString())
    for (const q of active) q.status = "cancelled"
    await assertSystemMatches(m, r)
  }
  toString = () => `CancelAll(${this.maker})`
}

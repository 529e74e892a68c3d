import { assert, it } from "vitest"
import { runHostKill } from "../../src/cluster/HostKill.js"

/**
 * The short version of the reliability suite's `hostkill` item (20 rounds there): one host of three
 * killed with SIGKILL under load, its RFQs served again by the others, nothing acknowledged lost,
 * no block trade twice, every expiry once, every RFQ's closing and quote's creation heard once on
 * the survivors' sessions. How long the take-over took is a figure of the
 * reliability run, not asserted here beyond the test's own time limit.
 */
it("kill -9 of a host under load: its RFQs come back, nothing lost, nothing doubled, expiries once", async () => {
  const f = await runHostKill({ rounds: 1, log: () => undefined })
  assert.deepStrictEqual(f.problems, [])
  // The checks looked at something: RFQs, quotes and trades acknowledged, expiries that fired.
  assert.isAbove(f.acknowledged.rfqs, 8)
  assert.isAbove(f.acknowledged.quotes, 0)
  assert.isAbove(f.acknowledged.trades, 0)
  assert.isAbove(f.expiries, 0)
  assert.strictEqual(f.lost, 0)
  assert.strictEqual(f.doubled, 0)
  assert.strictEqual(f.expiryFaults, 0)
  // Each of the round's RFQs heard to close, and each quote created, once on each survivor's session.
  assert.isAbove(f.heardChecked, 16)
  assert.deepStrictEqual(f.heardNotes.slice(0, 10), [])
  assert.strictEqual(f.misheard, 0)
}, 300_000)

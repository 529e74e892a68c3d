import { afterAll, assert, beforeAll, it } from "vitest"
import { type ClusterProcesses, startCluster } from "../../src/cluster/ClusterProcesses.js"
import { isServerError, markQuote, newRfq, openWorlds } from "../../src/cluster/ClusterWorlds.js"
import { sleep } from "../../src/Fixtures.js"
import { openDatabase } from "../../src/reliability/DatabaseReader.js"
import type { World } from "../../src/World.js"

/**
 * Accept against expiry through different hosts: an RFQ created on A (so owned by A), quoted
 * through B, accepted through C around the instant it expires (A's timer fires then). Exactly one
 * of the two happens, whichever the owner ran first: a fill, or the expiry with the accept refused.
 * A round whose set-up (create, read, quote) outlasts the RFQ's life on a loaded machine says nothing
 * about the race: the quote is refused as expired, the round is run again with a new RFQ, and the
 * expired RFQ still counts in the storage check at the end.
 */

const ROUNDS = 12
const MAX_ATTEMPTS = 30

let cluster: ClusterProcesses
let hosts: ReadonlyArray<World>

beforeAll(async () => {
  cluster = await startCluster({ hosts: 3, env: { RATE_LIMIT_PER_MINUTE: "1000000", RFQ_TTL_SECONDS: "3" } })
  hosts = await openWorlds(cluster)
}, 240_000)

afterAll(async () => {
  await cluster?.stop()
}, 240_000)

it("accept through one host against the owner's expiry: one of them, never both, never a 5xx", async () => {
  const [a, b, c] = hosts as [World, World, World]
  const outcomes: Array<string> = []
  const rfqIds: Array<number> = []
  let attempts = 0
  for (let round = 0; round < ROUNDS && attempts < MAX_ATTEMPTS; attempts++) {
    const rfqId = await newRfq(a)
    rfqIds.push(rfqId)
    const view = await a.api.get(`/v1/rfq/${rfqId}`, { token: a.token("taker") })
    const expiresAt = (view.body as { expiresAt: number }).expiresAt
    const quoted = await b.api.post("/v1/rfq/quote", {
      token: b.token("maker1"),
      json: { rfqId, direction: "sell", amount: 100, settlementOption: "DBT", ...(await markQuote(b, rfqId)) }
    })
    if (quoted.status === 400 && (quoted.body as { message?: string }).message === "RFQ has expired") {
      assert.isAtLeast(Date.now(), expiresAt, "a quote refused as expired before the RFQ's expiry")
      continue
    }
    assert.strictEqual(quoted.status, 200, quoted.text)
    const rfqQuoteId = (quoted.body as { rfqQuoteId: number }).rfqQuoteId
    // Around the expiry: from 40 ms before to 40 ms after, a different offset each round.
    await sleep(Math.max(0, expiresAt - Date.now() - 40 + (round % 9) * 10))
    const accepted = await c.api.post("/v1/rfq/trade", { token: c.token("taker"), json: { rfqQuoteId } })
    assert.isFalse(isServerError(accepted.status), accepted.text)
    await sleep(Math.max(0, expiresAt - Date.now() + 300))
    const after = await b.api.get(`/v1/rfq/${rfqId}`, { token: b.token("taker") })
    const status = (after.body as { status: string }).status
    if (accepted.status === 200) {
      assert.strictEqual(status, "filled", `round ${round}`)
    } else {
      assert.strictEqual(status, "expired", `round ${round}: ${accepted.text}`)
      assert.strictEqual((accepted.body as { message: string }).message, "RFQ has expired")
    }
    outcomes.push(status)
    round++
  }
  assert.isAtLeast(
    outcomes.length,
    ROUNDS / 2,
    `${attempts} attempts, ${outcomes.length} rounds reached the accept`
  )
  const db = await openDatabase("postgres", { dataDir: "", schema: cluster.namespace })
  try {
    const rows = await db.query<{ rfq_id: string; expiries: string; trades: string; late: string }>(
      `SELECT r.id::text AS rfq_id,
         (SELECT count(*) FROM rfq_events e WHERE e.rfq_id = r.id AND e.type = 'EXPIRE')::text AS expiries,
         (SELECT count(*) FROM trades t WHERE t.rfq_id = r.id)::text AS trades,
         (SELECT count(*) FROM trades t WHERE t.rfq_id = r.id AND t.created_at > r.expires_at)::text AS late
       FROM rfqs r WHERE r.id = ANY($1)`,
      [rfqIds]
    )
    assert.strictEqual(rows.length, rfqIds.length)
    for (const row of rows) {
      assert.strictEqual(Number(row.expiries) + Number(row.trades), 1, `RFQ ${row.rfq_id}`)
      // A trade is accepted (its record made) no later than the RFQ's expiry.
      assert.strictEqual(Number(row.late), 0, `RFQ ${row.rfq_id}`)
    }
  } finally {
    await db.close()
  }
}, 120_000)

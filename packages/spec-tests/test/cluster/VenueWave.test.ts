import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { type ClusterProcesses, startCluster } from "../../src/cluster/ClusterProcesses.js"
import { isServerError, openWorlds } from "../../src/cluster/ClusterWorlds.js"
import {
  askThrough,
  heardOn,
  MMP_FILLS_SQL,
  queryOne,
  quoteIdOf,
  quoteStatusThrough,
  rfqOwnedBy,
  sessionsOnEvery,
  until,
  updateBody
} from "../../src/cluster/VenueWave.js"
import { sleep } from "../../src/Fixtures.js"
import type { RpcSession } from "../../src/RpcSession.js"
import { expectError } from "../../src/Shapes.js"
import type { World } from "../../src/World.js"

/**
 * Issue 16 on three hosts (multi-host mode, one cluster for every case): market-maker protection
 * of one desk quoting on RFQs owned by every host, a quote's `validUntil` fired once by its RFQ's
 * owner (and by the next owner after a `kill -9`), the tape printed once on every host. A create
 * is owned by the host it lands on, so RFQs created through host i are owned by host i. Waits poll;
 * nothing is asserted on time.
 */

const START_MS = 240_000
let cluster: ClusterProcesses
let hosts: ReadonlyArray<World>

beforeAll(async () => {
  cluster = await startCluster({
    hosts: 3,
    env: { RATE_LIMIT_PER_MINUTE: "1000000", RFQ_TTL_SECONDS: "3600" }
  })
  hosts = await openWorlds(cluster)
}, START_MS)

afterAll(async () => {
  await cluster?.stop()
}, START_MS)

const closeAll = (sessions: ReadonlyArray<RpcSession>) => {
  for (const s of sessions) s.close()
}
const events = (s: RpcSession, channel: string) => heardOn(s, channel).map((n) => n.data)

describe("market-maker protection across hosts", () => {
  it("one desk, RFQs owned by every host, accepts through every host: the limit holds exactly, the trip and thaws reach every host", async () => {
    const maker = "maker2" as const
    const listeners = await sessionsOnEvery(hosts, maker, ["mmp.maker"])
    try {
      const put = await hosts[0]!.api.put("/v1/mmp/config", {
        token: hosts[0]!.token(maker),
        json: { baseCurrency: "BTC", intervalMs: 600_000, frozenMs: 0, tradeCountLimit: 3 }
      })
      assert.strictEqual(put.status, 200, put.text)
      // Four RFQs owned by each host, each quoted by the desk through another host.
      const book: Array<{ owner: number; rfqId: number; quoteId: number; body: Record<string, unknown> }> = []
      for (let n = 0; n < 12; n++) {
        const owner = n % 3
        const rfqId = await rfqOwnedBy(hosts[owner]!)
        const { answer, body } = await askThrough(hosts[(owner + 1) % 3]!, maker, rfqId)
        book.push({ owner, rfqId, quoteId: quoteIdOf(answer), body })
      }
      // Nine accepted at once, each through a host that does not own its RFQ; three left on the book.
      const accepted = book.slice(0, 9)
      const left = book.slice(9)
      const answers = await Promise.all(
        accepted.map(({ owner, quoteId }) => {
          const via = hosts[(owner + 2) % 3]!
          return via.api.post("/v1/rfq/trade", { token: via.token("taker"), json: { rfqQuoteId: quoteId } })
        })
      )
      for (const a of answers) assert.isFalse(isServerError(a.status), a.text)
      const filled = answers.filter((a) => a.status === 200)
      assert.strictEqual(filled.length, 3, answers.map((a) => `${a.status} ${a.text}`).join("\n"))
      for (const a of answers.filter((a) => a.status !== 200))
        expectError(a, { status: 400, message: "mmp frozen" })

      // What the database holds: exactly the admitted fills traded, none admitted after the trip.
      assert.deepStrictEqual(
        await queryOne(cluster.namespace, MMP_FILLS_SQL, [accepted.map((b) => b.rfqId)]),
        { admitted: "3", late: "0", traded: "3" }
      )

      // Every host's session heard the trip once; the desk's quotes left on the book, on RFQs of
      // every owner, are cancelled, read through every host.
      await until("the trip heard on every host", () =>
        listeners.every((s) => events(s, "mmp.maker").length > 0)
      )
      for (const s of listeners) {
        assert.strictEqual(events(s, "mmp.maker").length, 1)
        assert.deepInclude(events(s, "mmp.maker")[0], { event: "tripped", frozen: true, limit: "tradeCount" })
      }
      for (const via of hosts)
        for (const q of left)
          await until(`quote ${q.quoteId} cancelled, read through ${via.api.baseUrl}`, async () => {
            return (await quoteStatusThrough(via, maker, q.rfqId, q.quoteId)) === "cancelled"
          })
      for (const via of hosts) {
        const status = await via.api.get("/v1/mmp/status", { token: via.token(maker) })
        const [btc] = status.body as Array<{ frozen: boolean; window: { amount: number; trades: number } }>
        assert.deepStrictEqual([btc!.frozen, btc!.window.amount, btc!.window.trades], [true, 300, 3])
      }
      // Creates and updates through every host, on RFQs of every owner: mmp frozen.
      for (const [i, q] of left.entries()) {
        const via = hosts[i]!
        expectError(await via.api.post("/v1/rfq/quote", { token: via.token(maker), json: q.body }), {
          status: 400,
          message: "mmp frozen"
        })
        const other = hosts[(i + 1) % 3]!
        expectError(
          await other.api.put("/v1/rfq/quote", {
            token: other.token(maker),
            json: updateBody(q.body, q.quoteId)
          }),
          { status: 400, message: "mmp frozen" }
        )
      }
      const rpc = await listeners[1]!.call("v1/quote/create", left[0]!.body)
      assert.strictEqual(
        (rpc.error as { message?: string } | undefined)?.message,
        "mmp frozen",
        JSON.stringify(rpc)
      )

      // A reset through one host thaws on all.
      const reset = await hosts[1]!.api.post("/v1/mmp/reset", {
        token: hosts[1]!.token(maker),
        json: { baseCurrency: "BTC" }
      })
      assert.strictEqual(reset.status, 200, reset.text)
      await until("the thaw heard on every host", () =>
        listeners.every((s) => events(s, "mmp.maker").length > 1)
      )
      for (const s of listeners)
        assert.deepInclude(events(s, "mmp.maker")[1], { event: "thawed", by: "reset" })
      const fresh: Array<{ owner: number; rfqId: number; quoteId: number }> = []
      for (const [i, q] of left.entries()) {
        const { answer } = await askThrough(hosts[(i + 2) % 3]!, maker, q.rfqId)
        fresh.push({ owner: q.owner, rfqId: q.rfqId, quoteId: quoteIdOf(answer) })
      }

      // A freeze with an end thaws by the timer of one host: one `thawed`, heard on every host.
      const timed = await hosts[2]!.api.put("/v1/mmp/config", {
        token: hosts[2]!.token(maker),
        json: { baseCurrency: "BTC", intervalMs: 600_000, frozenMs: 1500, tradeCountLimit: 1 }
      })
      assert.strictEqual(timed.status, 200, timed.text)
      const first = fresh[0]!
      const traded = await hosts[1]!.api.post("/v1/rfq/trade", {
        token: hosts[1]!.token("taker"),
        json: { rfqQuoteId: first.quoteId }
      })
      assert.strictEqual(traded.status, 200, traded.text)
      for (const via of hosts)
        for (const q of fresh.slice(1))
          await until(`quote ${q.quoteId} cancelled by the timed trip`, async () => {
            return (await quoteStatusThrough(via, maker, q.rfqId, q.quoteId)) === "cancelled"
          })
      await until("the timed thaw heard on every host", () =>
        listeners.every((s) => events(s, "mmp.maker").length > 3)
      )
      await sleep(500)
      for (const s of listeners) {
        const story = events(s, "mmp.maker")
        assert.deepStrictEqual(
          story.map((e) => `${e.event}/${e.by ?? ""}`),
          ["tripped/", "thawed/reset", "tripped/", "thawed/time"]
        )
        assert.isNumber(story[2]!.frozenUntil)
      }
      for (const via of hosts) {
        const status = await via.api.get("/v1/mmp/status", { token: via.token(maker) })
        assert.deepInclude((status.body as Array<object>)[0], { frozen: false })
        assert.strictEqual(quoteIdOf((await askThrough(via, maker, fresh[1]!.rfqId)).answer) > 0, true)
      }
    } finally {
      closeAll(listeners)
      await hosts[0]!.api.delete("/v1/mmp/config", {
        token: hosts[0]!.token(maker),
        query: { baseCurrency: "BTC" }
      })
    }
  }, 120_000)
})

describe("the tape across hosts", () => {
  it("a trade settled on one host prints once on every host's `trades` sessions and public list", async () => {
    const [a, b, c] = hosts as [World, World, World]
    const sessions = await sessionsOnEvery(hosts, "viewer", ["trades"])
    try {
      const rfqId = await rfqOwnedBy(a)
      const quoteId = quoteIdOf((await askThrough(b, "maker1", rfqId)).answer)
      const traded = await c.api.post("/v1/rfq/trade", {
        token: c.token("taker"),
        json: { rfqQuoteId: quoteId }
      })
      assert.strictEqual(traded.status, 200, traded.text)
      const tradeId = (traded.body as { rfqTradeId: number }).rfqTradeId
      const printsOf = (s: RpcSession) => events(s, "trades").filter((e) => e.tradeId === tradeId)
      await until("the print on every host", () => sessions.every((s) => printsOf(s).length > 0))
      await sleep(300)
      const { event, ...element } = printsOf(sessions[0]!)[0]!
      assert.strictEqual(event, "created")
      for (const s of sessions) assert.deepStrictEqual(printsOf(s), [{ event, ...element }])
      for (const via of hosts) {
        const page = await via.api.get("/v1/trades/public", {
          token: via.token("viewer"),
          query: { limit: 100 }
        })
        assert.strictEqual(page.status, 200, page.text)
        const found = (page.body as { results: Array<{ tradeId: number }> }).results.filter(
          (r) => r.tradeId === tradeId
        )
        assert.deepStrictEqual(found, [element])
      }
    } finally {
      closeAll(sessions)
    }
  }, 60_000)
})

describe("quote validUntil across hosts", () => {
  const expiredStory = (s: RpcSession, quoteId: number) =>
    events(s, "rfq_quote.taker")
      .filter((e) => e.rfqQuoteId === quoteId)
      .map((e) => `${e.event}/${e.status}`)

  it("expires once, heard once on every host; an accept through a non-owner after the instant is refused", async () => {
    const [a, b, c] = hosts as [World, World, World]
    const sessions = await sessionsOnEvery(hosts, "taker", ["rfq_quote.taker"])
    try {
      const rfqId = await rfqOwnedBy(a)
      const validUntil = Date.now() + 1500
      const quoteId = quoteIdOf((await askThrough(b, "maker1", rfqId, { validUntil })).answer)
      await sleep(validUntil - Date.now() + 20)
      expectError(
        await c.api.post("/v1/rfq/trade", { token: c.token("taker"), json: { rfqQuoteId: quoteId } }),
        {
          status: 400,
          message: "quote has expired"
        }
      )
      await until("the expiry on every host", () =>
        sessions.every((s) => expiredStory(s, quoteId).length > 1)
      )
      await sleep(500)
      for (const s of sessions)
        assert.deepStrictEqual(expiredStory(s, quoteId), ["created/active", "updated/expired"])
      for (const via of hosts)
        assert.strictEqual(await quoteStatusThrough(via, "maker1", rfqId, quoteId), "expired")
    } finally {
      closeAll(sessions)
    }
  }, 60_000)

  // Last: it kills host 2.
  it("after its owner is killed, the next owner expires the quote once (timers re-armed per shard)", async () => {
    const [a, b] = hosts as [World, World]
    const survivors = [a, b]
    const sessions = await sessionsOnEvery(survivors, "taker", ["rfq_quote.taker"])
    try {
      const rfqId = await rfqOwnedBy(hosts[2]!)
      // One instant likely passes while nobody owns the RFQ (the adoption expires it), one after.
      const soonAt = Date.now() + 2000
      const laterAt = Date.now() + 16_000
      const soon = quoteIdOf((await askThrough(a, "maker1", rfqId, { validUntil: soonAt })).answer)
      const later = quoteIdOf((await askThrough(b, "maker2", rfqId, { validUntil: laterAt })).answer)
      cluster.process(2)!.child.kill("SIGKILL")
      await until(
        "the RFQ answered by a survivor",
        async () => (await a.api.get(`/v1/rfq/${rfqId}`, { token: a.token("taker") })).status === 200,
        600
      )
      if (Date.now() < laterAt - 500)
        assert.strictEqual(await quoteStatusThrough(b, "maker2", rfqId, later), "active")
      await until(
        "both expiries heard on the survivors",
        () => sessions.every((s) => expiredStory(s, soon).length > 1 && expiredStory(s, later).length > 1),
        400
      ).catch(async (error: unknown) => {
        // What each survivor's session heard and what storage holds, so a failure says which is short.
        const heard = sessions.map(
          (s) => `${expiredStory(s, soon).join(",")} | ${expiredStory(s, later).join(",")}`
        )
        const stored = await queryOne(
          cluster.namespace,
          `SELECT (SELECT string_agg(seq || ':' || type, ' ' ORDER BY seq) FROM rfq_events WHERE rfq_id = $1) AS events,
             (SELECT string_agg(id || ':' || status, ' ' ORDER BY id) FROM quotes WHERE rfq_id = $1) AS quotes`,
          [rfqId]
        )
        const logs = [0, 1]
          .flatMap((i) =>
            (cluster.process(i)?.stdout() ?? "").split("\n").map((line) => `host ${i}: ${line}`)
          )
          .filter((line) => /last step|not published|WARN|ERROR/i.test(line))
          .slice(-20)
        throw new Error(
          `${(error as Error).message}; heard (soon | later) per survivor: ${heard.join(" ; ")}; stored: ${JSON.stringify(stored)}; survivors' warnings: ${logs.join(" | ")}`
        )
      })
      await sleep(500)
      for (const s of sessions)
        for (const q of [soon, later])
          assert.deepStrictEqual(expiredStory(s, q), ["created/active", "updated/expired"])
      expectError(
        await b.api.post("/v1/rfq/trade", { token: b.token("taker"), json: { rfqQuoteId: later } }),
        {
          status: 400,
          message: "quote has expired"
        }
      )
      const expired = `SELECT count(*)::text AS n FROM quotes WHERE rfq_id = $1 AND status = 'expired'`
      assert.deepStrictEqual(await queryOne(cluster.namespace, expired, [rfqId]), { n: "2" })
    } finally {
      closeAll(sessions)
    }
  }, 120_000)
})

import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { ApiClient } from "../../src/ApiClient.js"
import { runAdmin } from "../../src/reliability/AdminCommand.js"
import { type ClusterProcesses, startCluster } from "../../src/cluster/ClusterProcesses.js"
import { markQuote, newRfq, openWorlds } from "../../src/cluster/ClusterWorlds.js"
import { rfqBody, sleep } from "../../src/Fixtures.js"
import { openRpcSession, type RpcSession } from "../../src/RpcSession.js"
import type { World } from "../../src/World.js"

/**
 * Three hosts in multi-host mode, with a per-user limit low enough to count: WebSocket subscribers
 * on one host hear every event of traffic sent through the others, once and in each RFQ's order;
 * one user's requests spread over the hosts get exactly the limit.
 */

const LIMIT = 120
const START_MS = 240_000
let cluster: ClusterProcesses
let hosts: ReadonlyArray<World>

beforeAll(async () => {
  cluster = await startCluster({
    hosts: 3,
    env: { RATE_LIMIT_PER_MINUTE: `${LIMIT}`, RFQ_TTL_SECONDS: "3600" }
  })
  hosts = await openWorlds(cluster)
}, START_MS)

afterAll(async () => {
  await cluster?.stop()
}, START_MS)

interface Note {
  readonly channel: string
  readonly data: {
    readonly event: string
    readonly rfqId?: number
    readonly rfqQuoteId?: number
    readonly status?: string
  }
}

const notes = (session: RpcSession): Array<Note> =>
  session.connection.notifications.map((n) => (n as { params: Note }).params)

/** The notes of one RFQ on one channel, as `event/status` texts, in arrival order. */
const storyOf = (all: ReadonlyArray<Note>, channel: string, rfqId: number) =>
  all
    .filter((n) => n.channel === channel && n.data.rfqId === rfqId)
    .map((n) => `${n.data.event}/${n.data.status ?? ""}`)

/** Maker 1 quotes a sell of 100 on DBT at the mark through `w`; answers the quote's id. */
const quoteThrough = async (w: World, rfqId: number): Promise<number> => {
  const quoted = await w.api.post("/v1/rfq/quote", {
    token: w.token("maker1"),
    json: { rfqId, direction: "sell", amount: 100, settlementOption: "DBT", ...(await markQuote(w, rfqId)) }
  })
  assert.strictEqual(quoted.status, 200, quoted.text)
  return (quoted.body as { rfqQuoteId: number }).rfqQuoteId
}

/** Maker 1 updates its quote through `updater` (at the mark), then the taker cancels the RFQ through `canceller`. */
const updateThenCancel = async (updater: World, canceller: World, rfqId: number, rfqQuoteId: number) => {
  const updated = await updater.api.put("/v1/rfq/quote", {
    token: updater.token("maker1"),
    json: { rfqQuoteId, amount: 100, settlementOption: "DBT", ...(await markQuote(updater, rfqId)) }
  })
  assert.strictEqual(updated.status, 200, updated.text)
  const cancelled = await canceller.api.post("/v1/rfq/cancel", {
    token: canceller.token("taker"),
    json: { rfqId }
  })
  assert.strictEqual(cancelled.status, 200, cancelled.text)
}

describe("events across hosts", () => {
  it("subscribers on every host hear the traffic sent through the others, once, in order", async () => {
    const [a, b, c] = hosts as [World, World, World]
    const channels = ["rfq.taker", "rfq_quote.taker"]
    const sessions = await Promise.all([a, b, c].map((w) => openRpcSession(w, "taker")))
    try {
      for (const s of sessions) await s.result("v1/subscribe", { channels })
      const rfqIds: Array<number> = []
      for (let i = 0; i < 8; i++) {
        const rfqId = await newRfq(i % 2 === 0 ? b : c)
        rfqIds.push(rfqId)
        const rfqQuoteId = await quoteThrough(c, rfqId)
        await updateThenCancel(b, c, rfqId, rfqQuoteId)
      }
      // Created, quoted, updated, cancelled: two RFQ events and three quote events per RFQ.
      const expected = rfqIds.length * 5
      const deadline = Date.now() + 20_000
      while (sessions.some((s) => notes(s).length < expected) && Date.now() < deadline) await sleep(50)
      await sleep(300)
      const [onA, onB, onC] = sessions.map(notes) as [Array<Note>, Array<Note>, Array<Note>]
      for (const rfqId of rfqIds) {
        const rfqStory = storyOf(onA, "rfq.taker", rfqId)
        assert.deepStrictEqual(rfqStory, ["created/open", "updated/cancelled"], `RFQ ${rfqId} on A`)
        const quoteStory = storyOf(onA, "rfq_quote.taker", rfqId)
        // A cancelled RFQ's active quotes leave its book: `deleted`, status cancelled.
        assert.deepStrictEqual(quoteStory, ["created/active", "updated/active", "deleted/cancelled"])
        for (const other of [onB, onC]) {
          assert.deepStrictEqual(storyOf(other, "rfq.taker", rfqId), rfqStory)
          assert.deepStrictEqual(storyOf(other, "rfq_quote.taker", rfqId), quoteStory)
        }
      }
      for (const s of sessions) assert.strictEqual(notes(s).length, expected)
    } finally {
      for (const s of sessions) s.close()
    }
  }, 120_000)
})

describe("events across hosts: each host reads only what its sessions may hear", () => {
  it("a session subscribing after an RFQ's first steps hears every later one, wherever it is; a session that may not see the RFQ hears none", async () => {
    const [a, b, c] = hosts as [World, World, World]
    const open = async (w: World, party: Parameters<typeof openRpcSession>[1], channels: Array<string>) => {
      const session = await openRpcSession(w, party)
      await session.result("v1/subscribe", { channels })
      return session
    }
    // From the start: a control of each kind on C, and on A (the RFQ's owner) a maker not invited.
    const sessions = [
      await open(c, "taker", ["rfq.taker", "rfq_quote.taker"]),
      await open(c, "maker2", ["rfq.maker", "rfq_quote.maker"]),
      await open(a, "maker3", ["rfq.maker", "rfq_quote.maker", "rfq.taker", "rfq_quote.taker"])
    ]
    const [takerOnC, maker2OnC, stranger] = sessions as [RpcSession, RpcSession, RpcSession]
    try {
      // Created through A (A owns it; no session on A or B may see it yet), quoted through C.
      const rfqId = await newRfq(a)
      const rfqQuoteId = await quoteThrough(c, rfqId)
      // Late: the taker on A, the owner, and an invited maker on B.
      const takerOnA = await open(a, "taker", ["rfq.taker", "rfq_quote.taker"])
      const maker2OnB = await open(b, "maker2", ["rfq.maker", "rfq_quote.maker"])
      sessions.push(takerOnA, maker2OnB)
      await updateThenCancel(b, c, rfqId, rfqQuoteId)

      const about = (session: RpcSession) => notes(session).filter((n) => n.data.rfqId === rfqId)
      // The controls heard the whole story: created, quoted, updated, cancelled (quote removed).
      const deadline = Date.now() + 20_000
      while ((about(takerOnC).length < 5 || about(takerOnA).length < 3) && Date.now() < deadline)
        await sleep(50)
      await sleep(300)
      assert.deepStrictEqual(storyOf(notes(takerOnC), "rfq.taker", rfqId), [
        "created/open",
        "updated/cancelled"
      ])
      assert.deepStrictEqual(storyOf(notes(takerOnC), "rfq_quote.taker", rfqId), [
        "created/active",
        "updated/active",
        "deleted/cancelled"
      ])
      // The late sessions: every step after they subscribed, once, in order, as the controls heard it.
      assert.deepStrictEqual(storyOf(notes(takerOnA), "rfq.taker", rfqId), ["updated/cancelled"])
      assert.deepStrictEqual(storyOf(notes(takerOnA), "rfq_quote.taker", rfqId), [
        "updated/active",
        "deleted/cancelled"
      ])
      const makerStory = storyOf(notes(maker2OnC), "rfq.maker", rfqId)
      assert.deepStrictEqual(makerStory.slice(0, 1), ["created/open"])
      assert.deepStrictEqual(storyOf(notes(maker2OnB), "rfq.maker", rfqId), makerStory.slice(1))
      assert.isAbove(makerStory.length, 1)
      // Maker 2 quoted nothing; maker 3, not invited, heard nothing of the RFQ on any channel.
      assert.deepStrictEqual(storyOf(notes(maker2OnB), "rfq_quote.maker", rfqId), [])
      assert.deepStrictEqual(about(stranger), [])
    } finally {
      for (const s of sessions) s.close()
    }
  }, 120_000)
})

describe("caches across hosts", () => {
  it("credentials created and deleted on one host are used or refused at once on the others (the bus)", async () => {
    const [a, b] = hosts as [World, World]
    const createWith = (credentialsId: number) =>
      b.api.post("/v1/rfq/0", {
        token: b.token("taker"),
        json: rfqBody(b, "taker", { settlementCredentials: { DBT: credentialsId } })
      })
    // B reads (and caches) the taker desk's credentials.
    assert.strictEqual((await createWith(b.credentialsId("taker", "dbt-main"))).status, 200)
    const created = await a.api.post("/v1/account/exchange-credentials", {
      token: a.token("taker"),
      json: {
        alias: `bus-${Date.now()}`,
        exchange: "DBT",
        clientId: "bus-client",
        clientSecret: "bus-secret"
      }
    })
    assert.strictEqual(created.status, 200, created.text)
    const id = (created.body as { credentialsId: number }).credentialsId
    const withNew = await createWith(id)
    assert.strictEqual(withNew.status, 200, withNew.text)
    const deleted = await a.api.delete(`/v1/account/exchange-credentials/${id}`, { token: a.token("taker") })
    assert.strictEqual(deleted.status, 200, deleted.text)
    const withDeleted = await createWith(id)
    assert.strictEqual(withDeleted.status, 404, withDeleted.text)
  })
})

describe("the admin command beside running hosts", () => {
  it("a client deactivated with the admin command is refused on every host at once", async () => {
    const env = cluster.environment(0)
    const created = await runAdmin(env, ["client", "create", "1"])
    assert.strictEqual(created.code, 0, created.stderr)
    const clientId = /clientId: (\S+)/.exec(created.stdout)![1]!
    const clientSecret = /clientSecret: (\S+)/.exec(created.stdout)![1]!
    const login = await hosts[0]!.api.post("/v1/auth", { json: { clientId, clientSecret } })
    assert.strictEqual(login.status, 200, login.text)
    const token = (login.body as { access_token: string }).access_token
    // Every host has checked (and cached) the token's standing.
    for (const w of hosts) assert.strictEqual((await w.api.get("/v1/exchange/maker", { token })).status, 200)
    const deactivated = await runAdmin(env, ["client", "deactivate", clientId])
    assert.strictEqual(deactivated.code, 0, deactivated.stderr)
    assert.strictEqual(deactivated.stderr, "")
    // At once, not after the cache's 5 s: the admin's notice reached every host.
    for (const w of hosts) assert.strictEqual((await w.api.get("/v1/exchange/maker", { token })).status, 401)
  }, 60_000)

  it("a maker created with the admin command is listed by every host at once, caches and all", async () => {
    const env = cluster.environment(0)
    const makerId = `admin-made-${Date.now().toString(36)}`
    const makerIds = async (w: World) => {
      const answer = await w.api.get("/v1/exchange/maker", { token: w.token("taker") })
      assert.strictEqual(answer.status, 200, answer.text)
      return (answer.body as Array<{ makerId: string }>).map((m) => m.makerId)
    }
    // Every host has read (and cached) the maker list without it.
    for (const w of hosts) assert.notInclude(await makerIds(w), makerId)
    const desk = await runAdmin(env, ["desk", "create", makerId])
    assert.strictEqual(desk.code, 0, desk.stderr)
    const maker = await runAdmin(env, ["maker", "create", makerId, makerId])
    assert.strictEqual(maker.code, 0, maker.stderr)
    assert.strictEqual(maker.stderr, "")
    // At once, not after the cache's 5 s: the admin's notice cleared the engine's reference data too.
    for (const w of hosts) assert.include(await makerIds(w), makerId)
  }, 60_000)
})

describe("limits across hosts", () => {
  it("one user's requests round robin over the hosts: exactly the limit passes", async () => {
    // A fresh window: wait for the next minute if this one is nearly over.
    const intoMinute = Date.now() % 60_000
    if (intoMinute > 40_000) await sleep(60_000 - intoMinute + 200)
    const token = hosts[0]!.token("maker3")
    // Clients that answer a 429 as it comes (the worlds' clients wait for the window and resend).
    const clients = hosts.map((w) => new ApiClient(w.api.baseUrl, { retryOnRateLimit: false }))
    // What is left of the user's window (logging in the worlds used some of it).
    const probe = await clients[0]!.get("/v1/exchange/maker", { token })
    assert.strictEqual(probe.status, 200)
    const left = Number(probe.headers.get("x-ratelimit-remaining"))
    assert.isAbove(left, LIMIT / 2)
    const statuses = await Promise.all(
      Array.from({ length: left + 60 }, (_, i) =>
        clients[i % clients.length]!.get("/v1/exchange/maker", { token }).then((r) => r.status)
      )
    )
    assert.strictEqual(statuses.filter((s) => s === 200).length, left)
    assert.strictEqual(statuses.filter((s) => s === 429).length, 60)
  }, 120_000)
})

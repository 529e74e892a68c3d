import * as http from "node:http"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { startCluster, type ClusterProcesses } from "../../src/cluster/ClusterProcesses.js"
import { isServerError, markQuote, newRfq, openWorlds, pooled } from "../../src/cluster/ClusterWorlds.js"
import { rfqBody, sleep, trade } from "../../src/Fixtures.js"
import { portableGroups } from "../../src/scenarios/index.js"
import { openWorld, type World } from "../../src/World.js"
import { register } from "../support/register.js"

/**
 * Three host processes on one PostgreSQL, NATS and Redis (multi-host mode), HAProxy in front:
 * first the portable black-box scenarios through HAProxy (round robin, except that a request about
 * an RFQ whose owner HAProxy has learned goes to that owner: docs/deploy.md), then the routing to
 * the owner itself, then checks that choose the host of each request (every forward between hosts).
 *
 * Over 300 lines on purpose: every check here shares one cluster of three hosts and HAProxy, whose
 * start is the slowest set-up of the suite.
 */

const START_MS = 240_000
let cluster: ClusterProcesses
let proxied: World
let hosts: ReadonlyArray<World>

beforeAll(async () => {
  cluster = await startCluster({
    hosts: 3,
    withHaproxy: true,
    env: { RATE_LIMIT_PER_MINUTE: "1000000", RFQ_TTL_SECONDS: "3600" }
  })
  proxied = await openWorld(cluster.proxy!.url)
  hosts = await openWorlds(cluster)
}, START_MS)

afterAll(async () => {
  await cluster?.stop()
}, START_MS)

/**
 * Two scenarios are checked on a host directly instead of through HAProxy: a body over the limit.
 * The host answers 413 as soon as the declared length is over 1 MiB, before the body arrives; HAProxy
 * passes the answer on and then closes the client's connection (it cannot find the next request
 * in an unread body), and depending on timing a client still sending sees the connection close
 * before it reads the answer (Node's fetch reports "other side closed"; once, `node:http` waited
 * for HAProxy's timeout). That is the proxy's behaviour, documented in docs/deploy.md; the hosts
 * answer 413 in multi-host mode exactly as one host does, checked below on each host.
 */
const OVER_THE_LIMIT = new Set([
  "api.md, rate limits: X-RateLimit-* headers are on every response, 413 included",
  "a body over 1 MiB is refused with 413 and the standard body; 1 MiB is still read"
])
const throughProxy = portableGroups.map((g) => ({
  ...g,
  scenarios: g.scenarios.filter((s) => !OVER_THE_LIMIT.has(s.name))
}))

describe("three hosts behind HAProxy", () => {
  register(throughProxy, () => proxied)

  it("a body over the limit, sent to each host: 413 with the standard body and X-RateLimit-* headers", async () => {
    for (let i = 0; i < cluster.size; i++) {
      const answer = await postRaw(`${cluster.baseUrl(i)}/v1/auth`, Buffer.alloc(1024 * 1024 + 1, 32))
      assert.strictEqual(answer.status, 413)
      const error = JSON.parse(answer.body) as { code: number; message: string }
      assert.deepStrictEqual([error.code, error.message], [413, "request body too large"])
      for (const header of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"])
        assert.match(String(answer.headers[header]), /^\d+$/)
    }
  })
})

/**
 * The one host that names RFQ `rfqId` as its own when each is asked directly, once that has held
 * for three rounds in a row: while a cluster that just started moves shards to the hosts that
 * joined, the host giving a shard up may still say it holds it for up to a second (its assignments
 * refresh every second), and a hint then only costs a forward. Throws if it never settles (20 s).
 */
const settledOwner = async (rfqId: number): Promise<number> => {
  const deadline = Date.now() + 20_000
  let last = -1
  let rounds = 0
  for (;;) {
    const answers = await Promise.all(
      hosts.map((w) => w.api.get(`/v1/rfq/${rfqId}`, { token: w.token("taker") }))
    )
    for (const answer of answers) assert.strictEqual(answer.status, 200, answer.text)
    const claims = answers.flatMap((answer, i) => (answer.headers.get("x-owns-rfq") === null ? [] : [i]))
    for (const i of claims) assert.strictEqual(answers[i]!.headers.get("x-owns-rfq"), String(rfqId))
    rounds = claims.length === 1 && claims[0] === last ? rounds + 1 : claims.length === 1 ? 1 : 0
    last = claims.length === 1 ? claims[0]! : -1
    if (rounds >= 3) return last
    if (Date.now() > deadline) throw new Error(`RFQ ${rfqId}: owners claimed ${JSON.stringify(claims)}`)
    await sleep(500)
  }
}

/** A host's count of answered requests of one route and method with status 200 (`GET /metrics`). */
const answeredOn = async (baseUrl: string, method: string, routePattern: string): Promise<number> => {
  const text = await (await fetch(`${baseUrl}/metrics`)).text()
  const line = text
    .split("\n")
    .find(
      (l) =>
        l.startsWith("rfq_http_requests_total{") &&
        l.includes(`route="${routePattern}"`) &&
        l.includes(`method="${method}"`) &&
        l.includes(`status="200"`)
    )
  return line === undefined ? 0 : Number(line.split(" ").at(-1))
}

describe("three hosts behind HAProxy: routing to the owner", () => {
  const counted = [
    ["GET", "/v1/rfq/{id}"],
    ["POST", "/v1/rfq/quote"],
    ["PUT", "/v1/rfq/quote"],
    ["POST", "/v1/rfq/trade"]
  ] as const
  const counts = () =>
    Promise.all(
      Array.from({ length: cluster.size }, (_, i) =>
        Promise.all(counted.map(([method, pattern]) => answeredOn(cluster.baseUrl(i), method, pattern)))
      )
    )

  it("the owner says so in X-Owns-Rfq / X-Owns-Quote, a forwarding host never; HAProxy then sends each request about the RFQ to its owner, and clients never see the hints", async () => {
    await settledOwner(await newRfq(hosts[0]!))
    const created = await proxied.api.post("/v1/rfq/0", {
      token: proxied.token("taker"),
      json: rfqBody(proxied, "taker")
    })
    assert.strictEqual(created.status, 200, created.text)
    const rfqId = (created.body as { rfqId: number }).rfqId
    // The hints are HAProxy's alone: removed before the answer reaches the client.
    assert.strictEqual(created.headers.get("x-owns-rfq"), null)
    // Asked directly, exactly one host owns it; the others forward and say nothing.
    const owner = await settledOwner(rfqId)
    const legs = await markQuote(hosts[owner]!, rfqId)

    const before = await counts()
    // Round robin over three hosts would put these 9 requests all on one host once in 3^8 runs.
    for (let i = 0; i < 5; i++) {
      const read = await proxied.api.get(`/v1/rfq/${rfqId}`, { token: proxied.token("maker1") })
      assert.strictEqual(read.status, 200, read.text)
    }
    const quoted = await proxied.api.post("/v1/rfq/quote", {
      token: proxied.token("maker1"),
      json: { rfqId, direction: "sell", amount: 100, settlementOption: "DBT", ...legs }
    })
    assert.strictEqual(quoted.status, 200, quoted.text)
    const rfqQuoteId = (quoted.body as { rfqQuoteId: number }).rfqQuoteId
    assert.strictEqual(quoted.headers.get("x-owns-quote"), null)
    const updated = await proxied.api.put("/v1/rfq/quote", {
      token: proxied.token("maker1"),
      json: { rfqQuoteId, amount: 100, settlementOption: "DBT", ...legs }
    })
    assert.strictEqual(updated.status, 200, updated.text)
    const view = await proxied.api.get(`/v1/rfq/${rfqId}`, { token: proxied.token("taker") })
    assert.strictEqual(view.status, 200, view.text)
    const traded = await proxied.api.post("/v1/rfq/trade", {
      token: proxied.token("taker"),
      json: { rfqQuoteId }
    })
    assert.strictEqual(traded.status, 200, traded.text)
    const after = await counts()

    const delta = after.map((host, i) => host.map((n, k) => n - before[i]![k]!))
    const expected = hosts.map((_, i) => (i === owner ? [6, 1, 1, 1] : [0, 0, 0, 0]))
    assert.deepStrictEqual(delta, expected, `requests answered per host (owner ${owner})`)
  })
})

describe("three hosts, host by host: the owner's hints", () => {
  it("a quote's create and update answered by the owner name the RFQ and the quote; forwarded, nothing", async () => {
    await settledOwner(await newRfq(hosts[0]!))
    const created = await hosts[0]!.api.post("/v1/rfq/0", {
      token: hosts[0]!.token("taker"),
      json: rfqBody(hosts[0]!, "taker")
    })
    assert.strictEqual(created.status, 200, created.text)
    const rfqId = (created.body as { rfqId: number }).rfqId
    // A create is owned by the host that takes it (it picks an id of its own shards).
    assert.strictEqual(created.headers.get("x-owns-rfq"), String(rfqId))
    assert.strictEqual(await settledOwner(rfqId), 0)
    const [a, b] = hosts as [World, World]
    const legs = await markQuote(a, rfqId)
    const quote = (w: World) =>
      w.api.post("/v1/rfq/quote", {
        token: w.token("maker1"),
        json: { rfqId, direction: "sell", amount: 100, settlementOption: "DBT", ...legs }
      })
    const here = await quote(a)
    assert.strictEqual(here.status, 200, here.text)
    const rfqQuoteId = (here.body as { rfqQuoteId: number }).rfqQuoteId
    assert.deepStrictEqual(
      [here.headers.get("x-owns-rfq"), here.headers.get("x-owns-quote")],
      [String(rfqId), String(rfqQuoteId)]
    )
    const update = (w: World) =>
      w.api.put("/v1/rfq/quote", {
        token: w.token("maker1"),
        json: { rfqQuoteId, amount: 100, settlementOption: "DBT", ...legs }
      })
    const forwarded = await update(b)
    assert.strictEqual(forwarded.status, 200, forwarded.text)
    assert.deepStrictEqual(
      [forwarded.headers.get("x-owns-rfq"), forwarded.headers.get("x-owns-quote")],
      [null, null]
    )
    const atOwner = await update(a)
    assert.strictEqual(atOwner.status, 200, atOwner.text)
    assert.deepStrictEqual(
      [atOwner.headers.get("x-owns-rfq"), atOwner.headers.get("x-owns-quote")],
      [String(rfqId), String(rfqQuoteId)]
    )
    // A refusal names nothing, even at the owner.
    const refused = await a.api.put("/v1/rfq/quote", {
      token: a.token("maker1"),
      json: { rfqQuoteId, amount: -1, settlementOption: "DBT", ...legs }
    })
    assert.strictEqual(refused.status, 400, refused.text)
    assert.strictEqual(refused.headers.get("x-owns-rfq"), null)
  })
})

/** POSTs `body` and resolves with the answer, even if the server closes while the body is sent. */
const postRaw = (url: string, body: Buffer) =>
  new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const request = http.request(url, { method: "POST", headers: { "content-type": "application/json" } })
    request.on("response", (response) => {
      let text = ""
      response.on("data", (chunk) => {
        text += chunk
      })
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text })
      )
    })
    request.on("error", (error) => {
      // A write cut short after the answer arrived is expected; anything else fails the check.
      if (!request.writableEnded) reject(error)
    })
    request.end(body)
  })

describe("three hosts, host by host", () => {
  it("create on A, read and quote on B, list on C, accept on A: every host answers the same", async () => {
    const [a, b, c] = hosts as [World, World, World]
    const rfqId = await newRfq(a)
    const views = await Promise.all(
      [a, b, c].map((w) => w.api.get(`/v1/rfq/${rfqId}`, { token: w.token("taker") }))
    )
    for (const v of views) assert.deepStrictEqual(v.body, views[0]!.body)
    const quote = await b.api.post("/v1/rfq/quote", {
      token: b.token("maker1"),
      json: { rfqId, direction: "sell", amount: 100, settlementOption: "DBT", ...(await markQuote(b, rfqId)) }
    })
    assert.strictEqual(quote.status, 200, quote.text)
    const rfqQuoteId = (quote.body as { rfqQuoteId: number }).rfqQuoteId
    const listed = await c.api.get("/v1/rfq", { token: c.token("taker"), query: { limit: 100 } })
    assert.strictEqual(listed.status, 200)
    assert.isTrue(
      (listed.body as { results: Array<{ rfqId: number }> }).results.some((r) => r.rfqId === rfqId)
    )
    const book = await c.api.get(`/v1/rfq/${rfqId}/quote`, { token: c.token("taker") })
    assert.strictEqual(JSON.stringify(book.body).includes(`${rfqQuoteId}`), true)
    const traded = await trade(a, "taker", rfqQuoteId)
    assert.strictEqual(traded.rfqId, rfqId)
    const after = await Promise.all(
      [a, b, c].map((w) => w.api.get(`/v1/rfq/${rfqId}`, { token: w.token("taker") }))
    )
    for (const v of after) {
      assert.strictEqual((v.body as { status: string }).status, "filled")
      assert.deepStrictEqual(v.body, after[0]!.body)
    }
  })

  it("races through different hosts: exactly one winner, never a 5xx", async () => {
    const [a, b, c] = hosts as [World, World, World]
    const quoteOn = async (w: World, rfqId: number) => {
      const r = await w.api.post("/v1/rfq/quote", {
        token: w.token("maker1"),
        json: {
          rfqId,
          direction: "sell",
          amount: 100,
          settlementOption: "DBT",
          ...(await markQuote(w, rfqId))
        }
      })
      assert.strictEqual(r.status, 200, r.text)
      return (r.body as { rfqQuoteId: number }).rfqQuoteId
    }
    for (let round = 0; round < 6; round++) {
      const rfqId = await newRfq(c)
      const q = await quoteOn(c, rfqId)
      const accept = (w: World) =>
        w.api.post("/v1/rfq/trade", { token: w.token("taker"), json: { rfqQuoteId: q } })
      const rivals = [
        () => accept(b),
        () => a.api.post("/v1/rfq/cancel", { token: a.token("taker"), json: { rfqId } }),
        async () =>
          b.api.put("/v1/rfq/quote", {
            token: b.token("maker1"),
            json: { rfqQuoteId: q, amount: 100, settlementOption: "DBT", ...(await markQuote(b, rfqId)) }
          })
      ]
      const rival = rivals[round % rivals.length]!
      const [first, second] = await Promise.all([accept(a), rival()])
      assert.isFalse(isServerError(first.status), first.text)
      assert.isFalse(isServerError(second.status), second.text)
      const view = await c.api.get(`/v1/rfq/${rfqId}`, { token: c.token("taker") })
      const status = (view.body as { status: string }).status
      const accepts = [first, ...(round % 3 === 0 ? [second] : [])].filter((r) => r.status === 200)
      if (round % 3 === 0) assert.strictEqual(accepts.length, 1, "two accepts of one quote: one wins")
      if (status === "traded") {
        const trades = (view.body as { trades?: Array<unknown> }).trades ?? []
        assert.isAtMost(trades.length, 1)
      }
      if (round % 3 === 1) assert.isTrue((first.status === 200) !== (status === "cancelled"))
    }
  })

  // Each host's client keeps 16 requests in flight (a connection pool), 48 at once in all: on this
  // two-core machine, three hosts, PostgreSQL, NATS and the client share two cores, and unbounded
  // thousands at once would outlast the requests' time budget on one host too (503 by design).
  it("3 × 1,000 concurrent creates and quotes spread over the hosts: unique ids, no 5xx", async () => {
    const seed = await newRfq(hosts[0]!)
    const legs = await markQuote(hosts[0]!, seed)
    const perHost = 1000
    const results = (
      await Promise.all(
        hosts.map((w) =>
          pooled(perHost, 16, async () => {
            const created = await w.api.post("/v1/rfq/0", {
              token: w.token("taker"),
              json: rfqBody(w, "taker")
            })
            if (created.status !== 200) return { created, quoted: undefined }
            const rfqId = (created.body as { rfqId: number }).rfqId
            const other = hosts[(hosts.indexOf(w) + 1) % hosts.length]!
            const quoted = await other.api.post("/v1/rfq/quote", {
              token: other.token("maker2"),
              json: { rfqId, direction: "buy", amount: 100, settlementOption: "DBT", ...legs }
            })
            return { created, quoted }
          })
        )
      )
    ).flat()
    const statuses = results.flatMap((r) => [r.created.status, r.quoted?.status ?? 0])
    assert.deepStrictEqual(statuses.filter(isServerError), [])
    const rfqIds = results.map((r) => (r.created.body as { rfqId: number }).rfqId)
    const quoteIds = results.map((r) => (r.quoted?.body as { rfqQuoteId: number } | undefined)?.rfqQuoteId)
    assert.strictEqual(new Set(rfqIds).size, rfqIds.length)
    assert.strictEqual(new Set(quoteIds).size, quoteIds.length)
    assert.deepStrictEqual([...new Set(statuses)], [200])
  }, 300_000)
})

/** Lets the portable scenarios' timers settle between suites. */
afterAll(() => sleep(10))

import { afterAll, assert, beforeAll, it } from "vitest"
import { createRequire } from "node:module"
import { type ClusterProcesses, startCluster } from "../../src/cluster/ClusterProcesses.js"
import { markQuote, openWorlds } from "../../src/cluster/ClusterWorlds.js"
import { rfqBody, sleep } from "../../src/Fixtures.js"
import { openDatabase, pgUrl } from "../../src/reliability/DatabaseReader.js"
import type { World } from "../../src/World.js"

/**
 * The cluster's shard locks stall under traffic. Each host refreshes its shard locks every 2 s and
 * gives a refresh 2 s; one that takes longer (the database, or the host itself, too busy) makes
 * the host drop every shard at once and stop their entities mid-command, then take them back once a
 * refresh answers. Here the cluster's two tables are locked for 6 s, twice, while twelve clients run
 * create, quote, read and cancel through three hosts, most calls forwarded to another host.
 *
 * No command may be cut short: a forwarded one once answered 503 "the server is shutting down"
 * whatever it had committed (and no reply at all over JSON-RPC), and an owner that still answers
 * with an interruption is heard as "the RFQ's owner stopped before answering". The one failure
 * allowed is the documented bounded wait: a request that waited 15 s for a shard's owner (the
 * cluster slow to take its shards back on a starved machine, as in a full test run on two cores)
 * answers a bare 503 `service unavailable`. Idle, every request is answered 200. Storage holds
 * exactly what was acknowledged: each RFQ cancelled, its one quote stored once.
 */

const pg = createRequire(import.meta.url)("pg") as {
  Client: new (config: {
    connectionString: string
  }) => {
    connect(): Promise<void>
    query(text: string): Promise<unknown>
    end(): Promise<void>
  }
}

let cluster: ClusterProcesses
let hosts: ReadonlyArray<World>

beforeAll(async () => {
  cluster = await startCluster({
    hosts: 3,
    env: { RATE_LIMIT_PER_MINUTE: "100000", RFQ_TTL_SECONDS: "3600" }
  })
  hosts = await openWorlds(cluster)
}, 240_000)

afterAll(async () => {
  await cluster?.stop()
}, 240_000)

/** Locks the cluster's runner and shard lock tables for `ms`, in a transaction of its own. */
const stallLocks = async (namespace: string, ms: number) => {
  const client = new pg.Client({ connectionString: pgUrl() })
  await client.connect()
  try {
    await client.query("BEGIN")
    await client.query(
      `LOCK TABLE "${namespace}".cluster_runners, "${namespace}".cluster_locks IN ACCESS EXCLUSIVE MODE`
    )
    await sleep(ms)
    await client.query("COMMIT")
  } finally {
    await client.end()
  }
}

/** The answer of a request that waited the whole bound for a shard's owner (`RoutedEngine.ts`). */
const BOUNDED_WAIT = JSON.stringify({ code: 503, message: "service unavailable" })

it("shard locks stalled twice for 6 s under traffic: no command cut short, storage holds exactly what was acknowledged", async () => {
  const [a, b, c] = hosts as [World, World, World]
  const failures: Array<string> = []
  const acknowledged = new Map<number, { quoteId?: number; cancelled?: boolean }>()
  let running = true
  let waitedOut = 0
  const ok = (what: string, answer: { status: number; text: string }) => {
    if (answer.status === 503 && answer.text === BOUNDED_WAIT) waitedOut++
    else if (answer.status !== 200) failures.push(`${what}: ${answer.status} ${answer.text}`)
    return answer.status === 200
  }
  /** Create through `x`, quote and read through `y`, cancel through `x`, until told to stop. */
  const client = async (x: World, y: World) => {
    while (running) {
      const created = await x.api.post("/v1/rfq/0", { token: x.token("taker"), json: rfqBody(x, "taker") })
      if (!ok("create", created)) continue
      const rfqId = (created.body as { rfqId: number }).rfqId
      const story: { quoteId?: number; cancelled?: boolean } = {}
      acknowledged.set(rfqId, story)
      // The legs at the mark, read through `y` (the fixture throws on any refusal).
      let mark: Awaited<ReturnType<typeof markQuote>>
      try {
        mark = await markQuote(y, rfqId)
      } catch (error) {
        if (String(error).endsWith("503 service unavailable []")) waitedOut++
        else failures.push(`read for the mark: ${error}`)
        continue
      }
      const quoted = await y.api.post("/v1/rfq/quote", {
        token: y.token("maker1"),
        json: {
          rfqId,
          direction: "sell",
          amount: 100,
          settlementOption: "DBT",
          ...mark
        }
      })
      if (!ok("quote", quoted)) continue
      story.quoteId = (quoted.body as { rfqQuoteId: number }).rfqQuoteId
      ok("read", await y.api.get(`/v1/rfq/${rfqId}`, { token: y.token("taker") }))
      story.cancelled = ok(
        "cancel",
        await x.api.post("/v1/rfq/cancel", { token: x.token("taker"), json: { rfqId } })
      )
    }
  }
  // Every pair of distinct hosts, twice: most commands are forwarded, many in flight at any instant.
  const pairs: Array<[World, World]> = [
    [a, b],
    [b, c],
    [c, a],
    [a, c],
    [b, a],
    [c, b]
  ]
  const clients = [...pairs, ...pairs].map(([x, y]) => client(x, y))
  try {
    await sleep(2_000)
    for (let round = 0; round < 2; round++) {
      await stallLocks(cluster.namespace, 6_000)
      await sleep(3_000)
    }
  } finally {
    running = false
    await Promise.all(clients)
  }
  // On failure, what the hosts logged as warnings and errors says where each one came from.
  const logged = Array.from({ length: cluster.size }, (_, i) =>
    (cluster.process(i)?.stdout() ?? "")
      .split("\n")
      .filter((line) => /"logLevel":"(WARN|ERROR)"/.test(line) && !line.includes("Shard lock storage"))
      .map((line) => `host ${i}: ${line.slice(0, 600)}`)
  ).flat()
  assert.deepStrictEqual(failures, [], logged.join("\n"))
  // Most of the traffic went through: the stalls are 12 s of the run's 20.
  assert.isAbove(acknowledged.size, 20)
  assert.isBelow(waitedOut, acknowledged.size / 4)

  const db = await openDatabase("postgres", { dataDir: "", schema: cluster.namespace })
  try {
    const ids = [...acknowledged.keys()]
    const rfqs = await db.query<{ id: string; status: string }>(
      `SELECT id::text, status FROM rfqs WHERE id = ANY($1)`,
      [ids]
    )
    const quotes = await db.query<{ rfqId: string; id: string }>(
      `SELECT rfq_id::text AS "rfqId", id::text FROM quotes WHERE rfq_id = ANY($1)`,
      [ids]
    )
    const status = new Map(rfqs.map((r) => [Number(r.id), r.status]))
    const quotesOf = new Map<number, Array<number>>()
    for (const q of quotes)
      quotesOf.set(Number(q.rfqId), [...(quotesOf.get(Number(q.rfqId)) ?? []), Number(q.id)])
    const wrong: Array<string> = []
    for (const [rfqId, story] of acknowledged) {
      if (story.cancelled === true && status.get(rfqId) !== "cancelled")
        wrong.push(`RFQ ${rfqId}: ${status.get(rfqId)}`)
      if (!status.has(rfqId)) wrong.push(`RFQ ${rfqId} missing`)
      const stored = quotesOf.get(rfqId) ?? []
      if (story.quoteId !== undefined && (stored.length !== 1 || stored[0] !== story.quoteId))
        wrong.push(`RFQ ${rfqId}: quotes ${stored.join(",")} for acknowledged ${story.quoteId}`)
    }
    assert.deepStrictEqual(wrong, [])
  } finally {
    await db.close()
  }
}, 240_000)

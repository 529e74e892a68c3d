import { rfqBody } from "../Fixtures.js"
import { openDatabase } from "../reliability/DatabaseReader.js"
import type { World } from "../World.js"
import type { ClusterProcesses } from "./ClusterProcesses.js"
import { markQuote } from "./ClusterWorlds.js"

/**
 * Steady traffic through chosen pairs of hosts while a test disturbs the cluster (a stall of its
 * shard locks, a host leaving and coming back), and the checks that follow it: what was answered,
 * and whether storage holds exactly what was acknowledged.
 */

/** The answer of a request that waited the whole bound for a shard's owner (`RoutedEngine.ts`). */
export const BOUNDED_WAIT = JSON.stringify({ code: 503, message: "service unavailable" })

/** What one RFQ's client was told: created (always), its quote's id, whether the cancel was taken. */
export interface Story {
  quoteId?: number
  cancelled?: boolean
}

export interface TrafficOutcome {
  /** Acknowledged RFQs by id. */
  readonly acknowledged: ReadonlyMap<number, Story>
  /** Answers other than 200 and the bounded wait's 503, as `what: status body`. */
  readonly failures: ReadonlyArray<string>
  /** Requests answered with the bounded wait's 503. */
  readonly waitedOut: number
}

/**
 * Runs one client per pair until `during` settles: create through the pair's first host, quote
 * (maker 1, at the mark) and read through the second, cancel through the first, again and again.
 */
export const runTraffic = async (
  pairs: ReadonlyArray<readonly [World, World]>,
  during: () => Promise<void>
): Promise<TrafficOutcome> => {
  const acknowledged = new Map<number, Story>()
  const failures: Array<string> = []
  let waitedOut = 0
  let running = true
  const ok = (what: string, answer: { status: number; text: string }) => {
    if (answer.status === 503 && answer.text === BOUNDED_WAIT) waitedOut++
    else if (answer.status !== 200) failures.push(`${what}: ${answer.status} ${answer.text}`)
    return answer.status === 200
  }
  const client = async (x: World, y: World) => {
    while (running) {
      const created = await x.api.post("/v1/rfq/0", { token: x.token("taker"), json: rfqBody(x, "taker") })
      if (!ok("create", created)) continue
      const rfqId = (created.body as { rfqId: number }).rfqId
      const story: Story = {}
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
        json: { rfqId, direction: "sell", amount: 100, settlementOption: "DBT", ...mark }
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
  const clients = pairs.map(([x, y]) => client(x, y))
  try {
    await during()
  } finally {
    running = false
    await Promise.all(clients)
  }
  return { acknowledged, failures, waitedOut }
}

/** What the hosts still running logged as warnings and errors (for a failing test's message). */
export const hostWarnings = (cluster: ClusterProcesses, ignore: RegExp): string =>
  Array.from({ length: cluster.size }, (_, i) =>
    (cluster.process(i)?.stdout() ?? "")
      .split("\n")
      .filter((line) => /"logLevel":"(WARN|ERROR)"/.test(line) && !ignore.test(line))
      .map((line) => `host ${i}: ${line.slice(0, 600)}`)
  )
    .flat()
    .join("\n")

/**
 * What storage holds that disagrees with what was acknowledged: an acknowledged RFQ missing, a
 * cancel acknowledged but the RFQ not cancelled, an acknowledged quote not stored exactly once.
 */
export const storageDisagreements = async (
  namespace: string,
  acknowledged: ReadonlyMap<number, Story>
): Promise<Array<string>> => {
  const db = await openDatabase("postgres", { dataDir: "", schema: namespace })
  try {
    const ids = [...acknowledged.keys()]
    const rfqs = await db.query<{ id: string; status: string }>(
      "SELECT id::text, status FROM rfqs WHERE id = ANY($1)",
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
      if (!status.has(rfqId)) wrong.push(`RFQ ${rfqId} missing`)
      else if (story.cancelled === true && status.get(rfqId) !== "cancelled")
        wrong.push(`RFQ ${rfqId}: ${status.get(rfqId)} after an acknowledged cancel`)
      const stored = quotesOf.get(rfqId) ?? []
      if (story.quoteId !== undefined && (stored.length !== 1 || stored[0] !== story.quoteId))
        wrong.push(`RFQ ${rfqId}: quotes ${stored.join(",")} for acknowledged ${story.quoteId}`)
    }
    return wrong
  } finally {
    await db.close()
  }
}

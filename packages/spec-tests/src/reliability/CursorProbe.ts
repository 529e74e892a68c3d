import { type Figure, info, type Item, type RunContext, type Scale, zero } from "./Figures.js"
import { type Backend, hostEnv, startHost } from "./HostProcess.js"
import { withHost } from "./WithHost.js"
import { createQuote, createRfq, credentialsOf, Desk, rfqBody } from "./Lifecycle.js"
import { connectWs, type WsConnection } from "./WsClient.js"

/**
 * Item 14 (issue 12, classes 6 and 10): list cursors. A maker probes `GET /v1/rfq` and
 * `GET /v1/rfq/quotes` (REST and JSON-RPC) with cursors naming RFQs and quotes it could not have
 * received (not invited, another desk's, deleted) and ids that name nothing: the answers must not
 * differ (the number itself aside), nor those of the quote list's `rfqId` filter, before and after
 * a restart. Then every list is paged through with every page size: each item exactly once, and
 * the last page says cursor 0 (no empty page after a non-zero cursor).
 */

const counts = { full: { rfqs: 12, missing: 40 }, short: { rfqs: 4, missing: 6 } } as const

interface Tally {
  requests: number
  differing: number
  lastPagesNonZero: number
  missedOrRepeated: number
  readonly problems: Array<string>
}

const note = (t: Tally, problem: string) => {
  if (t.problems.length < 20) t.problems.push(problem)
}

/** One list request over REST or JSON-RPC, as `status body` with `hide` replaced by N. */
type Lister = (path: "/v1/rfq" | "/v1/rfq/quotes", query: Record<string, number>) => Promise<string>

const restLister =
  (desk: Desk, t: Tally): Lister =>
  async (path, query) => {
    t.requests++
    const qs = Object.entries(query)
      .map(([k, v]) => `${k}=${v}`)
      .join("&")
    const a = await desk.request("GET", `${path}?${qs}`)
    return `${a.status} ${a.text}`
  }

const rpcLister =
  (ws: WsConnection, t: Tally): Lister =>
  async (path, query) => {
    t.requests++
    const reply = await ws.rpc(path === "/v1/rfq" ? "v1/rfq/list" : "v1/quote/list", query)
    return reply.error === undefined
      ? `200 ${JSON.stringify(reply.result)}`
      : `error ${JSON.stringify(reply.error)}`
  }

/** The answer with the probed number taken out (only where it stands alone: 400 stays 400 for 4). */
const hiding = (text: string, n: number) => text.replace(new RegExp(`\\b${n}\\b`, "g"), "N")

/** Probes with ids that exist and ids that do not; every answer must equal the first missing one's. */
const probe = async (
  list: Lister,
  who: string,
  existing: { rfqs: ReadonlyArray<number>; quotes: ReadonlyArray<number> },
  missing: ReadonlyArray<number>,
  t: Tally
) => {
  const shapes: ReadonlyArray<
    readonly [string, "/v1/rfq" | "/v1/rfq/quotes", string, ReadonlyArray<number>]
  > = [
    ["RFQ cursor", "/v1/rfq", "cursor", existing.rfqs],
    ["quote cursor", "/v1/rfq/quotes", "cursor", existing.quotes],
    ["quote list rfqId", "/v1/rfq/quotes", "rfqId", existing.rfqs]
  ]
  for (const [what, path, key, ids] of shapes) {
    const reference = hiding(await list(path, { [key]: missing[0]!, limit: 5 }), missing[0]!)
    for (const id of [...missing.slice(1), ...ids]) {
      const answer = hiding(await list(path, { [key]: id, limit: 5 }), id)
      if (answer === reference) continue
      t.differing++
      note(t, `${who} ${what} ${id}: ${answer.slice(0, 150)} vs missing: ${reference.slice(0, 150)}`)
    }
  }
}

interface Page {
  readonly cursor: number
  readonly totalResults: number
  readonly results: ReadonlyArray<{ readonly rfqId: number; readonly rfqQuoteId?: number }>
}

/** Pages through one list with `limit`; checks exactly-once and the last page's cursor. */
const pageThrough = async (
  list: Lister,
  path: "/v1/rfq" | "/v1/rfq/quotes",
  query: Record<string, number>,
  limit: number,
  expected: ReadonlyArray<number>,
  who: string,
  t: Tally
) => {
  const seen: Array<number> = []
  let cursor = 0
  for (let pages = 0; pages <= expected.length + 1; pages++) {
    const text = await list(path, { ...query, limit, ...(cursor === 0 ? {} : { cursor }) })
    if (!text.startsWith("200 ")) {
      t.missedOrRepeated++
      return note(t, `${who} ${path} limit ${limit} cursor ${cursor}: ${text.slice(0, 150)}`)
    }
    const page = JSON.parse(text.slice(4)) as Page
    if (cursor !== 0 && page.results.length === 0) {
      t.lastPagesNonZero++
      note(t, `${who} ${path} limit ${limit}: empty page after cursor ${cursor}`)
    }
    seen.push(...page.results.map((r) => r.rfqQuoteId ?? r.rfqId))
    if (page.cursor === 0) break
    cursor = page.cursor
  }
  if (JSON.stringify(seen) !== JSON.stringify(expected)) {
    t.missedOrRepeated++
    note(
      t,
      `${who} ${path} limit ${limit}: paged ${JSON.stringify(seen)} expected ${JSON.stringify(expected)}`
    )
  }
}

const runOn = async (
  backend: Backend,
  scale: Scale,
  log: (line: string) => void
): Promise<ReadonlyArray<Figure>> =>
  withHost(backend, {}, async (first, place) => {
    const t: Tally = { requests: 0, differing: 0, lastPagesNonZero: 0, missedOrRepeated: 0, problems: [] }
    const n = counts[scale]
    const taker = await Desk.login(first.url, "demo-taker")
    const maker1 = await Desk.login(first.url, "demo-maker-1")
    const maker2 = await Desk.login(first.url, "demo-maker-2")
    const maker3 = await Desk.login(first.url, "demo-maker-3")
    const credentials = await credentialsOf(taker)
    // Demo data may hold RFQs of its own: the lists are read from here on.
    const since = Date.now() - 1
    const forMaker1: Array<number> = []
    const forMaker2: Array<number> = []
    const deleted: Array<number> = []
    const quotes: Array<number> = []
    for (let i = 0; i < n.rfqs; i++) {
      const rfqId = await createRfq(taker, rfqBody("single", credentials, ["maker-1"]))
      forMaker1.push(rfqId)
      quotes.push(await createQuote(maker1, rfqId, 50, `probe-${i}`))
      forMaker2.push(await createRfq(taker, rfqBody("single", credentials, ["maker-2"])))
      const gone = await createRfq(taker, rfqBody("single", credentials, ["maker-2"]))
      await taker.request("POST", "/v1/rfq/cancel", { rfqId: gone })
      await taker.request("DELETE", `/v1/rfq/${gone}`)
      deleted.push(gone)
    }
    const top = Math.max(...forMaker1, ...forMaker2, ...deleted, ...quotes)
    const missing = Array.from({ length: n.missing }, (_, i) =>
      i % 2 === 0 ? top + 1 + i : 1_000_000 + i * 7919
    )
    const takerRfqs = [...forMaker1, ...forMaker2].sort((a, b) => b - a)

    let host = first
    try {
      for (const round of ["before restart", "after restart"]) {
        if (round === "after restart") {
          await host.stop("SIGTERM")
          host = await startHost(hostEnv(backend, place))
        }
        const at = (desk: Desk) => desk.at(host.url)
        const sessions: Array<WsConnection> = []
        const session = async (desk: Desk) => {
          const ws = await connectWs(host.url)
          sessions.push(ws)
          await ws.rpc("auth", { token: desk.token })
          return ws
        }
        try {
          // Not invited to anything; invited to other RFQs than the probed ones; the quotes' own taker.
          const m3 = { rfqs: [...forMaker1, ...forMaker2, ...deleted], quotes }
          const m2 = { rfqs: [...forMaker1, ...deleted], quotes }
          for (const [who, desk, ids] of [
            ["maker-3", maker3, m3],
            ["maker-2", maker2, m2]
          ] as const) {
            await probe(restLister(at(desk), t), `${round} REST ${who}`, ids, missing, t)
            await probe(rpcLister(await session(desk), t), `${round} JSON-RPC ${who}`, ids, missing, t)
          }
          const listers: ReadonlyArray<readonly [string, Lister, Lister, Lister]> = [
            ["REST", restLister(at(taker), t), restLister(at(maker1), t), restLister(at(maker2), t)],
            [
              "JSON-RPC",
              rpcLister(await session(taker), t),
              rpcLister(await session(maker1), t),
              rpcLister(await session(maker2), t)
            ]
          ]
          const limits = round === "before restart" ? takerRfqs.length + 1 : 3
          for (const [how, asTaker, asMaker1, asMaker2] of listers) {
            for (let limit = 1; limit <= limits; limit++) {
              const who = `${round} ${how}`
              await pageThrough(asTaker, "/v1/rfq", { startTime: since }, limit, takerRfqs, `${who} taker`, t)
              await pageThrough(
                asMaker1,
                "/v1/rfq",
                { startTime: since },
                limit,
                [...forMaker1].reverse(),
                `${who} maker-1`,
                t
              )
              await pageThrough(
                asMaker2,
                "/v1/rfq",
                { startTime: since },
                limit,
                [...forMaker2].reverse(),
                `${who} maker-2`,
                t
              )
              await pageThrough(
                asMaker1,
                "/v1/rfq/quotes",
                { startTime: since },
                limit,
                [...quotes].reverse(),
                `${who} maker-1`,
                t
              )
            }
          }
        } finally {
          for (const ws of sessions) ws.close()
        }
      }
    } finally {
      // withHost stops the first process; the restarted one is stopped here.
      if (host !== first) await host.stop("SIGTERM")
    }
    for (const p of t.problems) log(`${backend}: ${p}`)
    const item = `14 cursor (${backend})`
    return [
      info(item, "requests / probed ids (existing, missing)", `${t.requests} / ${n.rfqs * 4}, ${n.missing}`),
      zero(
        item,
        "answers that differ between existing and missing ids",
        t.differing,
        t.problems.find((p) => p.includes(" vs "))
      ),
      zero(
        item,
        "last pages with a non-zero cursor",
        t.lastPagesNonZero,
        t.problems.find((p) => p.includes("empty page"))
      ),
      zero(
        item,
        "items missed or repeated while paging",
        t.missedOrRepeated,
        t.problems.find((p) => p.includes("paged"))
      )
    ]
  })

export const cursorProbeItem: Item = {
  id: "cursor",
  title: "14. Cursor probing",
  run: async ({ scale, log }: RunContext) => [
    ...(await runOn("pglite", scale, log)),
    ...(await runOn("postgres", scale, log))
  ]
}

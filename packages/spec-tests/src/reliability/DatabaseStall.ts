import * as fs from "node:fs"
import { dropSchema, openDatabase, pgUrl, type Place } from "./DatabaseReader.js"
import { atMost, type Figure, info, type Item, type Scale, zero } from "./Figures.js"
import { hostEnv, makeTempDir, randomSchema, startHost } from "./HostProcess.js"
import { call, oauthToken } from "./Http.js"
import { credentialsOf, Desk, legPricesFor, quoteBody, rfqBody } from "./Lifecycle.js"
import { checkAfterStall, type StallConsistency } from "./StallCheck.js"
import { type StallStats, StallLoad, sleep } from "./StallLoad.js"
import { closePathSessions, preparePaths, probePaths } from "./StallPaths.js"
import { StallProxy } from "./StallProxy.js"
import { connectWs } from "./WsClient.js"

/**
 * Database stall: the host runs on PostgreSQL through a `StallProxy`, under a load of REST and
 * JSON-RPC writes and reads that need the database (RFQ creates with request ids, quotes, trades,
 * lists, the account and token endpoints). Then the proxy stops forwarding, without closing
 * anything, for `stallMs`: the database is there but does not answer. Every request sent meanwhile
 * must get the 503 of an unreachable database (the JSON-RPC error of a 503 over WebSocket) within
 * 5 s, `/readyz` its 503 within 2 s. After the proxy resumes, the first write must succeed within
 * 5 s, nothing acknowledged may be missing, every write answered 503 must exist whole or not at
 * all (a retry under its request id finds the one RFQ), the API must show what is stored, and the
 * RFQs the stall touched must go on working. The machine's PostgreSQL is never touched.
 */
export interface StallFigures extends StallStats, Omit<StallConsistency, "problems"> {
  recoveryMs: number
  acknowledged: number
  doubtfulWrites: number
  problems: Array<string>
}

const STALL_MS: Record<Scale, number> = { full: 10_000, short: 6_000 }
const TARGETS: Record<Scale, number> = { full: 30, short: 10 }
const TRADES: Record<Scale, number> = { full: 4, short: 2 }
/** REST clients creating RFQs, each in its own loop. */
const WRITERS: Record<Scale, number> = { full: 6, short: 2 }

const upstreamOf = (url: string) => {
  const parsed = new URL(url)
  return { host: parsed.hostname, port: Number(parsed.port || 5432) }
}

export const runDatabaseStall = async (options: {
  readonly scale: Scale
  readonly log: (line: string) => void
}): Promise<StallFigures> => {
  const place: Place = { dataDir: makeTempDir("rfq-stall-"), schema: randomSchema("stall") }
  const proxy = await StallProxy.start(upstreamOf(pgUrl()))
  const host = await startHost(hostEnv("postgres", place, { DATABASE_URL: proxy.urlFor(pgUrl()) }))
  const load = new StallLoad(host.url)
  let recoveryMs = Number.POSITIVE_INFINITY
  let consistency: StallConsistency | undefined
  try {
    const taker = await Desk.login(host.url, "demo-taker")
    const maker = await Desk.login(host.url, "demo-maker-1")
    const otherMaker = await Desk.login(host.url, "demo-maker-2")
    const body = rfqBody("single", await credentialsOf(taker), ["maker-1", "maker-2"])

    // Before the stall: RFQs to quote on, and quoted RFQs to accept, their bodies ready.
    const targets: Array<{ rfqId: number; quote: Record<string, unknown> }> = []
    for (let i = 0; i < TARGETS[options.scale]; i++) {
      const rfqId = (await load.createRfq(taker, body))!
      targets.push({ rfqId, quote: quoteBody(rfqId, 50, await legPricesFor(maker, rfqId)) })
    }
    const tradeable: Array<{ rfqId: number; quoteId: number }> = []
    for (let i = 0; i < TRADES[options.scale]; i++) {
      const rfqId = (await load.createRfq(taker, body))!
      const quoteId = (await load.createQuote(
        maker,
        rfqId,
        quoteBody(rfqId, 50, await legPricesFor(maker, rfqId))
      ))!
      tradeable.push({ rfqId, quoteId })
    }
    const paths = await preparePaths(host.url, load, { taker, maker }, body)
    const ws = await connectWs(host.url)
    const authed = await ws.rpc("auth", { token: taker.token })
    if ((authed.result as { success?: unknown } | undefined)?.success !== true)
      throw new Error(`WebSocket auth failed: ${JSON.stringify(authed).slice(0, 200)}`)

    let nextTarget = 0
    let tokenProbes = 0
    const loops = [
      ...Array.from({ length: WRITERS[options.scale] }, () =>
        load.loop(100, () => load.createRfq(taker, body))
      ),
      load.loop(150, async () => {
        const target = targets[nextTarget++]
        if (target !== undefined) await load.createQuote(maker, target.rfqId, target.quote)
        else await sleep(200)
      }),
      load.loop(100, () =>
        load.rest("GET /v1/rfq/quotes", () => maker.request("GET", "/v1/rfq/quotes?limit=5"))
      ),
      load.loop(100, () => load.rest("GET /v1/rfq", () => taker.request("GET", "/v1/rfq?limit=5"))),
      load.loop(200, () =>
        load.rest("GET /v1/account/exchange-credentials", () =>
          taker.request("GET", "/v1/account/exchange-credentials")
        )
      ),
      // Few token requests: every failed check counts against the client's login budget.
      load.loop(2500, async () => {
        if (load.phase !== "stall" || tokenProbes >= 2) return
        tokenProbes++
        await load.rest("POST /v1/auth", () =>
          call(host.url, "POST", "/v1/auth", {
            body: { clientId: "demo-viewer", clientSecret: "demo-viewer-secret" }
          })
        )
      }),
      load.loop(100, async () => {
        const created = await load.rpc(ws, "v1/rfq/create", body)
        const rfqId = (created.result as { rfqId?: unknown } | undefined)?.rfqId
        if (typeof rfqId === "number") {
          load.acknowledged.push({ t: "rfq", rfqId, split: "single" })
          load.rfqIds.add(rfqId)
        }
        await load.rpc(ws, "v1/quote/list", { limit: 5 })
        await ws.rpc("heartbeat")
      }),
      load.pollReadiness(300)
    ]

    await sleep(1500)
    proxy.pause()
    load.phase = "stall"
    options.log(`database stalled (proxy paused) for ${STALL_MS[options.scale]} ms`)
    // At once, while idle pooled connections are left: these statements go out and are held in
    // the stalled network, to reach the server when it answers again, after their 503 (the case
    // the engine reloads an RFQ for). The probe of every path follows once the pool is taken.
    const accepts: Array<Promise<unknown>> = [
      ...tradeable.map((t) => load.trade(taker, t.rfqId, t.quoteId)),
      load.createRfq(taker, body),
      load.createRfq(taker, body)
    ]
    await sleep(300)
    accepts.push(probePaths(host.url, load, { taker, maker }, paths))
    await sleep(STALL_MS[options.scale] - 300)
    load.phase = "after"
    proxy.resume()
    const back = Date.now()
    options.log("database answering again (proxy resumed)")
    while (Date.now() - back < 60_000) {
      const a = await taker.request("POST", "/v1/rfq/0", body).catch(() => undefined)
      if (a?.status === 200) {
        recoveryMs = Date.now() - back
        load.rfqIds.add((a.body as { rfqId: number }).rfqId)
        break
      }
      await sleep(100)
    }
    load.stopped = true
    await Promise.all([...loops, ...accepts])
    ws.close()
    closePathSessions(paths)
    // The token endpoints work again (the probes during the stall cost no lockout).
    await oauthToken(host.url, "demo-viewer").catch((error) =>
      load.stats.problems.push(`token after: ${error}`)
    )

    const db = await openDatabase("postgres", place)
    try {
      consistency = await checkAfterStall(db, load, { taker, maker: otherMaker })
    } finally {
      await db.close()
    }
  } finally {
    load.stopped = true
    proxy.resume()
    await host.stop("SIGTERM")
    await proxy.close()
    await dropSchema(place.schema)
    fs.rmSync(place.dataDir, { recursive: true, force: true })
  }
  const c = consistency!
  return {
    ...load.stats,
    lost: c.lost,
    doubled: c.doubled,
    invalid: c.invalid,
    partial: c.partial,
    divergences: c.divergences,
    afterRecoveryFailures: c.afterRecoveryFailures,
    committedAnyway: c.committedAnyway,
    recoveryMs,
    acknowledged: load.acknowledged.length,
    doubtfulWrites:
      load.doubtful.rfqCreates.length + load.doubtful.quotes.length + load.doubtful.trades.length,
    problems: [...load.stats.problems, ...c.problems]
  }
}

export const stallFigures = (f: StallFigures): Array<Figure> => {
  const item = "9 stall"
  const first = (prefix: string) => f.problems.find((p) => p.startsWith(prefix))
  return [
    info(
      item,
      "requests answered during the stall / of which JSON-RPC / sent during it, answered after",
      `${f.stallAnswers} / ${f.stallRpcAnswers} / ${f.stallLate}`
    ),
    {
      ...zero(item, "answers during the stall other than 503 (REST body, JSON-RPC error)", f.stallNot503),
      // None at all would be a pass that looked at nothing.
      ok: f.stallNot503 === 0 && f.stallAnswers > 0 && f.stallRpcAnswers > 0
    },
    atMost(item, "slowest answer during the stall", f.stallSlowestMs, 5000, " ms"),
    {
      ...zero(item, "/readyz not 503 during the stall", f.readyzNot503),
      ok: f.readyzNot503 === 0 && f.readyzAnswers > 0
    },
    atMost(item, "/readyz slowest during the stall", f.readyzSlowestMs, 2000, " ms"),
    atMost(item, "recovery after the stall ends", f.recoveryMs, 5000, " ms"),
    info(
      item,
      "writes acknowledged / answered 503 (doubtful) / of those, committed all the same",
      `${f.acknowledged} / ${f.doubtfulWrites} / ${f.committedAnyway}`
    ),
    zero(item, "acknowledged writes lost", f.lost, first("lost")),
    zero(
      item,
      "writes answered 503 stored in part, twice, or not found by their retry",
      f.partial,
      first("partial")
    ),
    zero(
      item,
      "state divergences after recovery (API against database)",
      f.divergences,
      first("divergences")
    ),
    zero(item, "invalid states after recovery (a settlement left pending)", f.invalid, first("invalid")),
    zero(item, "doubled or unknown block trades", f.doubled, first("doubled")),
    zero(
      item,
      "read back, quote, trade failures after recovery",
      f.afterRecoveryFailures,
      first("afterRecoveryFailures")
    )
  ]
}

export const databaseStallItem: Item = {
  id: "stall",
  title: "9. Database stall (backends stop answering under load)",
  run: async ({ scale, log }) => {
    const f = await runDatabaseStall({ scale, log })
    for (const p of f.problems.slice(0, 15)) log(p)
    return stallFigures(f)
  }
}

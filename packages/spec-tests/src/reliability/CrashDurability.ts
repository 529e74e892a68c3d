import * as fs from "node:fs"
import * as path from "node:path"
import { dropSchema, openDatabase, type Place } from "./DatabaseReader.js"
import { checkDurability, type DurabilityFigures } from "./DurabilityCheck.js"
import {
  type Backend,
  hostEnv,
  makeTempDir,
  randomSchema,
  type RunningHost,
  startHost
} from "./HostProcess.js"
import { UnexpectedAnswer } from "./Http.js"
import {
  amountOf,
  createQuote,
  createRfq,
  credentialsOf,
  Desk,
  getRfq,
  MAKER_IDS,
  MAKERS,
  rfqBody,
  type Split,
  TAKER,
  type TradeAnswer
} from "./Lifecycle.js"
import { prng, Witness } from "./Witness.js"

/**
 * Jepsen-style crash durability: concurrent clients run RFQ lifecycles against the real host and
 * record every acknowledged answer in an fsync'd witness file; the host is SIGKILLed at a random
 * moment (seeded), restarted on the same data, and so on `kills` times. After a last restart every
 * acknowledged RFQ must read back over the API, and the database (read directly once the host is
 * stopped) must hold every acknowledged write, no block trade twice, none unknown, no invalid state.
 */
export interface CrashOptions {
  readonly backend: Backend
  readonly kills: number
  readonly clients?: number
  readonly seed?: number
  /** The host runs this long (ms, uniformly drawn) between its start and its kill. */
  readonly uptimeMs?: readonly [number, number]
  readonly log?: (line: string) => void
}

export interface CrashFigures extends DurabilityFigures {
  readonly backend: Backend
  readonly seed: number
  readonly kills: number
  /** Kills that hit the host while it was starting (restoring, reconciling). */
  readonly startupKills: number
  readonly acknowledged: Record<"rfqs" | "quotes" | "trades" | "blockTrades" | "cancels", number>
  /** Non-200 answers while the host was up (a 5xx here is a bug even if nothing was lost). */
  readonly unexpectedAnswers: number
  readonly serverErrors: number
}

interface Run {
  stopped: boolean
  unexpected: number
  serverErrors: number
  problems: Array<string>
}

const isTransportFailure = (error: unknown) => !(error instanceof UnexpectedAnswer)

/** One client: lifecycles until the run is stopped or the host goes away. */
const clientLoop = async (
  run: Run,
  random: ReturnType<typeof prng>,
  taker: Desk,
  makers: ReadonlyArray<Desk>,
  takerCredentials: Parameters<typeof rfqBody>[1],
  witness: Witness
) => {
  while (!run.stopped) {
    try {
      const split = random.pick<Split>(["single", "single", "split", "flaky"])
      const maker = random.pick(makers)
      const rfqId = await createRfq(taker, rfqBody(split, takerCredentials, [MAKER_IDS[maker.clientId]!]))
      witness.record({ t: "rfq", rfqId, split })
      const roll = random.next()
      if (roll < 0.15) {
        await taker.request("POST", "/v1/rfq/cancel", { rfqId }).then((a) => {
          if (a.status !== 200) throw new UnexpectedAnswer("cancel", a)
        })
        witness.record({ t: "cancel", rfqId })
        continue
      }
      const quoteId = await createQuote(maker, rfqId, amountOf(split))
      witness.record({ t: "quote", rfqId, quoteId })
      if (roll < 0.3) continue
      const answer = await taker.request("POST", "/v1/rfq/trade", { rfqQuoteId: quoteId })
      if (answer.status !== 200) throw new UnexpectedAnswer("trade", answer)
      const trade = answer.body as TradeAnswer
      witness.record({
        t: "trade",
        rfqId,
        quoteId,
        tradeId: trade.rfqTradeId,
        blockTradeIds: trade.trades.map((t) => t.exchangeTradeId),
        allocations: (trade.allocations ?? []).map((a) => a.status)
      })
    } catch (error) {
      if (run.stopped || isTransportFailure(error)) return
      run.unexpected++
      if (error instanceof UnexpectedAnswer && error.answer.status >= 500) run.serverErrors++
      if (run.problems.length < 20) run.problems.push(String(error).slice(0, 300))
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export const runCrashDurability = async (options: CrashOptions): Promise<CrashFigures> => {
  const seed = options.seed ?? Date.now() % 2 ** 31
  const random = prng(seed)
  const log = options.log ?? (() => undefined)
  const clients = options.clients ?? 4
  const [minUp, maxUp] = options.uptimeMs ?? [1000, 5000]
  const dataDir = makeTempDir("rfq-crash-")
  const place: Place = { dataDir, schema: randomSchema("crash") }
  const env = hostEnv(options.backend, place)
  const witnessFile = path.join(dataDir, "witness.jsonl")
  const witness = new Witness(witnessFile)
  const run: Run = { stopped: false, unexpected: 0, serverErrors: 0, problems: [] }
  let host: RunningHost | undefined
  let startupKills = 0
  try {
    host = await startHost(env)
    const taker = await Desk.login(host.url, TAKER)
    const makers = await Promise.all(MAKERS.map((m) => Desk.login(host!.url, m)))
    const takerCredentials = await credentialsOf(taker)
    for (let kill = 1; kill <= options.kills; kill++) {
      // About one kill in five lands while the host starts: restoring live RFQs and reconciling
      // interrupted settlements must survive a crash too.
      if (kill > 1 && random.next() < 0.2) {
        const delay = random.int(200, 4000)
        const started = await startHost(env, 180_000, (child) => {
          setTimeout(() => child.kill("SIGKILL"), delay)
        }).catch(() => undefined)
        if (started !== undefined) await started.exited
        host = undefined
        startupKills++
        log(
          `${options.backend}: kill ${kill}/${options.kills} ${delay} ms after spawn (${started === undefined ? "while starting" : "just after listening"})`
        )
        continue
      }
      if (kill > 1) host = await startHost(env)
      if (host === undefined) throw new Error("no host to kill")
      const url = host.url
      run.stopped = false
      const loops = Array.from({ length: clients }, (_, i) =>
        clientLoop(
          run,
          prng(seed * 31 + kill * 997 + i),
          taker.at(url),
          makers.map((m) => m.at(url)),
          takerCredentials,
          witness
        )
      )
      const uptime = random.int(minUp, maxUp)
      await sleep(uptime)
      await host.stop("SIGKILL")
      run.stopped = true
      await Promise.all(loops)
      log(
        `${options.backend}: kill ${kill}/${options.kills} after ${uptime} ms, ${witness.count} acknowledged so far`
      )
    }
    host = await startHost(env)
    const acknowledged = Witness.read(witnessFile)
    // Every acknowledged RFQ reads back over the API, in one of the five public states.
    const reader = taker.at(host.url)
    let apiMisses = 0
    const apiProblems: Array<string> = []
    for (const ack of acknowledged) {
      if (ack.t !== "rfq") continue
      try {
        const rfq = await getRfq(reader, ack.rfqId)
        if (!["open", "filled", "filledPartial", "cancelled", "expired"].includes(rfq.status))
          throw new Error(rfq.status)
      } catch (error) {
        apiMisses++
        if (apiProblems.length < 10)
          apiProblems.push(`lost: rfq ${ack.rfqId} over the API: ${String(error).slice(0, 200)}`)
      }
    }
    await host.stop("SIGTERM")
    host = undefined
    const db = await openDatabase(options.backend, place)
    let figures: DurabilityFigures
    try {
      figures = await checkDurability(db, acknowledged)
    } finally {
      await db.close()
    }
    const count = (t: string) => acknowledged.filter((a) => a.t === t).length
    return {
      ...figures,
      lost: figures.lost + apiMisses,
      problems: [...apiProblems, ...figures.problems, ...run.problems],
      backend: options.backend,
      seed,
      kills: options.kills,
      startupKills,
      acknowledged: {
        rfqs: count("rfq"),
        quotes: count("quote"),
        trades: count("trade"),
        cancels: count("cancel"),
        blockTrades: acknowledged.reduce((n, a) => n + (a.t === "trade" ? a.blockTradeIds.length : 0), 0)
      },
      unexpectedAnswers: run.unexpected,
      serverErrors: run.serverErrors
    }
  } finally {
    run.stopped = true
    witness.close()
    if (host !== undefined) await host.stop("SIGKILL")
    if (options.backend === "postgres") await dropSchema(place.schema)
    if (process.env.RELIABILITY_KEEP_DATA !== "1") fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

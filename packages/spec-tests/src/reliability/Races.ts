import type { Answer } from "./Http.js"
import {
  createQuote,
  createRfq,
  type Credentials,
  Desk,
  getRfq,
  legPricesFor,
  quoteBody,
  rfqBody,
  type TradeAnswer
} from "./Lifecycle.js"
import type { Acknowledged } from "./Witness.js"
import { connectWs, type WsConnection } from "./WsClient.js"

/**
 * Races over HTTP (and WebSocket when it is served): in each round two commands hit one RFQ at
 * the same moment, and exactly one outcome must win:
 * - two accepts (quotes of two makers): one trade, the other refused;
 * - accept against cancel: either filled and the cancel refused, or cancelled and the accept refused;
 * - accept against quote update: the trade is at the amount the quote had when it was accepted,
 *   and an update after the fill is refused;
 * - accept against expiry (a host with a short TTL): filled, or expired and the accept refused.
 * Acknowledged trades are returned for the ledger check (no block trade twice).
 *
 * A void round (its setup failed, e.g. the short-TTL RFQ expired before its quote was placed) does
 * not count: rounds run until the requested number is decided, at most `MAX_ATTEMPTS_PER_ROUND`
 * times that number; what is still missing then is the `shortfall`, a failure of the figure.
 */
export type RaceKind =
  | "two accepts"
  | "accept vs cancel"
  | "accept vs quote update"
  | "accept vs expiry"
  | "two accepts (WS + REST)"

export interface RaceFigures {
  /** Decided rounds by kind. */
  rounds: Record<string, number>
  violations: number
  voidRounds: number
  /** Void rounds by kind. */
  voids: Record<string, number>
  /** Decided rounds missing from the requested counts once the attempts ran out. */
  shortfall: number
  acknowledged: Array<Acknowledged>
  problems: Array<string>
}

interface Actors {
  readonly taker: Desk
  readonly maker1: Desk
  readonly maker2: Desk
  readonly credentials: ReadonlyArray<Credentials>
  readonly ws?: WsConnection | undefined
}

const at = (a: Answer) => `${a.status} ${(a.body as { message?: string } | undefined)?.message ?? ""}`

const record = (figures: RaceFigures, rfqId: number, quoteId: number, a: Answer) => {
  if (a.status !== 200) return
  const t = a.body as TradeAnswer
  figures.acknowledged.push({
    t: "trade",
    rfqId,
    quoteId,
    tradeId: t.rfqTradeId,
    blockTradeIds: t.trades.map((x) => x.exchangeTradeId),
    allocations: (t.allocations ?? []).map((x) => x.status)
  })
}

/** Attempts allowed per requested round: void rounds are replaced, up to this many in all. */
export const MAX_ATTEMPTS_PER_ROUND = 3

/** One round: "decided" once the race ran and was judged, "void" when it could not be set up. */
const round = async (
  kind: RaceKind,
  x: Actors,
  figures: RaceFigures,
  n: number
): Promise<"decided" | "void"> => {
  const violation = (what: string) => {
    figures.violations++
    if (figures.problems.length < 30) figures.problems.push(`${kind} #${n}: ${what}`)
  }
  const makers = kind.startsWith("two accepts") ? ["maker-1", "maker-2"] : ["maker-1"]
  const rfqId = await createRfq(x.taker, rfqBody("single", x.credentials, makers))
  figures.acknowledged.push({ t: "rfq", rfqId, split: "single" })
  const q1 = await createQuote(x.maker1, rfqId, 50)
  const trade = () => x.taker.request("POST", "/v1/rfq/trade", { rfqQuoteId: q1 })
  switch (kind) {
    case "two accepts":
    case "two accepts (WS + REST)": {
      const q2 = await createQuote(x.maker2, rfqId, 50)
      const second =
        kind === "two accepts" || x.ws === undefined
          ? x.taker.request("POST", "/v1/rfq/trade", { rfqQuoteId: q2 })
          : x.ws.rpc("v1/rfq/trade", { rfqQuoteId: q2 }).then(
              (r): Answer => ({
                status:
                  r.error === undefined
                    ? 200
                    : ((r.error.data as { status?: number } | undefined)?.status ?? 400),
                body: r.result ?? r.error,
                text: JSON.stringify(r),
                headers: new Headers()
              })
            )
      const [a, b] = await Promise.all([trade(), second])
      record(figures, rfqId, q1, a)
      record(figures, rfqId, q2, b)
      const wins = [a, b].filter((r) => r.status === 200).length
      if (wins !== 1) violation(`${wins} winners (${at(a)} / ${at(b)})`)
      break
    }
    case "accept vs cancel": {
      const [a, c] = await Promise.all([trade(), x.taker.request("POST", "/v1/rfq/cancel", { rfqId })])
      record(figures, rfqId, q1, a)
      const status = (await getRfq(x.taker, rfqId)).status
      if ((a.status === 200) === (c.status === 200)) violation(`trade ${at(a)}, cancel ${at(c)}`)
      else if (a.status === 200 && status !== "filled") violation(`traded but ${status}`)
      else if (c.status === 200 && status !== "cancelled") violation(`cancelled but ${status}`)
      break
    }
    case "accept vs quote update": {
      const legs = await legPricesFor(x.maker1, rfqId)
      const update = { ...quoteBody(rfqId, 25, legs), rfqQuoteId: q1 }
      const [a, u] = await Promise.all([trade(), x.maker1.request("PUT", "/v1/rfq/quote", update)])
      record(figures, rfqId, q1, a)
      if (a.status !== 200) violation(`trade refused: ${at(a)} (update ${at(u)})`)
      else {
        const amount = (await getRfq(x.taker, rfqId)) as unknown as { tradeAmount?: number }
        if (u.status === 200 && amount.tradeAmount !== 25)
          violation(`update acknowledged but traded ${amount.tradeAmount}`)
        if (u.status !== 200 && amount.tradeAmount !== 50)
          violation(`update refused (${at(u)}) but traded ${amount.tradeAmount}`)
      }
      break
    }
    case "accept vs expiry": {
      const rfq = (await getRfq(x.taker, rfqId)) as unknown as { expiresAt: number }
      // Aim at the expiry instant, a few ms either side.
      const wait = rfq.expiresAt - Date.now() + ((n % 21) - 10)
      if (wait < 0) return "void"
      await new Promise((r) => setTimeout(r, wait))
      const a = await trade()
      record(figures, rfqId, q1, a)
      const status = (await getRfq(x.taker, rfqId)).status
      if (a.status === 200 && status !== "filled") violation(`traded but ${status}`)
      if (a.status !== 200 && status !== "expired") violation(`trade ${at(a)} but ${status}`)
      break
    }
  }
  figures.rounds[kind] = (figures.rounds[kind] ?? 0) + 1
  return "decided"
}

/**
 * Runs `attempt(n)` on `workers` concurrent workers until `rounds` attempts were decided, starting
 * no more than can still be needed (so exactly `rounds` are decided when enough succeed), and
 * replacing each void one, up to `rounds * MAX_ATTEMPTS_PER_ROUND` attempts in all.
 */
export const runUntilDecided = async (
  rounds: number,
  workers: number,
  attempt: (n: number) => Promise<"decided" | "void">
): Promise<{ decided: number; voids: number; attempts: number }> => {
  const maxAttempts = rounds * MAX_ATTEMPTS_PER_ROUND
  let started = 0
  let inFlight = 0
  let decided = 0
  let voids = 0
  // A worker with nothing to start (enough attempts in flight to reach the count) waits for the
  // next one to end: if it was void, another is needed.
  let wake = () => {}
  let attemptEnded = new Promise<void>((resolve) => (wake = resolve))
  const ended = () => {
    const resolve = wake
    attemptEnded = new Promise<void>((r) => (wake = r))
    resolve()
  }
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (decided < rounds && started < maxAttempts) {
        if (decided + inFlight >= rounds) {
          await attemptEnded
          continue
        }
        const n = started++
        inFlight++
        const outcome = await attempt(n).catch(() => "void" as const)
        inFlight--
        if (outcome === "decided") decided++
        else voids++
        ended()
      }
    })
  )
  return { decided, voids, attempts: started }
}

export const runRaces = async (
  base: string,
  kinds: ReadonlyArray<RaceKind>,
  rounds: number,
  figures: RaceFigures,
  concurrency = 4
) => {
  const taker = await Desk.login(base, "demo-taker")
  const actors: Actors = {
    taker,
    maker1: await Desk.login(base, "demo-maker-1"),
    maker2: await Desk.login(base, "demo-maker-2"),
    credentials: (await taker.request("GET", "/v1/account/exchange-credentials"))
      .body as ReadonlyArray<Credentials>,
    ws: kinds.includes("two accepts (WS + REST)")
      ? await connectWs(base)
          .then(async (ws) => {
            await ws.rpc("auth", { token: taker.token })
            return ws
          })
          .catch(() => undefined)
      : undefined
  }
  if (kinds.includes("two accepts (WS + REST)") && actors.ws === undefined) {
    figures.problems.push("note: WebSocket not served; the WS race ran as REST + REST")
  }
  for (const kind of kinds) {
    const r = await runUntilDecided(
      rounds,
      kind === "accept vs expiry" ? concurrency * 5 : concurrency,
      async (n) => {
        try {
          return await round(kind, actors, figures, n)
        } catch (error) {
          if (figures.problems.length < 30)
            figures.problems.push(`${kind} #${n} setup failed: ${String(error).slice(0, 200)}`)
          return "void"
        }
      }
    )
    figures.voidRounds += r.voids
    if (r.voids > 0) figures.voids[kind] = (figures.voids[kind] ?? 0) + r.voids
    if (r.decided < rounds) {
      figures.shortfall += rounds - r.decided
      figures.problems.push(
        `${kind}: ${r.decided} of ${rounds} rounds decided after ${r.attempts} attempts (${r.voids} void)`
      )
    }
  }
  actors.ws?.close()
  return figures
}

export const emptyRaceFigures = (): RaceFigures => ({
  rounds: {},
  violations: 0,
  voidRounds: 0,
  voids: {},
  shortfall: 0,
  acknowledged: [],
  problems: []
})

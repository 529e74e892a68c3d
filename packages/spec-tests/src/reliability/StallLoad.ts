import { type Answer, call, isStandardError } from "./Http.js"
import type { Desk } from "./Lifecycle.js"
import type { Acknowledged } from "./Witness.js"
import type { RpcReply, WsConnection } from "./WsClient.js"

/**
 * The load of the database-stall run: REST and JSON-RPC writes and reads that need the database.
 * A request sent during the stall counts for the slowest answer however late its answer comes; if
 * its answer comes while the stall lasts, it must be the standard 503 (`database is not
 * reachable`) or the JSON-RPC error of a 503. (One sent just before the stall ends may rightly
 * succeed once the database answers again.) A write answered otherwise than 200 is *doubtful* and
 * is checked afterwards: it exists whole or not at all, a retry under its request id finds it.
 */
export type Phase = "before" | "stall" | "after"

export interface StallStats {
  /** Requests sent and answered during the stall. */
  stallAnswers: number
  /** Requests sent during the stall and answered after it. */
  stallLate: number
  stallRpcAnswers: number
  stallNot503: number
  stallSlowestMs: number
  readyzAnswers: number
  readyzNot503: number
  readyzSlowestMs: number
  problems: Array<string>
}

export interface Doubtful {
  readonly rfqCreates: Array<{ readonly requestId: number; readonly body: Record<string, unknown> }>
  readonly quotes: Array<{ readonly rfqId: number }>
  readonly trades: Array<{ readonly rfqId: number; readonly quoteId: number }>
}

/** The JSON-RPC form of REST's 503: `-32603 service unavailable` with `data {status: 503, reason}`. */
export const isRpcServiceUnavailable = (reply: RpcReply): boolean => {
  const data = reply.error?.data as { status?: unknown; reason?: unknown } | undefined
  return (
    reply.error?.code === -32603 &&
    reply.error.message === "service unavailable" &&
    data?.status === 503 &&
    Array.isArray(data.reason) &&
    data.reason.includes("database is not reachable")
  )
}

const isRest503 = (a: Answer | undefined): boolean =>
  a !== undefined &&
  a.status === 503 &&
  isStandardError(a) &&
  ((a.body as { reason?: ReadonlyArray<string> }).reason ?? []).includes("database is not reachable")

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export class StallLoad {
  phase: Phase = "before"
  stopped = false
  readonly stats: StallStats = {
    stallAnswers: 0,
    stallLate: 0,
    stallRpcAnswers: 0,
    stallNot503: 0,
    stallSlowestMs: 0,
    readyzAnswers: 0,
    readyzNot503: 0,
    readyzSlowestMs: 0,
    problems: []
  }
  readonly acknowledged: Array<Acknowledged> = []
  readonly doubtful: Doubtful = { rfqCreates: [], quotes: [], trades: [] }
  /** Every RFQ the run created (acknowledged ones), for the consistency check. */
  readonly rfqIds = new Set<number>()
  private nextRequestId = 1

  constructor(readonly base: string) {}

  private problem(text: string): void {
    if (this.stats.problems.length < 20) this.stats.problems.push(text)
  }

  private slowest(what: string, ms: number): void {
    this.stats.stallSlowestMs = Math.max(this.stats.stallSlowestMs, ms)
    if (ms >= 4500) this.problem(`${what} sent during the stall took ${ms} ms`)
  }

  /** Sends `send` and scores its answer if it was sent during the stall. */
  async rest(what: string, send: () => Promise<Answer>): Promise<Answer | undefined> {
    const sentIn = this.phase
    const started = Date.now()
    const answer = await send().catch(() => undefined)
    const ms = Date.now() - started
    if (sentIn === "stall") this.slowest(what, ms)
    if (sentIn === "stall" && this.phase !== "stall") this.stats.stallLate++
    if (sentIn === "stall" && this.phase === "stall") {
      this.stats.stallAnswers++
      if (!isRest503(answer)) {
        this.stats.stallNot503++
        this.problem(
          `${what} during the stall: ${answer?.status ?? "no answer"} ${answer?.text.slice(0, 160) ?? ""}`
        )
      }
    }
    return answer
  }

  async rpc(session: WsConnection, method: string, params: unknown): Promise<RpcReply> {
    const sentIn = this.phase
    const started = Date.now()
    const reply = await session.rpc(method, params, 15_000)
    const ms = Date.now() - started
    if (sentIn === "stall") this.slowest(`JSON-RPC ${method}`, ms)
    if (sentIn === "stall" && this.phase !== "stall") this.stats.stallLate++
    if (sentIn === "stall" && this.phase === "stall") {
      this.stats.stallAnswers++
      this.stats.stallRpcAnswers++
      if (!isRpcServiceUnavailable(reply)) {
        this.stats.stallNot503++
        this.problem(`JSON-RPC ${method} during the stall: ${JSON.stringify(reply).slice(0, 200)}`)
      }
    }
    return reply
  }

  /** POST /v1/rfq/{requestId}: acknowledged, or doubtful and retried later under the same id. */
  async createRfq(taker: Desk, body: Record<string, unknown>): Promise<number | undefined> {
    const requestId = this.nextRequestId++
    const a = await this.rest("POST /v1/rfq/{id}", () => taker.request("POST", `/v1/rfq/${requestId}`, body))
    if (a?.status === 200) {
      const rfqId = (a.body as { rfqId: number }).rfqId
      this.acknowledged.push({ t: "rfq", rfqId, split: "single" })
      this.rfqIds.add(rfqId)
      return rfqId
    }
    this.doubtful.rfqCreates.push({ requestId, body })
    return undefined
  }

  async createQuote(maker: Desk, rfqId: number, body: Record<string, unknown>): Promise<number | undefined> {
    const a = await this.rest("POST /v1/rfq/quote", () => maker.request("POST", "/v1/rfq/quote", body))
    if (a?.status === 200) {
      const quoteId = (a.body as { rfqQuoteId: number }).rfqQuoteId
      this.acknowledged.push({ t: "quote", rfqId, quoteId })
      return quoteId
    }
    this.doubtful.quotes.push({ rfqId })
    return undefined
  }

  async trade(taker: Desk, rfqId: number, quoteId: number): Promise<void> {
    const a = await this.rest("POST /v1/rfq/trade", () =>
      taker.request("POST", "/v1/rfq/trade", { rfqQuoteId: quoteId })
    )
    if (a?.status === 200) {
      const t = a.body as { rfqTradeId: number; trades: ReadonlyArray<{ exchangeTradeId: string }> }
      this.acknowledged.push({
        t: "trade",
        rfqId,
        quoteId,
        tradeId: t.rfqTradeId,
        blockTradeIds: t.trades.map((x) => x.exchangeTradeId),
        allocations: []
      })
    } else this.doubtful.trades.push({ rfqId, quoteId })
  }

  /** `/readyz` every `everyMs` while the stall lasts: 503 within its 2 s. */
  async pollReadiness(everyMs: number): Promise<void> {
    while (!this.stopped) {
      if (this.phase === "stall") {
        const started = Date.now()
        const a = await call(this.base, "GET", "/readyz").catch(() => undefined)
        const ms = Date.now() - started
        this.stats.readyzSlowestMs = Math.max(this.stats.readyzSlowestMs, ms)
        if (this.phase === "stall") this.stats.readyzAnswers++
        if (this.phase === "stall" && a?.status !== 503) {
          this.stats.readyzNot503++
          this.problem(`/readyz during the stall: ${a?.status ?? "no answer"} after ${ms} ms`)
        }
      }
      await sleep(everyMs)
    }
  }

  /** Runs `step` again and again (with `pauseMs` between) until the load stops. */
  async loop(pauseMs: number, step: () => Promise<unknown>): Promise<void> {
    while (!this.stopped) {
      await step()
      await sleep(pauseMs)
    }
  }
}

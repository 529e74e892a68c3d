/**
 * Lifecycle load: `clients` concurrent loops, each running create RFQ (taker) → three quotes,
 * one per demo maker, sent together → accept the first (taker), against the host over REST, for
 * a fixed time. Leg prices come from the host's leg-price helper for a fresh RFQ's mark and are
 * reused by a loop for up to a second (marks move slowly), so pricing is not part of the measured
 * lifecycle; a quote refused for its price triggers a re-price and counts as an error.
 *
 * The timed steps go over raw keep-alive sockets (`RawHttp`): the baseline is raw SQL with no client
 * at all, and every µs of the client is taken from the cores the host shares. `node:http` (`Api`)
 * cost 0.87 ms of this process's CPU per lifecycle (2026-11-30, against 0.41 ms for the raw
 * transactions' clients), `@rfq/client` about 150 µs more per call (scenario 7). The pricing,
 * untimed and once a second per loop, goes through the typed client; the tokens through `Api`.
 */
import { performance } from "node:perf_hooks"
import { RfqError } from "@rfq/client"
import { Api, ApiFailure, DEMO_MAKERS, DEMO_TAKER, demoRfq, type PricedLeg, quoteBody } from "../Api.js"
import { demoClient, priceLegs } from "../BenchClient.js"
import { childConfig, measureWindow, runChild, tell } from "../ChildIo.js"
import { RawHttp } from "../RawHttp.js"
import { Samples, type LatencySummary } from "../Stats.js"

export interface LifecycleConfig {
  readonly url: string
  readonly clients: number
  readonly warmupMs: number
  readonly durationMs: number
}

export interface LifecycleResult {
  readonly type: "result"
  readonly lifecycles: number
  /** Lifecycles completed over the whole run, warm-up and the last ones after the window included. */
  readonly completed: number
  readonly errors: number
  readonly firstError?: string
  readonly elapsedMs: number
  readonly lifecyclesPerSecond: number
  /** This process's CPU (user + system) over the measured window ÷ lifecycles measured, ms. */
  readonly clientCpuMsPerLifecycle: number
  readonly steps: Record<"create" | "quote" | "accept" | "lifecycle", LatencySummary>
}

const REPRICE_AFTER_MS = 1_000
/** Unanswered requests in a row (all loops together) after which the host is taken for gone. */
const MAX_TRANSPORT_ERRORS = 100

runChild(async () => {
  const config = childConfig<LifecycleConfig>()
  const api = new Api(config.url, config.clients * 4 + 4)
  const taker = await api.token(DEMO_TAKER)
  const makers = await Promise.all(DEMO_MAKERS.map((m) => api.token(m)))
  const raw = new RawHttp(config.url)
  const createBody = Buffer.from(JSON.stringify(demoRfq))
  const pricer = demoClient(config.url, DEMO_MAKERS[0])
  const steps = {
    create: new Samples(),
    quote: new Samples(),
    accept: new Samples(),
    lifecycle: new Samples()
  }
  let measuring = false
  let stopping = false
  let lifecycles = 0
  let completed = 0
  let errors = 0
  let firstError: string | undefined

  const timed = async <A>(samples: Samples, body: () => Promise<A>): Promise<A> => {
    const started = performance.now()
    const result = await body()
    if (measuring) samples.add(performance.now() - started)
    return result
  }

  const loop = async () => {
    let legs: ReadonlyArray<PricedLeg> | undefined
    let pricedAt = 0
    while (!stopping) {
      try {
        const started = performance.now()
        const { rfqId } = await timed(steps.create, () =>
          raw.send<{ rfqId: number }>("POST", "/v1/rfq/0", createBody, taker)
        )
        if (legs === undefined || started - pricedAt > REPRICE_AFTER_MS) {
          legs = await priceLegs(pricer, rfqId)
          pricedAt = performance.now()
        }
        const priced = legs
        const quotes = await Promise.all(
          makers.map((maker) =>
            timed(steps.quote, () =>
              raw.request<{ rfqQuoteId: number }>("POST", "/v1/rfq/quote", quoteBody(rfqId, priced), maker)
            )
          )
        )
        await timed(steps.accept, () =>
          raw.request("POST", "/v1/rfq/trade", { rfqQuoteId: quotes[0]!.rfqQuoteId }, taker)
        )
        completed++
        if (measuring) {
          steps.lifecycle.add(performance.now() - started)
          lifecycles++
        }
      } catch (error) {
        if (measuring) errors++
        firstError ??= error instanceof Error ? error.message : String(error)
        const status =
          error instanceof ApiFailure ? error.status : error instanceof RfqError ? error.status : undefined
        if (status === 400) legs = undefined
        else if (status === undefined || status === 0) {
          // No answer (a connection reset or refused): counted like any failed lifecycle; a host
          // that is gone gives nothing else, and the loop gives up after a run of them.
          if (++transportErrors > MAX_TRANSPORT_ERRORS) throw error
          await new Promise((r) => setTimeout(r, 50))
          continue
        }
      }
      transportErrors = 0
    }
  }
  let transportErrors = 0
  let gaveUp: unknown

  // A loop that gave up ends the run at once (its rejection is handled here, never left unhandled).
  const loops = Array.from({ length: config.clients }, () =>
    loop().catch((error: unknown) => {
      gaveUp ??= error
      stopping = true
    })
  )
  await new Promise((r) => setTimeout(r, config.warmupMs))
  measuring = true
  const started = performance.now()
  const cpuAtStart = process.cpuUsage()
  // The window's bounds, for a parent that brackets it on the host (a wait profile's signals).
  await tell({ type: "measuring" })
  await measureWindow(config.durationMs, () => lifecycles > 0)
  measuring = false
  const elapsedMs = performance.now() - started
  const cpu = process.cpuUsage(cpuAtStart)
  await tell({ type: "measured" })
  stopping = true
  await Promise.all(loops)
  if (gaveUp !== undefined) throw gaveUp
  api.close()
  raw.close()
  pricer.logout()
  const result: LifecycleResult = {
    type: "result",
    lifecycles,
    completed,
    errors,
    ...(firstError === undefined ? {} : { firstError }),
    elapsedMs,
    lifecyclesPerSecond: (lifecycles / elapsedMs) * 1000,
    clientCpuMsPerLifecycle: (cpu.user + cpu.system) / 1000 / lifecycles,
    steps: {
      create: steps.create.summary(),
      quote: steps.quote.summary(),
      accept: steps.accept.summary(),
      lifecycle: steps.lifecycle.summary()
    }
  }
  await tell(result)
})

import type * as SqlClient from "@effect/sql/SqlClient"
import { BigDecimal, Context, Effect, type Either, Runtime } from "effect"
import { decodeRequest } from "../../src/api/Decode.js"
import { CreateQuoteRequest, UpdateQuoteRequest } from "../../src/api/QuoteRequests.js"
import { CreateRfqRequest } from "../../src/api/RfqRequests.js"
import type { EngineService } from "../../src/engine/Engine.js"
import type { Direction } from "../../src/domain/Primitives.js"
import { VenueLedger } from "../../src/venues/VenueLedger.js"
import type { AccountRegistration } from "../../src/venues/VenueAccounts.js"
import { type DemoCallers, type EngineContext, markPrices, startEngine } from "../support/engineHarness.js"

/**
 * The real system of the model-based test: an engine over one database, replaced on a restart,
 * and a way to run engine effects from fast-check's promises in the test's own runtime (so the
 * engine's clock is the test's TestClock).
 */

export const makerNames = ["maker1", "maker2", "maker3"] as const
export type MakerName = (typeof makerNames)[number]

/** The taker's settlement accounts of an RFQ and what a trade on it does (demo `dbt-flaky` always fails). */
export const accountPlans = ["single", "split", "partial", "refused"] as const
export type AccountPlan = (typeof accountPlans)[number]

/** Block trades one fill books per plan (one per account that settles). */
export const settledAccounts: Record<AccountPlan, number> = { single: 1, split: 2, partial: 1, refused: 0 }

/** Share of the traded amount that settles per plan, in percent. */
export const settledPercent: Record<AccountPlan, number> = {
  single: 100,
  split: 100,
  partial: 50,
  refused: 0
}

export const spreadLegs = ["BTC-27DEC30-90000-C", "BTC-27DEC30-110000-C"] as const
export const rfqAmount = 100

export interface RunningEngine {
  readonly engine: EngineService
  readonly context: EngineContext
  readonly stop: Effect.Effect<void>
}

const accountsOf = (callers: DemoCallers, plan: AccountPlan) => {
  const id = (alias: string) => callers.credentials[`taker:${alias}`]
  switch (plan) {
    case "single":
      return { settlementCredentials: { DBT: id("dbt-main") } }
    case "split":
      return {
        settlementAccounts: {
          DBT: [
            { credentialsId: id("dbt-main"), percentage: 60 },
            { credentialsId: id("dbt-alt"), percentage: 40 }
          ]
        }
      }
    case "partial":
      return {
        settlementAccounts: {
          DBT: [
            { credentialsId: id("dbt-main"), percentage: 50 },
            { credentialsId: id("dbt-flaky"), percentage: 50 }
          ]
        }
      }
    case "refused":
      return { settlementAccounts: { DBT: [{ credentialsId: id("dbt-flaky"), percentage: 100 }] } }
  }
}

/** A BTC call spread on DBT, every demo maker invited. */
export const createSpreadRfq = (engine: EngineService, callers: DemoCallers, plan: AccountPlan) =>
  Effect.gen(function* () {
    const req = yield* decodeRequest(CreateRfqRequest, {
      id: 0,
      baseCurrency: "BTC",
      amount: rfqAmount,
      anonymous: false,
      settlementOptions: ["DBT"],
      ...accountsOf(callers, plan),
      makers: { DBT: ["maker-1", "maker-2", "maker-3"] },
      legs: [
        { direction: "buy", instrumentName: spreadLegs[0], ratio: 1 },
        { direction: "sell", instrumentName: spreadLegs[1], ratio: 1 }
      ]
    })
    return (yield* engine.createRfq(callers.taker, req)).rfqId
  })

/** Leg prices at the current marks, as JSON numbers. */
const legPricesAtMark = (context: EngineContext) =>
  Effect.map(markPrices(context, "DBT", "BTC", spreadLegs), (prices) =>
    prices.map((p) => ({ instrumentName: p.instrumentName, price: Number(BigDecimal.format(p.price)) }))
  )

export interface QuoteTerms {
  readonly direction: Direction
  readonly amount: number
  readonly label?: string | undefined
}

export const createQuote = (
  running: RunningEngine,
  callers: DemoCallers,
  maker: MakerName,
  rfqId: number,
  terms: QuoteTerms
) =>
  Effect.gen(function* () {
    const req = yield* decodeRequest(CreateQuoteRequest, {
      rfqId,
      direction: terms.direction,
      amount: terms.amount,
      settlementOption: "DBT",
      legs: yield* legPricesAtMark(running.context),
      ...(terms.label === undefined ? {} : { label: terms.label })
    })
    return (yield* running.engine.createQuote(callers[maker], req)).rfqQuoteId
  })

export const updateQuote = (
  running: RunningEngine,
  callers: DemoCallers,
  maker: MakerName,
  rfqQuoteId: number,
  terms: { readonly amount: number; readonly label?: string | undefined }
) =>
  Effect.gen(function* () {
    const req = yield* decodeRequest(UpdateQuoteRequest, {
      rfqQuoteId,
      amount: terms.amount,
      settlementOption: "DBT",
      legs: yield* legPricesAtMark(running.context),
      ...(terms.label === undefined ? {} : { label: terms.label })
    })
    return yield* running.engine.updateQuote(callers[maker], req)
  })

/** Every block trade booked on DBT, by idempotency key. */
export const dbtLedger = (running: RunningEngine) => Context.get(running.context, VenueLedger).list("DBT")

export class RfqSystem {
  /** Counts property runs, so that each run's quote labels are its own. */
  runs = 0
  constructor(
    private readonly runtime: Runtime.Runtime<SqlClient.SqlClient>,
    readonly callers: DemoCallers,
    private readonly start: Effect.Effect<RunningEngine, unknown, SqlClient.SqlClient>,
    public running: RunningEngine
  ) {}

  /** An engine started by `start` (by default the harness's `startEngine`), in the current runtime. */
  static make = (
    callers: DemoCallers,
    venueAccounts: ReadonlyArray<AccountRegistration>,
    start: Effect.Effect<RunningEngine, unknown, SqlClient.SqlClient> = startEngine(venueAccounts)
  ) =>
    Effect.gen(function* () {
      const runtime = yield* Effect.runtime<SqlClient.SqlClient>()
      return new RfqSystem(runtime, callers, start, yield* start)
    })

  get engine(): EngineService {
    return this.running.engine
  }

  /** Runs an effect; its failure comes back as a Left, a defect rejects. */
  attempt<A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>): Promise<Either.Either<A, E>> {
    return Runtime.runPromise(this.runtime)(Effect.either(effect))
  }

  /** Runs an effect that must succeed. */
  run<A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>): Promise<A> {
    return Runtime.runPromise(this.runtime)(effect)
  }

  /** Stops the engine and starts a new one on the same database. */
  async restart(): Promise<void> {
    await this.run(this.running.stop)
    this.running = await this.run(this.start)
  }
}

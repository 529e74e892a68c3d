import * as SqlClient from "@effect/sql/SqlClient"
import { BigDecimal, Context, Effect, Option, Queue, TestServices } from "effect"
import { decodeRequest } from "../../src/api/Decode.js"
import { CreateQuoteRequest, UpdateQuoteRequest } from "../../src/api/QuoteRequests.js"
import { CreateRfqRequest } from "../../src/api/RfqRequests.js"
import type { Direction } from "../../src/domain/Primitives.js"
import { RfqStore } from "../../src/rfq/RfqStore.js"
import type { EngineEvent } from "../../src/services/Events.js"
import { type AccountPlan, type MakerName, type RunningEngine, spreadLegs } from "../model/RfqSystem.js"
import { type DemoCallers, markPrices } from "./engineHarness.js"

/** Helpers of the quote-expiry and tape tests (issue 16). */

const accountsOf = (callers: DemoCallers, plan: AccountPlan) => {
  const id = (alias: string) => callers.credentials[`taker:${alias}`]
  const one = (alias: string) => ({
    settlementAccounts: { DBT: [{ credentialsId: id(alias), percentage: 100 }] }
  })
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
      return one("dbt-flaky")
  }
}

/** A BTC call spread on DBT, every demo maker invited; anonymous and labelled on request. */
export const createRfq = (
  running: RunningEngine,
  callers: DemoCallers,
  options: { readonly plan?: AccountPlan; readonly anonymous?: boolean; readonly label?: string } = {}
) =>
  Effect.gen(function* () {
    const req = yield* decodeRequest(CreateRfqRequest, {
      id: 0,
      baseCurrency: "BTC",
      amount: 100,
      anonymous: options.anonymous ?? false,
      settlementOptions: ["DBT"],
      ...accountsOf(callers, options.plan ?? "single"),
      makers: { DBT: ["maker-1", "maker-2", "maker-3"] },
      legs: [
        { direction: "buy", instrumentName: spreadLegs[0], ratio: 1 },
        { direction: "sell", instrumentName: spreadLegs[1], ratio: 1 }
      ],
      ...(options.label === undefined ? {} : { label: options.label })
    })
    return (yield* running.engine.createRfq(callers.taker, req)).rfqId
  })

const legs = (running: RunningEngine) =>
  Effect.map(markPrices(running.context, "DBT", "BTC", spreadLegs), (prices) =>
    prices.map((p) => ({ instrumentName: p.instrumentName, price: Number(BigDecimal.format(p.price)) }))
  )

export interface Terms {
  readonly direction?: Direction
  readonly label?: string
  readonly validUntil?: unknown
}

/** The body of a quote create on the spread (at the marks), with `validUntil` as given. */
export const quoteBody = (running: RunningEngine, rfqId: number, terms: Terms) =>
  Effect.map(legs(running), (legPrices) => ({
    rfqId,
    direction: terms.direction ?? "sell",
    amount: 100,
    settlementOption: "DBT",
    legs: legPrices,
    ...(terms.label === undefined ? {} : { label: terms.label }),
    ...(terms.validUntil === undefined ? {} : { validUntil: terms.validUntil })
  }))

export const createQuote = (
  running: RunningEngine,
  callers: DemoCallers,
  maker: MakerName,
  rfqId: number,
  terms: Terms = {}
) =>
  Effect.gen(function* () {
    const req = yield* decodeRequest(CreateQuoteRequest, yield* quoteBody(running, rfqId, terms))
    return (yield* running.engine.createQuote(callers[maker], req)).rfqQuoteId
  })

export const updateQuote = (
  running: RunningEngine,
  callers: DemoCallers,
  maker: MakerName,
  rfqQuoteId: number,
  terms: { readonly validUntil?: number } = {}
) =>
  Effect.gen(function* () {
    const req = yield* decodeRequest(UpdateQuoteRequest, {
      rfqQuoteId,
      amount: 100,
      settlementOption: "DBT",
      legs: yield* legs(running),
      ...(terms.validUntil === undefined ? {} : { validUntil: terms.validUntil })
    })
    return yield* running.engine.updateQuote(callers[maker], req)
  })

/** A quote's status as stored, read past the engine (a read through it would expire what is due). */
export const storedStatus = (running: RunningEngine, quoteId: number) =>
  Effect.map(
    Context.get(running.context as unknown as Context.Context<RfqStore>, RfqStore).quote(quoteId),
    Option.map((q) => q.status)
  )

/** How many steps of the RFQ expired quotes at their `validUntil`. */
export const quoteExpirySteps = (rfqId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{
        n: number
      }>`SELECT count(*)::int AS n FROM rfq_events WHERE rfq_id = ${rfqId} AND type = 'QUOTE.EXPIRE'`,
      (rows) => Number(rows[0]?.n ?? 0)
    )
  )

/**
 * The next engine event `matches` accepts. The real-time bound only turns an event that never
 * comes into a readable failure instead of a hung test.
 */
export const nextEvent = (
  events: Queue.Dequeue<EngineEvent>,
  matches: (e: EngineEvent) => boolean,
  what: string
) =>
  Effect.iterate(undefined as EngineEvent | undefined, {
    while: (e) => e === undefined || !matches(e),
    body: () => Queue.take(events)
  }).pipe(
    Effect.map((e) => e!),
    TestServices.provideWithLive(
      Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => new Error(`never saw ${what}`) })
    )
  )

/** The quote event of `quoteId` saying it expired. */
export const quoteExpiredEvent = (quoteId: number) => (e: EngineEvent) =>
  e.type === "quote" && e.quote.id === quoteId && e.quote.status === "expired"

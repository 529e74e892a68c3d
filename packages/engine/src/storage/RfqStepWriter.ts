import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { StateMachine } from "xstate"
import { oppositeDirection } from "../domain/Primitives.js"
import type { RfqEffect, RfqStateValue, rfqMachine } from "../rfq/RfqMachine.js"
import type { QuoteRecord, TradeRecord } from "../rfq/RfqRecord.js"
import { dbStatusOf } from "./RfqRows.js"

/**
 * Writes the effects of one machine step (the interpreter's side of `RfqMachine`'s named actions)
 * and the RFQ's event-log row. The caller runs it in a transaction: a step is all or nothing.
 *
 * Every write checks that it touched the rows the machine believed were there (an active quote,
 * a pending allocation…). A mismatch means memory and storage disagree: the step dies and rolls
 * back rather than committing on top of a state nobody expected.
 */

/** The machine's named actions with their params, as `transition()` returns them. */
type MachineAction =
  typeof rfqMachine extends StateMachine<
    any,
    any,
    any,
    any,
    infer A,
    any,
    any,
    any,
    any,
    any,
    any,
    any,
    any,
    any,
    any
  >
    ? A
    : never
export type StepEffect = Extract<MachineAction, { readonly type: StepEffectType }>
type StepEffectType =
  | "quoteStored"
  | "quotesClosed"
  | "tradeStarted"
  | "tradeFinished"
  | "rfqClosed"
  | "rfqDeleted"
const stepEffectTypes: ReadonlySet<string> = new Set<StepEffectType>([
  "quoteStored",
  "quotesClosed",
  "tradeStarted",
  "tradeFinished",
  "rfqClosed",
  "rfqDeleted"
])

/** The effects to persist; xstate's own built-in actions (assign) carry nothing to write. */
export const stepEffectsOf = (effects: ReadonlyArray<RfqEffect>): ReadonlyArray<StepEffect> =>
  effects.flatMap((e): Array<StepEffect> => {
    if (stepEffectTypes.has(e.type)) return [{ type: e.type, params: e.params } as StepEffect]
    if (e.type.startsWith("xstate.")) return []
    throw new Error(`RfqStore.applyStep: no storage for the machine effect ${JSON.stringify(e.type)}`)
  })

const json = (value: unknown): string => JSON.stringify(value)

const mismatch = (what: string) => Effect.dieMessage(`RfqStore.applyStep: ${what}`)

const expectRows = (rows: ReadonlyArray<unknown>, expected: number, what: string) =>
  rows.length === expected
    ? Effect.void
    : mismatch(`${what} (expected ${expected} row(s), wrote ${rows.length})`)

const tradeStatus = { filled: "filled", filledPartial: "filledPartial", refused: "failed" } as const

/** A JSON summary of a step for the event log: what changed, decimals as strings. */
export const stepPayload = (value: RfqStateValue, effects: ReadonlyArray<StepEffect>) => ({
  value,
  effects: effects.map((e) => {
    switch (e.type) {
      case "quoteStored":
        return { type: e.type, update: e.params.previous !== undefined, quote: e.params.quote }
      case "quotesClosed":
        return {
          type: e.type,
          at: e.params.at,
          closed: e.params.closed.map((c) => ({ quoteId: c.quote.id, status: c.status }))
        }
      case "tradeStarted":
        return { type: e.type, trade: e.params.trade }
      case "tradeFinished":
        return { type: e.type, outcome: e.params.outcome, trade: e.params.trade }
      case "rfqClosed":
        return { type: e.type, status: e.params.status, at: e.params.at }
      default:
        // rfqDeleted
        return { type: e.type, at: e.params.at }
    }
  })
})

export const makeStepWriter = (sql: SqlClient.SqlClient) => {
  const insertQuote = (q: QuoteRecord) =>
    sql`INSERT INTO quotes (id, rfq_id, maker_desk_id, maker_user_id, maker_id, label, direction, settlement_option,
        settlement_credentials_id, quote_currency, amount, price, legs, hedge, status, created_at, updated_at)
      VALUES (${q.id}, ${q.rfqId}, ${q.makerDeskId}, ${q.makerUserId}, ${q.makerId}, ${q.label ?? null},
        ${q.direction}, ${q.settlementOption}, ${q.settlementCredentials}, ${q.quoteCurrency}, ${q.amount},
        ${q.price}, ${json(q.legs)}::jsonb, ${q.hedge === undefined ? null : json(q.hedge)}::jsonb, ${q.status},
        ${q.createdAt}, ${q.updatedAt})
      RETURNING id`

  const updateQuote = (q: QuoteRecord) =>
    sql`UPDATE quotes SET label = ${q.label ?? null}, direction = ${q.direction},
        settlement_option = ${q.settlementOption}, settlement_credentials_id = ${q.settlementCredentials},
        quote_currency = ${q.quoteCurrency}, amount = ${q.amount}, price = ${q.price}, legs = ${json(q.legs)}::jsonb,
        hedge = ${q.hedge === undefined ? null : json(q.hedge)}::jsonb, status = ${q.status},
        updated_at = ${q.updatedAt}, version = version + 1
      WHERE id = ${q.id} AND rfq_id = ${q.rfqId} AND status = 'active'
      RETURNING id`

  const closeQuotes = (rfqId: number, ids: ReadonlyArray<number>, status: string, at: number) =>
    sql`UPDATE quotes SET status = ${status}, updated_at = ${at}, version = version + 1
      WHERE rfq_id = ${rfqId} AND status = 'active' AND id IN ${sql.in(ids)}
      RETURNING id`

  // The taker user of a trade is the RFQ's: the trade record does not carry who accepted.
  const insertTrade = (t: TradeRecord, now: number) =>
    sql`INSERT INTO trades (id, rfq_id, quote_id, taker_user_id, taker_direction, settlement_option, price, amount,
        filled_amount, status, created_at, updated_at)
      SELECT ${t.id}, r.id, ${t.quoteId}, r.taker_user_id, ${oppositeDirection(t.makerDirection)},
        ${t.settlementOption}, ${t.price}, ${t.amount}, ${t.filledAmount}, 'pending', ${t.createdAt}, ${now}
      FROM rfqs r WHERE r.id = ${t.rfqId}
      RETURNING id`

  const insertAllocations = (t: TradeRecord) =>
    sql`INSERT INTO allocations ${sql.insert(
      t.allocations.map((a, position) => ({
        id: a.id,
        trade_id: t.id,
        position,
        venue: t.settlementOption,
        credentials_id: a.credentialsId,
        percentage: a.percentage,
        amount: a.amount,
        status: a.status,
        idempotency_key: a.idempotencyKey,
        exchange_trade_id: a.exchangeTradeId ?? null,
        reason: a.reason ?? null,
        created_at: t.createdAt,
        updated_at: a.updatedAt
      }))
    )} RETURNING id`

  const finishAllocation = (tradeId: number, a: TradeRecord["allocations"][number]) =>
    sql`UPDATE allocations SET status = ${a.status}, exchange_trade_id = ${a.exchangeTradeId ?? null},
        reason = ${a.reason ?? null}, updated_at = ${a.updatedAt}
      WHERE id = ${a.id} AND trade_id = ${tradeId}
      RETURNING id`

  const finishTrade = (t: TradeRecord, status: string, now: number) =>
    sql`UPDATE trades SET status = ${status}, filled_amount = ${t.filledAmount}, updated_at = ${now}
      WHERE id = ${t.id} AND rfq_id = ${t.rfqId} AND status = 'pending'
      RETURNING id`

  const writeEffect = (rfqId: number, e: StepEffect, now: number): Effect.Effect<void, SqlError> => {
    switch (e.type) {
      case "quoteStored": {
        const { quote, previous } = e.params
        if (quote.rfqId !== rfqId)
          return mismatch(`quote ${quote.id} belongs to RFQ ${quote.rfqId}, not ${rfqId}`)
        return previous === undefined
          ? Effect.flatMap(insertQuote(quote), (rows) => expectRows(rows, 1, `insert quote ${quote.id}`))
          : Effect.flatMap(updateQuote(quote), (rows) =>
              expectRows(rows, 1, `update active quote ${quote.id}`)
            )
      }
      case "quotesClosed": {
        const byStatus = new Map<string, Array<number>>()
        for (const { quote, status } of e.params.closed)
          byStatus.set(status, [...(byStatus.get(status) ?? []), quote.id])
        return Effect.forEach(
          byStatus,
          ([status, ids]) =>
            Effect.flatMap(closeQuotes(rfqId, ids, status, e.params.at), (rows) =>
              expectRows(rows, ids.length, `close active quotes ${ids.join(", ")} as ${status}`)
            ),
          { discard: true }
        )
      }
      case "tradeStarted": {
        const { trade } = e.params
        if (trade.rfqId !== rfqId)
          return mismatch(`trade ${trade.id} belongs to RFQ ${trade.rfqId}, not ${rfqId}`)
        return Effect.gen(function* () {
          yield* expectRows(yield* insertTrade(trade, now), 1, `insert trade ${trade.id}`)
          if (trade.allocations.length === 0) return yield* mismatch(`trade ${trade.id} has no allocations`)
          yield* expectRows(
            yield* insertAllocations(trade),
            trade.allocations.length,
            `allocations of ${trade.id}`
          )
        })
      }
      case "tradeFinished": {
        const { trade, outcome } = e.params
        return Effect.gen(function* () {
          for (const a of trade.allocations) {
            yield* expectRows(yield* finishAllocation(trade.id, a), 1, `finish allocation ${a.id}`)
          }
          yield* expectRows(
            yield* finishTrade(trade, tradeStatus[outcome], now),
            1,
            `finish pending trade ${trade.id}`
          )
        })
      }
      case "rfqClosed":
      case "rfqDeleted":
        // Columns of the RFQ row itself, written with it (see `updateRfq`).
        return Effect.void
    }
  }

  const updateRfq = (rfqId: number, value: RfqStateValue, effects: ReadonlyArray<StepEffect>) => {
    const sets = [sql`version = version + 1`]
    const status = dbStatusOf(value)
    if (status !== undefined) sets.push(sql`status = ${status}`)
    for (const e of effects) {
      if (e.type === "rfqClosed") sets.push(sql`closed_at = ${e.params.at}`)
      if (e.type === "rfqDeleted") sets.push(sql`deleted_at = ${e.params.at}`)
    }
    return sql`UPDATE rfqs SET ${sql.csv(sets)} WHERE id = ${rfqId} AND deleted_at IS NULL RETURNING id`
  }

  /** Writes one step; run it inside `sql.withTransaction`. */
  const writeStep = (
    rfqId: number,
    seq: number,
    eventType: string,
    value: RfqStateValue,
    rawEffects: ReadonlyArray<RfqEffect>,
    now: number
  ): Effect.Effect<void, SqlError> =>
    Effect.gen(function* () {
      const effects = yield* Effect.try({ try: () => stepEffectsOf(rawEffects), catch: (e) => e }).pipe(
        Effect.orDie
      )
      for (const e of effects) yield* writeEffect(rfqId, e, now)
      yield* expectRows(yield* updateRfq(rfqId, value, effects), 1, `update RFQ ${rfqId}`)
      yield* sql`INSERT INTO rfq_events (rfq_id, seq, type, payload, created_at)
        VALUES (${rfqId}, ${seq}, ${eventType}, ${json(stepPayload(value, effects))}::jsonb, ${now})`
    })

  return { writeStep }
}

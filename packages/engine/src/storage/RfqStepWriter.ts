import type * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { StateMachine } from "xstate"
import { oppositeDirection } from "../domain/Primitives.js"
import type { RfqEffect, RfqStateValue, rfqMachine } from "../rfq/RfqMachine.js"
import type { QuoteRecord, TradeRecord } from "../rfq/RfqRecord.js"
import { dbStatusOf } from "./RfqRows.js"
import { isEventSeqTaken } from "./SqlErrors.js"

/**
 * Writes the effects of one machine step (the interpreter's side of `RfqMachine`'s named actions)
 * and the RFQ's event-log row, as one statement: a step is all or nothing.
 *
 * Every write checks that it touched the rows the machine believed were there (an active quote,
 * a pending allocation, the RFQ at the version before the step…). A mismatch means memory and
 * storage disagree (a bug, or another owner stepped the RFQ): the step dies and rolls back rather
 * than committing on top of a state nobody expected.
 *
 * Over 300 lines on purpose: one statement per machine step, built from every action's write; the
 * actions and their SQL are read together.
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

/**
 * A step refused by the RFQ's version guard: another owner stepped the RFQ since this writer read
 * it (its shard moved to another host mid-command). Nothing was written; the actor reloads. The
 * caller is answered 503 (`isStaleStep`): the command may be sent again, to the new owner.
 */
export class StaleStep extends Error {
  readonly _tag = "StaleStep"
}

/** The message every stale step carries, also once a defect has crossed the cluster as text. */
export const STALE_STEP = "RfqStore.applyStep: stale step:"

const stale = (what: string) => Effect.die(new StaleStep(`${STALE_STEP} ${what}`))

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
        settlement_credentials_id, quote_currency, amount, price, legs, hedge, status, valid_until, created_at,
        updated_at)
      VALUES (${q.id}, ${q.rfqId}, ${q.makerDeskId}, ${q.makerUserId}, ${q.makerId}, ${q.label ?? null},
        ${q.direction}, ${q.settlementOption}, ${q.settlementCredentials}, ${q.quoteCurrency}, ${q.amount},
        ${q.price}, ${json(q.legs)}::jsonb, ${q.hedge === undefined ? null : json(q.hedge)}::jsonb, ${q.status},
        ${q.validUntil ?? null}, ${q.createdAt}, ${q.updatedAt})
      RETURNING id`

  const updateQuote = (q: QuoteRecord) =>
    sql`UPDATE quotes SET label = ${q.label ?? null}, direction = ${q.direction},
        settlement_option = ${q.settlementOption}, settlement_credentials_id = ${q.settlementCredentials},
        quote_currency = ${q.quoteCurrency}, amount = ${q.amount}, price = ${q.price}, legs = ${json(q.legs)}::jsonb,
        hedge = ${q.hedge === undefined ? null : json(q.hedge)}::jsonb, status = ${q.status},
        valid_until = ${q.validUntil ?? null}, updated_at = ${q.updatedAt}, version = version + 1
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

  /** One write of a step: a statement returning one row per row it touched, and how many it must touch. */
  interface Part {
    readonly statement: Statement.Statement<unknown>
    readonly expected: number
    readonly what: string
  }

  const partsOf = (rfqId: number, e: StepEffect, now: number): Array<Part> => {
    switch (e.type) {
      case "quoteStored": {
        const { quote, previous } = e.params
        if (quote.rfqId !== rfqId)
          throw new StepMismatch(`quote ${quote.id} belongs to RFQ ${quote.rfqId}, not ${rfqId}`)
        return previous === undefined
          ? [{ statement: insertQuote(quote), expected: 1, what: `insert quote ${quote.id}` }]
          : [{ statement: updateQuote(quote), expected: 1, what: `update active quote ${quote.id}` }]
      }
      case "quotesClosed": {
        const byStatus = new Map<string, Array<number>>()
        for (const { quote, status } of e.params.closed)
          byStatus.set(status, [...(byStatus.get(status) ?? []), quote.id])
        return [...byStatus].map(([status, ids]) => ({
          statement: closeQuotes(rfqId, ids, status, e.params.at),
          expected: ids.length,
          what: `close active quotes ${ids.join(", ")} as ${status}`
        }))
      }
      case "tradeStarted": {
        const { trade } = e.params
        if (trade.rfqId !== rfqId)
          throw new StepMismatch(`trade ${trade.id} belongs to RFQ ${trade.rfqId}, not ${rfqId}`)
        if (trade.allocations.length === 0) throw new StepMismatch(`trade ${trade.id} has no allocations`)
        return [
          { statement: insertTrade(trade, now), expected: 1, what: `insert trade ${trade.id}` },
          {
            statement: insertAllocations(trade),
            expected: trade.allocations.length,
            what: `allocations of ${trade.id}`
          }
        ]
      }
      case "tradeFinished": {
        const { trade, outcome } = e.params
        return [
          ...trade.allocations.map((a) => ({
            statement: finishAllocation(trade.id, a),
            expected: 1,
            what: `finish allocation ${a.id}`
          })),
          {
            statement: finishTrade(trade, tradeStatus[outcome], now),
            expected: 1,
            what: `finish pending trade ${trade.id}`
          }
        ]
      }
      case "rfqClosed":
      case "rfqDeleted":
        // Columns of the RFQ row itself, written with it (see `updateRfq`).
        return []
    }
  }

  /**
   * The RFQ row, guarded by its version: `rfqs.version` counts the RFQ's events (1 at its insert
   * with event 1, one more per step), so the step writing event `seq` finds the row at `seq - 1`
   * unless another owner stepped the RFQ meanwhile. Then it touches no row, and the step dies as a
   * mismatch: a stale owner never writes, and its actor reloads (doubt).
   */
  const updateRfq = (
    rfqId: number,
    seq: number,
    value: RfqStateValue,
    effects: ReadonlyArray<StepEffect>
  ) => {
    const sets = [sql`version = version + 1`]
    const status = dbStatusOf(value)
    if (status !== undefined) sets.push(sql`status = ${status}`)
    for (const e of effects) {
      if (e.type === "rfqClosed") sets.push(sql`closed_at = ${e.params.at}`)
      if (e.type === "rfqDeleted") sets.push(sql`deleted_at = ${e.params.at}`)
    }
    return sql`UPDATE rfqs SET ${sql.csv(sets)}
      WHERE id = ${rfqId} AND deleted_at IS NULL AND version = ${seq - 1} RETURNING id`
  }

  /**
   * Writes one step as ONE statement: every write is a data-modifying CTE, and the statement's
   * result checks that each touched exactly the rows it must. PostgreSQL runs a statement
   * atomically, so a step is all or nothing without BEGIN and COMMIT, in one round trip instead of
   * one per write. A count that is off makes the statement fail (a cast of the mismatch report to
   * integer), which undoes every write of the step; the caller sees a defect naming the write.
   * Safe inside a surrounding transaction too.
   */
  const writeStep = (
    rfqId: number,
    seq: number,
    eventType: string,
    value: RfqStateValue,
    rawEffects: ReadonlyArray<RfqEffect>,
    now: number
  ): Effect.Effect<void, SqlError> =>
    Effect.suspend(() => {
      let parts: Array<Part>
      let effects: ReadonlyArray<StepEffect>
      try {
        effects = stepEffectsOf(rawEffects)
        parts = effects.flatMap((e) => partsOf(rfqId, e, now))
      } catch (error) {
        return error instanceof StepMismatch ? mismatch(error.message) : Effect.die(error)
      }
      parts.push(
        {
          statement: updateRfq(rfqId, seq, value, effects),
          expected: 1,
          what: `update RFQ ${rfqId} at version ${seq - 1}`
        },
        {
          statement: sql`INSERT INTO rfq_events (rfq_id, seq, type, payload, created_at)
            VALUES (${rfqId}, ${seq}, ${eventType}, ${json(stepPayload(value, effects))}::jsonb, ${now})
            RETURNING seq`,
          expected: 1,
          what: `insert event ${seq} of RFQ ${rfqId}`
        }
      )
      const ctes = parts.map((p, i) => sql`${sql(`w${i}`)} AS (${p.statement})`)
      // Each check reads its CTE, so none is a constant the planner could evaluate early.
      const checks = parts.map(
        (p, i) => sql`CASE WHEN (SELECT count(*) FROM ${sql(`w${i}`)}) = ${p.expected} THEN 0
          ELSE ('RfqStore.applyStep: ' || ${p.what} || ' (expected ${sql.literal(String(p.expected))} row(s), wrote ' ||
            (SELECT count(*) FROM ${sql(`w${i}`)}) || ')')::int END`
      )
      return sql`WITH ${sql.csv(ctes)} SELECT ${sql.join(" + ", false)(checks)} AS mismatches`.pipe(
        Effect.asVoid,
        Effect.catchAll((error) => {
          // Event `seq` already written: another owner stepped the RFQ (the version guard's case,
          // when the event's insert fails before the guard's check is read).
          if (isEventSeqTaken(error)) return stale(`event ${seq} of RFQ ${rfqId} is already written`)
          const report = mismatchReport(error)
          if (report === undefined) return Effect.fail(error)
          return report.startsWith(`update RFQ ${rfqId} at version`) ? stale(report) : mismatch(report)
        })
      )
    })

  return { writeStep }
}

/** The mismatch a failed step statement reports (see `writeStep`), from the driver error it caused. */
const mismatchReport = (error: unknown): string | undefined => {
  for (let e: unknown = error, depth = 0; e !== null && typeof e === "object" && depth < 5; depth++) {
    const message = (e as { message?: unknown }).message
    const found = typeof message === "string" ? /RfqStore\.applyStep: ([^"]*)/.exec(message) : null
    if (found !== null) return found[1]
    e = (e as { cause?: unknown }).cause
  }
  return undefined
}

/** A step whose effects do not fit the RFQ (a bug): refused before anything is written. */
class StepMismatch extends Error {}

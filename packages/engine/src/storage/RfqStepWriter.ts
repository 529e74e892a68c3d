import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { StateMachine } from "xstate"
import { oppositeDirection } from "../domain/Primitives.js"
import type { RfqEffect, RfqStateValue, rfqMachine } from "../rfq/RfqMachine.js"
import type { QuoteRecord, TradeRecord } from "../rfq/RfqRecord.js"
import { directRun, placeholders, shiftPlaceholders, StatementShapes } from "./DirectSql.js"
import { dbStatusOf } from "./RfqRows.js"
import { isEventSeqTaken } from "./SqlErrors.js"

/**
 * Writes the effects of one machine step (the interpreter's side of `RfqMachine`'s named actions)
 * and the RFQ's event-log row, as one statement: a step is all or nothing.
 *
 * Every write checks that it touched the rows the machine believed were there (an active quote,
 * a pending allocation, the RFQ's last event the one before the step's…). A mismatch means memory and
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
 * A step refused by its guard (its event must follow the RFQ's last, `insertEvent`): another owner
 * stepped the RFQ since this writer read it (its shard moved to another host mid-command). Nothing
 * was written; the actor reloads. The caller is answered 503 (`isStaleStep`): the command may be
 * sent again, to the new owner.
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

/**
 * One write of a step: a statement returning one row per row it touched, and how many it must
 * touch. Its text numbers its parameters from `$1`; `key` (with `expected`) determines the text,
 * so a step's whole statement is built once per shape (`StatementShapes`).
 */
interface Part {
  readonly key: string
  readonly text: () => string
  readonly values: ReadonlyArray<unknown>
  readonly expected: number
  readonly what: string
}

const QUOTE_COLUMNS = `id, rfq_id, maker_desk_id, maker_user_id, maker_id, label, direction, settlement_option,
  settlement_credentials_id, quote_currency, amount, price, legs, hedge, status, valid_until, created_at, updated_at`

/** A quote's columns an update may change, from `label` to `valid_until`, in the order both statements list them. */
const changeableValues = (q: QuoteRecord): Array<unknown> => [
  q.label ?? null,
  q.direction,
  q.settlementOption,
  q.settlementCredentials,
  q.quoteCurrency,
  q.amount,
  q.price,
  json(q.legs),
  q.hedge === undefined ? null : json(q.hedge),
  q.status,
  q.validUntil ?? null
]

const insertQuote = (q: QuoteRecord): Part => ({
  key: "qi",
  text: () => `INSERT INTO quotes (${QUOTE_COLUMNS})
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::jsonb, $14::jsonb, $15, $16, $17, $18)
    RETURNING id`,
  values: [
    q.id,
    q.rfqId,
    q.makerDeskId,
    q.makerUserId,
    q.makerId,
    ...changeableValues(q),
    q.createdAt,
    q.updatedAt
  ],
  expected: 1,
  what: `insert quote ${q.id}`
})

const updateQuote = (q: QuoteRecord): Part => ({
  key: "qu",
  text: () => `UPDATE quotes SET label = $1, direction = $2, settlement_option = $3, settlement_credentials_id = $4,
    quote_currency = $5, amount = $6, price = $7, legs = $8::jsonb, hedge = $9::jsonb, status = $10,
    valid_until = $11, updated_at = $12, version = version + 1
    WHERE id = $13 AND rfq_id = $14 AND status = 'active'
    RETURNING id`,
  values: [...changeableValues(q), q.updatedAt, q.id, q.rfqId],
  expected: 1,
  what: `update active quote ${q.id}`
})

const closeQuotes = (rfqId: number, ids: ReadonlyArray<number>, status: string, at: number): Part => ({
  key: `qc${ids.length}`,
  text: () => `UPDATE quotes SET status = $1, updated_at = $2, version = version + 1
    WHERE rfq_id = $3 AND status = 'active' AND id IN (${placeholders(4, ids.length)})
    RETURNING id`,
  values: [status, at, rfqId, ...ids],
  expected: ids.length,
  what: `close active quotes ${ids.join(", ")} as ${status}`
})

// The taker user of a trade is the RFQ's: the trade record does not carry who accepted.
const insertTrade = (t: TradeRecord, now: number): Part => ({
  key: "ti",
  text: () => `INSERT INTO trades (id, rfq_id, quote_id, taker_user_id, taker_direction, settlement_option, price,
    amount, filled_amount, status, created_at, updated_at)
    SELECT $1, r.id, $2, r.taker_user_id, $3, $4, $5, $6, $7, 'pending', $8, $9
    FROM rfqs r WHERE r.id = $10
    RETURNING id`,
  values: [
    t.id,
    t.quoteId,
    oppositeDirection(t.makerDirection),
    t.settlementOption,
    t.price,
    t.amount,
    t.filledAmount,
    t.createdAt,
    now,
    t.rfqId
  ],
  expected: 1,
  what: `insert trade ${t.id}`
})

const ALLOCATION_COLUMNS = `"id", "trade_id", "position", "venue", "credentials_id", "percentage", "amount", "status",
  "idempotency_key", "exchange_trade_id", "reason", "created_at", "updated_at"`
const ALLOCATION_VALUES = 13

const insertAllocations = (t: TradeRecord): Part => ({
  key: `ai${t.allocations.length}`,
  text: () => {
    const rows = t.allocations.map(
      (_, i) => `(${placeholders(1 + i * ALLOCATION_VALUES, ALLOCATION_VALUES)})`
    )
    return `INSERT INTO allocations (${ALLOCATION_COLUMNS}) VALUES ${rows.join(", ")} RETURNING id`
  },
  values: t.allocations.flatMap((a, position) => [
    a.id,
    t.id,
    position,
    t.settlementOption,
    a.credentialsId,
    a.percentage,
    a.amount,
    a.status,
    a.idempotencyKey,
    a.exchangeTradeId ?? null,
    a.reason ?? null,
    t.createdAt,
    a.updatedAt
  ]),
  expected: t.allocations.length,
  what: `allocations of ${t.id}`
})

const finishAllocation = (tradeId: number, a: TradeRecord["allocations"][number]): Part => ({
  key: "af",
  text: () => `UPDATE allocations SET status = $1, exchange_trade_id = $2, reason = $3, updated_at = $4
    WHERE id = $5 AND trade_id = $6
    RETURNING id`,
  values: [a.status, a.exchangeTradeId ?? null, a.reason ?? null, a.updatedAt, a.id, tradeId],
  expected: 1,
  what: `finish allocation ${a.id}`
})

const finishTrade = (t: TradeRecord, status: string, now: number): Part => ({
  key: "tf",
  text: () => `UPDATE trades SET status = $1, filled_amount = $2, updated_at = $3
    WHERE id = $4 AND rfq_id = $5 AND status = 'pending'
    RETURNING id`,
  values: [status, t.filledAmount, now, t.id, t.rfqId],
  expected: 1,
  what: `finish pending trade ${t.id}`
})

const partsOf = (rfqId: number, e: StepEffect, now: number): Array<Part> => {
  switch (e.type) {
    case "quoteStored": {
      const { quote, previous } = e.params
      if (quote.rfqId !== rfqId)
        throw new StepMismatch(`quote ${quote.id} belongs to RFQ ${quote.rfqId}, not ${rfqId}`)
      return [previous === undefined ? insertQuote(quote) : updateQuote(quote)]
    }
    case "quotesClosed": {
      const byStatus = new Map<string, Array<number>>()
      for (const { quote, status } of e.params.closed) {
        const ids = byStatus.get(status)
        if (ids === undefined) byStatus.set(status, [quote.id])
        else ids.push(quote.id)
      }
      return [...byStatus].map(([status, ids]) => closeQuotes(rfqId, ids, status, e.params.at))
    }
    case "tradeStarted": {
      const { trade } = e.params
      if (trade.rfqId !== rfqId)
        throw new StepMismatch(`trade ${trade.id} belongs to RFQ ${trade.rfqId}, not ${rfqId}`)
      if (trade.allocations.length === 0) throw new StepMismatch(`trade ${trade.id} has no allocations`)
      return [insertTrade(trade, now), insertAllocations(trade)]
    }
    case "tradeFinished": {
      const { trade, outcome } = e.params
      return [
        ...trade.allocations.map((a) => finishAllocation(trade.id, a)),
        finishTrade(trade, tradeStatus[outcome], now)
      ]
    }
    case "rfqClosed":
    case "rfqDeleted":
      // Columns of the RFQ row itself, written with it (see `updateRfq`).
      return []
  }
}

/** The effects that change the RFQ row's own columns (its status, `closed_at`, `deleted_at`). */
const rowEffects: ReadonlySet<string> = new Set<StepEffectType>([
  "tradeStarted",
  "tradeFinished",
  "rfqClosed",
  "rfqDeleted"
])

/**
 * The RFQ row's own columns, written only by a step that changes them: every change of the
 * machine's state value comes with one of `rowEffects` (`RfqMachine`), so a step that only stores
 * or closes quotes leaves the row alone. Nothing when the step changes none of them. The row must
 * exist and not be deleted.
 */
const updateRfq = (
  rfqId: number,
  value: RfqStateValue,
  effects: ReadonlyArray<StepEffect>
): Part | undefined => {
  if (!effects.some((e) => rowEffects.has(e.type))) return undefined
  // Each column set, in order, and its value: the key names the columns, so it names the text.
  const columns: Array<string> = []
  const values: Array<unknown> = []
  const status = dbStatusOf(value)
  if (status !== undefined) {
    columns.push("status")
    values.push(status)
  }
  for (const e of effects) {
    if (e.type === "rfqClosed") {
      columns.push("closed_at")
      values.push(e.params.at)
    }
    if (e.type === "rfqDeleted") {
      columns.push("deleted_at")
      values.push(e.params.at)
    }
  }
  values.push(rfqId)
  return {
    key: `r(${columns.join(",")})`,
    text: () => {
      const sets = columns.map((c, i) => `${c} = $${i + 1}`)
      return `UPDATE rfqs SET ${sets.join(", ")}
        WHERE id = $${columns.length + 1} AND deleted_at IS NULL RETURNING id`
    },
    values,
    expected: 1,
    what: `update RFQ ${rfqId}`
  }
}

/** What a step refused by the guard below reports: the writer's copy of the RFQ is not storage's. */
const staleReport = (rfqId: number, seq: number) => `event ${seq} of RFQ ${rfqId} onto event ${seq - 1}`

/**
 * The step's event-log row, and the step's guard: event `seq` is written only onto event
 * `seq - 1`, the RFQ's last (`rfq_events_rfq_seq_key` orders one RFQ's events). A writer whose
 * copy is stale (another owner stepped the RFQ since it read it) finds another last event and
 * writes nothing, or, racing the other owner's step at the same `seq`, loses to the unique key;
 * either way the whole step writes nothing and its actor reloads.
 */
const insertEvent = (
  rfqId: number,
  seq: number,
  eventType: string,
  value: RfqStateValue,
  effects: ReadonlyArray<StepEffect>,
  now: number
): Part => ({
  key: "e",
  text: () => `INSERT INTO rfq_events (rfq_id, seq, type, payload, created_at)
    SELECT $1, $2, $3, $4::jsonb, $5
    WHERE (SELECT max(l.seq) FROM rfq_events l WHERE l.rfq_id = $1) = $2::int - 1
    RETURNING seq`,
  values: [rfqId, seq, eventType, json(stepPayload(value, effects)), now],
  expected: 1,
  what: staleReport(rfqId, seq)
})

/**
 * The statement of a step: every write a data-modifying CTE `wN`, then one check per write that
 * it touched exactly the rows it must (its expected count and its description are the last
 * parameters, two per write, in order). Each check reads its CTE, so none is a constant the
 * planner could evaluate early.
 */
const stepText = (parts: ReadonlyArray<Part>): string => {
  let offset = 0
  const ctes = parts.map((p, i) => {
    const cte = `"w${i}" AS (${shiftPlaceholders(p.text(), offset)})`
    offset += p.values.length
    return cte
  })
  const checks = parts.map((p, i) => {
    const expected = ++offset
    const what = ++offset
    return `CASE WHEN (SELECT count(*) FROM "w${i}") = $${expected} THEN 0
      ELSE ('RfqStore.applyStep: ' || $${what} || ' (expected ${p.expected} row(s), wrote ' ||
        (SELECT count(*) FROM "w${i}") || ')')::int END`
  })
  return `WITH ${ctes.join(", ")} SELECT ${checks.join(" + ")} AS mismatches`
}

export const makeStepWriter = (sql: SqlClient.SqlClient) => {
  const run = directRun(sql)
  const shapes = new StatementShapes()

  /**
   * Writes one step as ONE statement: every write is a data-modifying CTE, and the statement's
   * result checks that each touched exactly the rows it must. PostgreSQL runs a statement
   * atomically, so a step is all or nothing without BEGIN and COMMIT, in one round trip instead of
   * one per write. A count that is off makes the statement fail (a cast of the mismatch report to
   * integer), which undoes every write of the step; the caller sees a defect naming the write.
   * Safe inside a surrounding transaction too. The text is built once per shape of step; a call
   * builds only its parameters.
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
      try {
        const effects = stepEffectsOf(rawEffects)
        // The guard first: its check is read first, so a stale writer is told it is stale.
        parts = [insertEvent(rfqId, seq, eventType, value, effects, now)]
        for (const e of effects) parts.push(...partsOf(rfqId, e, now))
        const row = updateRfq(rfqId, value, effects)
        if (row !== undefined) parts.push(row)
      } catch (error) {
        return error instanceof StepMismatch ? mismatch(error.message) : Effect.die(error)
      }
      let key = ""
      const params: Array<unknown> = []
      for (const p of parts) {
        key += `${p.key}:${p.expected};`
        for (const v of p.values) params.push(v)
      }
      for (const p of parts) params.push(p.expected, p.what)
      return run(
        shapes.text(key, () => stepText(parts)),
        params
      ).pipe(
        Effect.asVoid,
        Effect.catchAll((error) => {
          // Event `seq` already written: another owner's step at the same `seq` committed first.
          if (isEventSeqTaken(error)) return stale(`event ${seq} of RFQ ${rfqId} is already written`)
          const report = mismatchReport(error)
          if (report === undefined) return Effect.fail(error)
          return report.startsWith(staleReport(rfqId, seq)) ? stale(report) : mismatch(report)
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

import type * as SqlClient from "@effect/sql/SqlClient"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Option } from "effect"
import type { QuoteListFilter, RfqListFilter } from "../rfq/RfqStore.js"
import { ownQuotesWhere, visibleRfqsWhere } from "../rfq/Visibility.js"
import { waitSpan } from "../services/WaitProbe.js"
import { windowAndPage } from "./ListWindow.js"
import { quoteDocument, readQuote, readTrade, tradeDocument } from "./RfqRows.js"

/**
 * The SQL RFQ store's lists and single-row reads (`SqlRfqStore.ts`): the RFQ and quote lists a
 * caller may see, newest first by `(created_at, id)` with their totals, and the reads of one quote,
 * one RFQ's quotes, a quote's RFQ and an RFQ's trade. None of them writes; each row is read as the
 * record the engine holds (`RfqRows.ts`).
 */

export type DocRow = { readonly doc: string }

/** Reads each row's document; a row the reader rejects is a defect (corrupt data or a bug). */
export const readAll =
  <A>(read: (text: unknown) => A) =>
  (rows: ReadonlyArray<DocRow>): Effect.Effect<ReadonlyArray<A>> =>
    Effect.sync(() => rows.map((row) => read(row.doc)))

/** A status of the list filter as the `rfqs.status` values it stands for. */
const dbStatusesOf = (status: string): ReadonlyArray<string> => {
  switch (status) {
    case "traded":
      return ["filled", "filledPartial"]
    case "open":
      // An RFQ mid-settlement is open to clients.
      return ["open", "trading"]
    default:
      return [status]
  }
}

export const makeRfqReads = (sql: SqlClient.SqlClient) => {
  const list = Effect.fnUntraced(function* (filter: RfqListFilter) {
    const where: Array<Fragment> = [
      sql`r.deleted_at IS NULL`,
      sql`r.status <> 'draft'`,
      visibleRfqsWhere(sql, filter)
    ]
    if (filter.statuses !== undefined && filter.statuses.length > 0) {
      where.push(sql`r.status IN ${sql.in([...new Set(filter.statuses.flatMap(dbStatusesOf))])}`)
    }
    if (filter.baseCurrency !== undefined) where.push(sql`r.base_currency = ${filter.baseCurrency}`)
    const page = windowAndPage(sql, "r", filter, where)
    const [counted, rows] = yield* Effect.all(
      [
        sql<{ total: number }>`SELECT count(*) AS total FROM rfqs r WHERE ${sql.and(where)}`,
        sql<{ id: number }>`SELECT r.id FROM rfqs r WHERE ${sql.and(page)}
        ORDER BY r.created_at DESC, r.id DESC LIMIT ${filter.limit}`
      ],
      { concurrency: "unbounded" }
    ).pipe(Effect.orDie)
    return { total: Number(counted[0]?.total ?? 0), ids: rows.map((r) => Number(r.id)) }
  }, waitSpan("RfqStore.list"))

  const listQuotes = Effect.fnUntraced(function* (filter: QuoteListFilter) {
    const where: Array<Fragment> = [ownQuotesWhere(sql, filter.makerDeskId)]
    if (filter.rfqId !== undefined) where.push(sql`q.rfq_id = ${filter.rfqId}`)
    const page = windowAndPage(sql, "q", filter, where)
    const [counted, rows] = yield* Effect.all(
      [
        sql<{ total: number }>`SELECT count(*) AS total FROM quotes q WHERE ${sql.and(where)}`,
        Effect.flatMap(
          sql<DocRow>`SELECT ${sql.literal(quoteDocument)} FROM quotes q WHERE ${sql.and(page)}
          ORDER BY q.created_at DESC, q.id DESC LIMIT ${filter.limit}`,
          readAll(readQuote)
        )
      ],
      { concurrency: "unbounded" }
    ).pipe(Effect.orDie)
    return { total: Number(counted[0]?.total ?? 0), quotes: rows }
  }, waitSpan("RfqStore.listQuotes"))

  const quotesOf = Effect.fnUntraced(function* (rfqId: number) {
    return yield* Effect.flatMap(
      sql<DocRow>`SELECT ${sql.literal(quoteDocument)} FROM quotes q WHERE q.rfq_id = ${rfqId} ORDER BY q.id`,
      readAll(readQuote)
    ).pipe(Effect.orDie)
  }, waitSpan("RfqStore.quotesOf"))

  const quote = Effect.fnUntraced(function* (id: number) {
    const rows = yield* Effect.flatMap(
      sql<DocRow>`SELECT ${sql.literal(quoteDocument)} FROM quotes q WHERE q.id = ${id}`,
      readAll(readQuote)
    ).pipe(Effect.orDie)
    return Option.fromNullable(rows[0])
  }, waitSpan("RfqStore.quote"))

  const rfqOfQuote = Effect.fnUntraced(function* (id: number) {
    const rows = yield* sql<{
      rfqId: number | string
    }>`SELECT rfq_id AS "rfqId" FROM quotes WHERE id = ${id}`.pipe(Effect.orDie)
    return Option.map(Option.fromNullable(rows[0]), (row) => Number(row.rfqId))
  }, waitSpan("RfqStore.rfqOfQuote"))

  const trades = Effect.fnUntraced(function* (rfqId: number) {
    const rows = yield* Effect.flatMap(
      sql<DocRow>`SELECT ${sql.literal(tradeDocument)} FROM trades t JOIN quotes q ON q.id = t.quote_id
      WHERE t.rfq_id = ${rfqId} AND t.status <> 'failed'`,
      readAll(readTrade)
    ).pipe(Effect.orDie)
    return Option.fromNullable(rows[0])
  }, waitSpan("RfqStore.trades"))

  return { list, listQuotes, quotesOf, quote, rfqOfQuote, trades }
}

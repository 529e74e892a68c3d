import type * as SqlClient from "@effect/sql/SqlClient"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Option } from "effect"
import type { PrintedTrade, TapeFilter, ListPosition } from "../rfq/RfqStore.js"
import { waitSpan } from "../services/WaitProbe.js"
import { windowAndPage } from "./ListWindow.js"
import { quoteDocument, readQuote, readRfq, readTrade, rfqDocument, tradeDocument } from "./RfqRows.js"

/**
 * The public block-trade tape's reads (issue 16), part of the SQL RFQ store: printed trades (status
 * `filled` or `filledPartial`; a wholly failed trade never prints) newest first by
 * `(created_at, id)`, over the partial index `trades_tape_idx`. Each row is read as the same three
 * records the engine holds (RFQ, trade, accepted quote), so the tape renders from one function for
 * REST and the live channel alike (`rfq/TradeTapeView.ts`).
 */

type TapeRow = { readonly rfqDoc: string; readonly tradeDoc: string; readonly quoteDoc: string }

export const makeTradeTape = (sql: SqlClient.SqlClient) => {
  const printed = sql`t.status IN ('filled', 'filledPartial')`

  const publicTrades = Effect.fnUntraced(function* (filter: TapeFilter) {
    const where: Array<Fragment> = [printed]
    if (filter.baseCurrency !== undefined) where.push(sql`rb.base_currency = ${filter.baseCurrency}`)
    const page = windowAndPage(sql, "t", filter, where)
    // The documents' own aliases (`r`, `q`) live inside their subqueries; the outer RFQ is `rb`.
    const [counted, rows] = yield* Effect.all(
      [
        sql<{ total: number }>`SELECT count(*) AS total FROM trades t JOIN rfqs rb ON rb.id = t.rfq_id
          WHERE ${sql.and(where)}`,
        sql<TapeRow>`SELECT
            (SELECT ${sql.literal(rfqDocument)} FROM rfqs r WHERE r.id = t.rfq_id) AS "rfqDoc",
            (SELECT ${sql.literal(tradeDocument)} FROM quotes q WHERE q.id = t.quote_id) AS "tradeDoc",
            (SELECT ${sql.literal(quoteDocument)} FROM quotes q WHERE q.id = t.quote_id) AS "quoteDoc"
          FROM trades t JOIN rfqs rb ON rb.id = t.rfq_id
          WHERE ${sql.and(page)}
          ORDER BY t.created_at DESC, t.id DESC LIMIT ${filter.limit}`
      ],
      { concurrency: "unbounded" }
    ).pipe(Effect.orDie)
    const trades = rows.map(
      (row): PrintedTrade => ({
        rfq: readRfq(row.rfqDoc).rfq,
        trade: readTrade(row.tradeDoc),
        quote: readQuote(row.quoteDoc)
      })
    )
    return { total: Number(counted[0]?.total ?? 0), trades }
  }, waitSpan("RfqStore.publicTrades"))

  const publicTradeAt = Effect.fnUntraced(function* (tradeId: number) {
    const rows = yield* sql<{ createdAt: number; id: number }>`
      SELECT t.created_at AS "createdAt", t.id FROM trades t WHERE t.id = ${tradeId} AND ${printed}`.pipe(
      Effect.orDie
    )
    const row = rows[0]
    return row === undefined
      ? Option.none<ListPosition>()
      : Option.some<ListPosition>({ createdAt: Number(row.createdAt), id: Number(row.id) })
  }, waitSpan("RfqStore.publicTradeAt"))

  return { publicTrades, publicTradeAt }
}

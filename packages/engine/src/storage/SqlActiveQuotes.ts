import * as SqlClient from "@effect/sql/SqlClient"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Layer, Option } from "effect"
import { type ActiveQuote, ActiveQuotes, type ActiveQuotesService } from "../engine/ActiveQuotes.js"

/**
 * The active-quote index read from the `quotes` table, for several hosts on one database: a quote
 * command may land on any host while the RFQ's actor (and the quote) lives on another, so no host's
 * memory can answer. Each answer is what the database holds now, the committed steps of every host.
 *
 * Labels: `reserveLabel` answers from the table (free unless another active quote of the desk
 * holds it) and reserves nothing; the unique index `quotes_maker_active_label_key` decides for real
 * when the step writes the quote, and a step refused by it fails with `LabelTaken` (see
 * `RfqStore.applyStep`), so two RFQs quoting one label at once on two hosts never both get it.
 * `releaseLabel`, `reindex` and `release` have nothing to do: each step's statement is the index's
 * update.
 *
 * Only active quotes are read, without the RFQ: a deleted RFQ was cancelled first, which closed its
 * quotes, so an active quote's RFQ is never deleted. Indexes: the primary key (`find`), the label
 * key (`labelHolder`, `reserveLabel`), `quotes_maker_active_idx` (`ofDesk`).
 *
 * SQL failures are defects, as in the RFQ store.
 */

interface ActiveQuoteRow {
  readonly id: number | string
  readonly rfqId: number | string
  readonly deskId: number | string
  readonly userId: number | string
  readonly label: string | null
}

const activeQuoteOf = (row: ActiveQuoteRow): ActiveQuote => ({
  id: Number(row.id),
  rfqId: Number(row.rfqId),
  deskId: Number(row.deskId),
  userId: Number(row.userId),
  ...(row.label === null ? {} : { label: row.label })
})

export const makeSqlActiveQuotes: Effect.Effect<ActiveQuotesService, never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql) => {
    const activeWhere = (where: ReadonlyArray<Fragment>) =>
      sql<ActiveQuoteRow>`SELECT id, rfq_id AS "rfqId", maker_desk_id AS "deskId",
        maker_user_id AS "userId", label
      FROM quotes WHERE ${sql.and([sql`status = 'active'`, ...where])} ORDER BY id`.pipe(
        Effect.map((rows) => rows.map(activeQuoteOf)),
        Effect.orDie
      )

    /** The active quote of the desk holding `label`, other than `except`. */
    const holderOf = (deskId: number, label: string, except?: number) =>
      sql<{ id: number | string }>`SELECT id FROM quotes WHERE ${sql.and([
        sql`maker_desk_id = ${deskId}`,
        sql`label = ${label}`,
        sql`status = 'active'`,
        ...(except === undefined ? [] : [sql`id <> ${except}`])
      ])}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => Number(row.id))),
        Effect.orDie
      )

    const service: ActiveQuotesService = {
      find: (quoteId) =>
        Effect.map(activeWhere([sql`id = ${quoteId}`]), (quotes) => Option.fromNullable(quotes[0])),
      labelHolder: (deskId, label) => holderOf(deskId, label),
      reserveLabel: (deskId, label, quoteId) => Effect.map(holderOf(deskId, label, quoteId), Option.isNone),
      releaseLabel: () => Effect.void,
      ofDesk: (deskId, filter) =>
        activeWhere([
          sql`maker_desk_id = ${deskId}`,
          ...(filter?.userId === undefined ? [] : [sql`maker_user_id = ${filter.userId}`]),
          ...(filter?.rfqId === undefined ? [] : [sql`rfq_id = ${filter.rfqId}`])
        ]),
      reindex: () => Effect.void,
      release: () => Effect.void
    }
    return service
  }
)

/** `ActiveQuotes` over the `SqlClient` in context: the index for several hosts on one database. */
export const ActiveQuotesSql: Layer.Layer<ActiveQuotes, never, SqlClient.SqlClient> = Layer.effect(
  ActiveQuotes,
  makeSqlActiveQuotes
)

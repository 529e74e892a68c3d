import type * as SqlClient from "@effect/sql/SqlClient"
import type { Fragment } from "@effect/sql/Statement"
import type { ListPosition } from "../rfq/RfqStore.js"

/** What every list filter shares: a window on `created_at` and the cursor's position. */
export interface ListWindowFilter {
  readonly startTime?: number | undefined
  readonly endTime?: number | undefined
  readonly after?: ListPosition | undefined
}

/**
 * The lists' one rule for time and paging, newest first by `(created_at, id)`: `where` narrowed to
 * the filter's window (both ends exclusive), and the page's conditions, which add the keyset
 * condition after the cursor. The count is taken over `where`, the page over what this answers.
 * `alias` is the listed table's alias in the query (`r`, `q`, `t`), never a caller's text.
 */
export const windowAndPage = (
  sql: SqlClient.SqlClient,
  alias: "r" | "q" | "t",
  filter: ListWindowFilter,
  where: Array<Fragment>
): ReadonlyArray<Fragment> => {
  const table = sql.literal(alias)
  if (filter.startTime !== undefined) where.push(sql`${table}.created_at > ${filter.startTime}`)
  if (filter.endTime !== undefined) where.push(sql`${table}.created_at < ${filter.endTime}`)
  return filter.after === undefined
    ? where
    : [...where, sql`(${table}.created_at, ${table}.id) < (${filter.after.createdAt}, ${filter.after.id})`]
}

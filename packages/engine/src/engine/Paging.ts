import { Effect, Option } from "effect"
import { type ApiError, apiError } from "../domain/Errors.js"
import type { ListPosition } from "../rfq/RfqStore.js"
import type { Json } from "../rfq/RfqView.js"

/**
 * How every list pages (RFQs, a desk's quotes, the public tape): newest first by the keyset
 * `(createdAt, id)`; a cursor is the id of the previous page's last element; the last page's
 * cursor is 0. Each list decides only which ids are cursors for the caller.
 */

/** One page of a list and the cursor of the next (0 on the last page). */
export interface Page {
  totalResults: number
  cursor: number
  results: Array<Json>
}

/** The one answer to a list cursor the caller could not have received (issue 12). */
export const notACursor = (cursor: number): ApiError =>
  apiError("invalidRequest", `cursor: ${cursor} is not a cursor of this list`)

/**
 * Where a page starts: nothing for the first page (no cursor, or 0), else the cursor's position as
 * `positionOf` finds it. Every id it does not find, existing or not, gets the same 400, so a cursor
 * tells nothing of what the caller may not see.
 */
export const pageStart = <E, R>(
  cursor: number | undefined,
  positionOf: (cursor: number) => Effect.Effect<Option.Option<ListPosition>, E, R>
): Effect.Effect<ListPosition | undefined, ApiError | E, R> =>
  cursor === undefined || cursor === 0
    ? Effect.succeed(undefined)
    : Effect.flatMap(
        positionOf(cursor),
        Option.match({
          onNone: () => Effect.fail(notACursor(cursor)),
          onSome: (position) => Effect.succeed(position)
        })
      )

/**
 * A page out of `limit + 1` elements read: the one past the page only says that another page
 * follows, and the next cursor is then the id of the page's last element.
 */
export const cutPage = <A>(
  read: ReadonlyArray<A>,
  limit: number,
  idOf: (element: A) => number
): { readonly shown: ReadonlyArray<A>; readonly cursor: number } => {
  const shown = read.slice(0, limit)
  return { shown, cursor: read.length > limit ? idOf(shown[shown.length - 1]!) : 0 }
}

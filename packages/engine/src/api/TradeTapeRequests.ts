import { Schema } from "effect"
import { BaseCurrencyField } from "./Fields.js"
import { named, object, optional } from "./Objects.js"
import { LimitParam, NonNegativeIntParam, TimestampParam } from "./Params.js"

/**
 * The query of the public block-trade tape (issue 16), `GET /v1/trades/public`. Pages like the
 * other lists (`Queries.ts`): `cursor` is the `cursor` of the previous page (the id of its last
 * print), `limit` 1 to 1000 (default 100), `startTime`/`endTime` exclusive bounds on `createdAt`.
 * Unlike the older lists, a range that cannot hold any trade (`startTime` not before `endTime`) is
 * refused rather than answered with an empty page: it is always a client's mistake.
 */
export const TapeCursorParam = NonNegativeIntParam.annotations({
  description:
    "The `cursor` of the previous page (0 or absent: the first page). Any other value, the id of no printed trade, is 400."
})

export const PublicTradesQuery = object({
  baseCurrency: optional(
    BaseCurrencyField.annotations({ description: "Only trades of this base currency." })
  ),
  startTime: optional(TimestampParam.annotations({ description: "Traded after this time (unix ms)." })),
  endTime: optional(TimestampParam.annotations({ description: "Traded before this time (unix ms)." })),
  cursor: optional(TapeCursorParam),
  limit: Schema.optionalWith(LimitParam, { default: () => 100, exact: true })
})
  .pipe(
    Schema.filter((q) =>
      q.startTime !== undefined && q.endTime !== undefined && q.startTime >= q.endTime
        ? { path: ["endTime"], message: `must be after startTime (${q.startTime})` }
        : undefined
    )
  )
  .annotations(named("PublicTradesQuery", "Query of `GET /trades/public`, the public block-trade tape."))
export type PublicTradesQuery = typeof PublicTradesQuery.Type

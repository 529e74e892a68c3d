import { Schema } from "effect"
import type { RfqStatus } from "../domain/Primitives.js"
import { BaseCurrencyField, ExchangeCodeField, literalField, RoleField, textField } from "./Fields.js"
import { showValue } from "./Messages.js"
import { named, object, optional } from "./Objects.js"
import { LimitParam, NonNegativeIntParam, RfqIdParam, TimestampParam } from "./Params.js"

/**
 * Query-string schemas. Values arrive as strings from a URL or as JSON values from JSON-RPC params;
 * both are accepted (see `integerParam`). A repeated query key is the host's to resolve before
 * decoding (one string per key).
 */

/** The list filter's statuses: the RFQ statuses plus `traded` (= filled or filledPartial). */
export const RfqStatusFilter = Schema.Literal(
  "open",
  "traded",
  "filled",
  "filledPartial",
  "cancelled",
  "expired"
)
export type RfqStatusFilter = typeof RfqStatusFilter.Type

/** Every RFQ status is a filter value too (checked by the compiler). */
export const statusIsFilter = (status: RfqStatus): RfqStatusFilter => status

/**
 * `status=open,filled` (or `["open","filled"]` in JSON-RPC): each element must be a known status;
 * duplicates collapse. An empty value is the spec's `empty value`.
 */
export const StatusListParam = Schema.transform(
  Schema.Union(textField(200), Schema.Array(Schema.String)).annotations({
    message: (issue) => ({
      message: `expected a comma-separated list of statuses, got ${showValue(issue.actual)}`,
      override: typeof issue.actual !== "string" && !Array.isArray(issue.actual)
    })
  }),
  Schema.Array(Schema.String),
  {
    strict: true,
    decode: (u) => (typeof u === "string" ? u.split(",") : u),
    encode: (list) => list.join(",")
  }
)
  .pipe(
    Schema.compose(
      Schema.Array(literalField(RfqStatusFilter)).pipe(
        Schema.minItems(1, { message: () => "must name at least one status" })
      )
    ),
    Schema.transform(Schema.Array(RfqStatusFilter), {
      strict: true,
      decode: (list) => [...new Set(list)],
      encode: (list) => list
    })
  )
  .annotations({
    // Both forms are accepted; the OpenAPI document publishes a query parameter's array form
    // (`style: form, explode: false`, i.e. `status=open,filled`).
    jsonSchema: {
      anyOf: [
        { type: "string", description: "Comma-separated, e.g. `open,filled`." },
        { type: "array", items: { type: "string", enum: [...RfqStatusFilter.literals] }, minItems: 1 }
      ],
      description: `Statuses to list, among ${RfqStatusFilter.literals.join(", ")}.`
    }
  })

/**
 * The response's `cursor` is an integer (0 when there is no next page), so a request cursor is the
 * string of such an integer. What it points at is the engine's (a keyset position); a value the
 * caller could not have received is refused like one that names nothing.
 */
export const CursorParam = NonNegativeIntParam.annotations({
  description:
    "The `cursor` of the previous page (0 or absent: the first page). An id of no RFQ (quote) the caller can see is 400."
})

const pageFields = {
  startTime: optional(TimestampParam.annotations({ description: "Created after this time (unix ms)." })),
  endTime: optional(TimestampParam.annotations({ description: "Created before this time (unix ms)." })),
  cursor: optional(CursorParam),
  limit: Schema.optionalWith(LimitParam, { default: () => 100, exact: true })
}

export const ListRfqsQuery = object({
  ...pageFields,
  role: optional(RoleField.annotations({ description: "Only RFQs where the caller has this role." })),
  baseCurrency: optional(BaseCurrencyField),
  status: optional(StatusListParam)
}).annotations(named("ListRfqsQuery", "Query of `GET /rfq`."))
export type ListRfqsQuery = typeof ListRfqsQuery.Type

export const ListQuotesQuery = object({
  rfqId: optional(RfqIdParam.annotations({ description: "Only quotes of this RFQ." })),
  ...pageFields
}).annotations(named("ListQuotesQuery", "Query of `GET /rfq/quotes`."))
export type ListQuotesQuery = typeof ListQuotesQuery.Type

export const InstrumentKindFilter = Schema.Literal("option", "future")
export type InstrumentKindFilter = typeof InstrumentKindFilter.Type

export const InstrumentsQuery = object({
  exchange: ExchangeCodeField,
  baseCurrency: BaseCurrencyField,
  kind: optional(
    literalField(InstrumentKindFilter).annotations({
      description: "`option`, or `future` (futures, perpetuals, spreads)."
    })
  )
}).annotations(named("InstrumentsQuery", "Query of `GET /exchange/instruments`."))
export type InstrumentsQuery = typeof InstrumentsQuery.Type

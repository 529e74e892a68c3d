import { Schema } from "effect"
import { DecimalField } from "./Fields.js"
import { named } from "./Objects.js"

export { optional } from "./Objects.js"

/**
 * Field schemas of responses (encode side). Decimals encode to JSON numbers at the edge; encoding
 * fails (rather than emitting `null`) if a decimal does not fit a finite JSON number.
 */

export const Decimal = DecimalField
export const Int = Schema.Int
export const Count = Schema.Int.pipe(Schema.nonNegative()).annotations({ description: "A count." })
export const Timestamp = Schema.Int.pipe(Schema.nonNegative()).annotations({
  description: "Unix time in ms."
})
export const Text = Schema.String

/** Response objects: a struct with a name in the generated document. */
export const responseObject = <F extends Schema.Struct.Fields>(
  identifier: string,
  description: string,
  fields: F
) => Schema.Struct(fields).annotations(named(identifier, description))

/** `{totalResults, cursor, results}`: `cursor` is 0 when there is no next page. */
export const pageOf = <A, I>(identifier: string, description: string, item: Schema.Schema<A, I>) =>
  responseObject(identifier, description, {
    totalResults: Count.annotations({ description: "Number of matches over all pages." }),
    cursor: Count.annotations({ description: "Cursor of the next page; 0 when there is none." }),
    results: Schema.Array(item)
  })

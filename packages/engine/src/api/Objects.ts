import { Schema } from "effect"
import type { SettlementOption } from "../domain/Primitives.js"
import { showValue } from "./Messages.js"

/** Containers of the API's JSON: arrays, objects, settlement-option maps, cross-element checks. */

/** What a `Schema.filter` predicate returns to point at a field. */
export interface FilterIssue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** An array with readable type and size messages. */
export const arrayOf = <A, I>(
  item: Schema.Schema<A, I>,
  size: { readonly min: number; readonly max: number }
) =>
  Schema.Array(item)
    .annotations({ message: (issue) => `expected an array, got ${showValue(issue.actual)}` })
    .pipe(
      Schema.minItems(size.min, {
        message: () => (size.min === 1 ? "must not be empty" : `must have at least ${size.min} elements`)
      }),
      Schema.maxItems(size.max, { message: () => `must have at most ${size.max} elements` })
    )

/** A JSON object with a readable "expected an object" message. */
export const object = <F extends Schema.Struct.Fields>(fields: F) =>
  Schema.Struct(fields).annotations({
    message: (issue) => `expected an object, got ${showValue(issue.actual)}`
  })

/**
 * Names a schema in the generated document (apply once, on the outermost schema). The `jsonSchema`
 * copy keeps title and description on refined objects, whose own annotations JSONSchema.make skips.
 */
export const named = (identifier: string, description: string) => ({
  identifier,
  title: identifier,
  description,
  jsonSchema: { title: identifier, description }
})

/**
 * A map keyed by settlement option. Unlike request objects, an unknown key here is refused
 * (a typo such as `"dbt"` would otherwise silently drop makers or accounts), and `__proto__` is
 * just an unknown key. The published schema says so (`additionalProperties: false`).
 */
export const settlementOptionMap = <S extends Schema.Schema.Any>(value: S) =>
  Schema.Struct({
    BULL: Schema.optionalWith(value, { exact: true }),
    DBT: Schema.optionalWith(value, { exact: true })
  }).annotations({
    parseOptions: { onExcessProperty: "error" },
    jsonSchema: { additionalProperties: false },
    message: (issue) => `expected an object keyed by settlement option, got ${showValue(issue.actual)}`
  })

/** Keys of a settlement-option map that are present. */
export const mapKeys = (map: { readonly BULL?: unknown; readonly DBT?: unknown }): Array<SettlementOption> =>
  (["BULL", "DBT"] as const).filter((k) => map[k] !== undefined)

/** Paths of the elements whose `keyOf` repeats an earlier element's. */
export const duplicateIssues = <A>(
  items: ReadonlyArray<A>,
  keyOf: (a: A) => string,
  field: string
): Array<FilterIssue> => {
  const seen = new Map<string, number>()
  const issues: Array<FilterIssue> = []
  items.forEach((item, i) => {
    const key = keyOf(item)
    const first = seen.get(key)
    if (first === undefined) seen.set(key, i)
    else issues.push({ path: field === "" ? [i] : [i, field], message: `duplicates element ${first}` })
  })
  return issues
}

export const optional = <S extends Schema.Schema.Any>(schema: S) =>
  Schema.optionalWith(schema, { exact: true })

import * as PgTypes from "pg-types"

/**
 * How both clients turn PostgreSQL text values into JavaScript, so that a repository reads the
 * same shapes from PGlite and from PostgreSQL:
 *
 * - `numeric` stays a string (exact; convert with `BigDecimal` / `Schema.BigDecimal`);
 * - `int8` (bigserial ids, bigint ms timestamps, `count(*)`) becomes a number, or a `bigint` only
 *   beyond ±2^53 where a number would round (this is also PGlite's own rule);
 * - `numeric[]` stays an array of strings, `int8[]` an array of numbers.
 */
export const parseInt8 = (text: string): number | bigint => {
  const value = Number(text)
  return Number.isSafeInteger(value) ? value : BigInt(text)
}

const oids = {
  int8: 20,
  int8Array: 1016,
  numeric: 1700,
  numericArray: 1231
} as const

type NestedArray<A> = ReadonlyArray<A | null | NestedArray<A>>

const mapNested = <A, B>(values: NestedArray<A>, f: (a: A) => B): Array<unknown> =>
  values.map((value) => (value === null ? null : Array.isArray(value) ? mapNested(value, f) : f(value as A)))

const identity = (text: string): string => text

// pg's bundled pg-types 2 parses numeric[] as floats; pg-types 4 (the one @effect/sql-pg depends on)
// keeps strings, and we pin the int8 rules on top of it.
const parseInt8Array = (text: string): Array<unknown> =>
  mapNested(PgTypes.getTypeParser(oids.int8Array, "text")(text) as NestedArray<string>, parseInt8)
const parseNumericArray = (text: string): unknown => PgTypes.getTypeParser(oids.numericArray, "text")(text)

/** The `types` option of node-postgres (`PgClient.layer({ types })`). */
export const pgTypeParsers = {
  getTypeParser: (oid: number, format?: "text" | "binary"): ((value: any) => unknown) => {
    if (format === "binary") return PgTypes.getTypeParser(oid, "binary")
    switch (oid) {
      case oids.int8:
        return parseInt8
      case oids.int8Array:
        return parseInt8Array
      case oids.numeric:
        return identity
      case oids.numericArray:
        return parseNumericArray
      default:
        return PgTypes.getTypeParser(oid, "text")
    }
  }
}

/** The `parsers` option of PGlite; its array parsers derive from these element parsers. */
export const pgliteParsers: Record<number, (value: string) => unknown> = {
  [oids.int8]: parseInt8,
  [oids.numeric]: identity
}

import { BigDecimal } from "effect"
import { decString } from "../rfq/Dec.js"
import { cutText } from "../domain/TextCut.js"

/**
 * A small, strict reader for the JSON documents the RFQ store selects (one per row). It checks
 * every field it returns, like a schema would, but at a fraction of the cost: restoring 100k open
 * RFQs decodes about half a million documents, and `Schema.decodeUnknown` measured ~5 µs per row
 * here, against well under 1 µs for these checks. A mismatch throws: the row is corrupt or the
 * SQL and this reader disagree, and the store turns it into a defect.
 */
export class RowError extends Error {
  override readonly name = "RowError"
}

export type Doc = Readonly<Record<string, unknown>>

const show = (u: unknown): string => {
  const text = JSON.stringify(u)
  return text === undefined ? String(u) : cutText(text, 80)
}

const fail = (path: string, expected: string, got: unknown): never => {
  throw new RowError(`${path}: expected ${expected}, got ${show(got)}`)
}

export const parseDoc = (text: unknown, path: string): Doc => {
  if (typeof text !== "string") return fail(path, "a JSON document", text)
  return doc(JSON.parse(text), path)
}

export const doc = (u: unknown, path: string): Doc =>
  typeof u === "object" && u !== null && !Array.isArray(u) ? (u as Doc) : fail(path, "an object", u)

export const list = (u: unknown, path: string): ReadonlyArray<unknown> =>
  Array.isArray(u) ? u : fail(path, "an array", u)

/** A JSON array that SQL aggregates produce as null when empty. */
export const listOrEmpty = (u: unknown, path: string): ReadonlyArray<unknown> =>
  u === null ? [] : list(u, path)

export const str = (d: Doc, key: string, path: string): string => {
  const v = d[key]
  return typeof v === "string" ? v : fail(`${path}.${key}`, "a string", v)
}

export const optStr = (d: Doc, key: string, path: string): string | undefined => {
  const v = d[key]
  return v === null || v === undefined
    ? undefined
    : typeof v === "string"
      ? v
      : fail(`${path}.${key}`, "a string", v)
}

export const int = (d: Doc, key: string, path: string): number => {
  const v = d[key]
  return typeof v === "number" && Number.isSafeInteger(v) ? v : fail(`${path}.${key}`, "an integer", v)
}

export const optInt = (d: Doc, key: string, path: string): number | undefined =>
  d[key] === null || d[key] === undefined ? undefined : int(d, key, path)

export const bool = (d: Doc, key: string, path: string): boolean => {
  const v = d[key]
  return typeof v === "boolean" ? v : fail(`${path}.${key}`, "a boolean", v)
}

/** A reader of one of `values`: `(doc, key, path)` for a field, `.value(u, path)` for a bare value. */
export const literal = <A extends string>(values: ReadonlyArray<A>) => {
  const value = (u: unknown, path: string): A =>
    typeof u === "string" && (values as ReadonlyArray<string>).includes(u)
      ? (u as A)
      : fail(path, values.join(" | "), u)
  return Object.assign((d: Doc, key: string, path: string): A => value(d[key], `${path}.${key}`), { value })
}

export const string = (u: unknown, path: string): string =>
  typeof u === "string" ? u : fail(path, "a string", u)

const canonical = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]*[1-9])?$/

/** A decimal as text (a numeric column cast to text, or a string in a jsonb document), canonical. */
export const decimal = (d: Doc, key: string, path: string): string => {
  const v = d[key]
  if (typeof v !== "string") return fail(`${path}.${key}`, "a decimal string", v)
  if (canonical.test(v) && v !== "-0") return v
  const parsed = BigDecimal.fromString(v)
  return parsed._tag === "Some" ? decString(parsed.value) : fail(`${path}.${key}`, "a decimal string", v)
}

export const optDecimal = (d: Doc, key: string, path: string): string | undefined =>
  d[key] === null || d[key] === undefined ? undefined : decimal(d, key, path)

/** Keys of a partial record over `keys`, each value read by `read`; absent keys stay absent. */
export const partialRecord = <K extends string, A>(
  u: unknown,
  keys: ReadonlyArray<K>,
  path: string,
  read: (value: unknown, path: string) => A
): Partial<Record<K, A>> => {
  const d = doc(u, path)
  const out: Partial<Record<K, A>> = {}
  for (const key of Object.keys(d)) {
    if (!(keys as ReadonlyArray<string>).includes(key)) fail(path, `keys ${keys.join(" | ")}`, key)
    out[key as K] = read(d[key], `${path}.${key}`)
  }
  return out
}

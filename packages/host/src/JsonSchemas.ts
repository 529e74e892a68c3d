import { JSONSchema, type Schema } from "effect"

/**
 * JSON Schema of the very Effect schemas that decode requests and encode answers, for the OpenAPI
 * and AsyncAPI documents. Effect's generator does the walk; this module decides what the documents
 * promise about open and closed objects, and keeps generators' output exact:
 *
 * - An object the decoder lets pass with unknown keys (every request object: they are ignored, not
 *   refused, `Decode.ts`) leaves `additionalProperties` out: JSON Schema's default (open) says what
 *   the service does, and generators then type it exactly, so a misspelt field fails to compile. An
 *   explicit `additionalProperties: true` would make them add an index signature that accepts any
 *   key; that is what Effect's "allow" strategy writes, and it is removed here.
 * - An object the decoder refuses unknown keys of (the settlement-option maps, `Objects.ts`)
 *   carries `additionalProperties: false`, from the schema's own `jsonSchema` annotation next to its
 *   `onExcessProperty: "error"`; a test holds the two together by decoding with an added key.
 * - Titles Effect derives from refinements (`greaterThan(0)`, `maxItems(20)`) are dropped: they
 *   would become type names or headings in generated code; a named schema keeps its title.
 * - Named schemas become `$ref`s to `#/components/schemas/<name>`; `components` gives only those
 *   reachable from a document, so no unused component is published.
 */

export type Json = Record<string, unknown>

export type SchemaTarget = "openApi3.1" | "jsonSchema7"

/** The top-level object of an input, inlined even when the schema is named. */
export interface InputObject {
  readonly properties: Readonly<Record<string, Json>>
  readonly required: ReadonlyArray<string>
  /** The rest of the object's keywords (description, additionalProperties, …). */
  readonly keywords: Json
}

export interface JsonSchemas {
  /** The schema as JSON Schema, named parts as `$ref`s. */
  readonly of: (schema: Schema.Schema<any, any, never>) => Json
  /** The input's top-level object, or undefined when it is not one object (a union). */
  readonly objectOf: (schema: Schema.Schema<any, any, never>) => InputObject | undefined
  /** Adds (or replaces) a named schema and answers its `$ref`. */
  readonly define: (name: string, schema: Json) => Json
  /** The named schemas `roots` reach, directly or through other named schemas, by name. */
  readonly components: (roots: unknown) => Record<string, Json>
}

export const refPrefix = "#/components/schemas/"

const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Effect's placeholders for `Schema.Struct({})`, `unknown` and `any`. */
const placeholderIds: Record<string, Json> = {
  "/schemas/%7B%7D": { type: "object" },
  "/schemas/object": { type: "object" },
  "/schemas/unknown": {},
  "/schemas/any": {}
}

/** A cleaned deep copy (see the module comment); `keepTitle` for a named schema's own title. */
const clean = (node: unknown, keepTitle: boolean): unknown => {
  if (Array.isArray(node)) return node.map((item) => clean(item, false))
  if (!isRecord(node)) return node
  const placeholder = typeof node.$id === "string" ? placeholderIds[node.$id] : undefined
  if (placeholder !== undefined) {
    const { $id: _id, anyOf: _anyOf, ...annotations } = node
    return clean({ ...placeholder, ...annotations }, keepTitle)
  }
  const out: Json = {}
  for (const [key, value] of Object.entries(node)) {
    // Only a struct's: a record's `true` (any value under any key) says what its type is.
    if (key === "additionalProperties" && value === true && isRecord(node.properties)) continue
    if (key === "required" && Array.isArray(value) && value.length === 0) continue
    if (key === "title" && !keepTitle) continue
    // Values of these keywords are data, not schemas: copied as they are.
    if (key === "enum" || key === "const" || key === "examples" || key === "default" || key === "required") {
      out[key] = value
      continue
    }
    if (key === "properties" && isRecord(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, s]) => [name, clean(s, false)]))
      continue
    }
    out[key] = clean(value, false)
  }
  return out
}

/** Every `$ref` name under `node`. */
const refsIn = (node: unknown, found: Set<string>): void => {
  if (Array.isArray(node)) {
    for (const item of node) refsIn(item, found)
    return
  }
  if (!isRecord(node)) return
  const ref = node.$ref
  if (typeof ref === "string" && ref.startsWith(refPrefix)) found.add(decodeRef(ref.slice(refPrefix.length)))
  for (const value of Object.values(node)) refsIn(value, found)
}

/** JSON Pointer unescaping of one reference token (`~1` is `/`, `~0` is `~`). */
const decodeRef = (token: string): string => token.replaceAll("~1", "/").replaceAll("~0", "~")

export const makeJsonSchemas = (target: SchemaTarget): JsonSchemas => {
  const definitions: Record<string, JSONSchema.JsonSchema7> = {}
  const defined: Record<string, Json> = {}

  const of = (schema: Schema.Schema<any, any, never>): Json =>
    clean(
      JSONSchema.fromAST(schema.ast, {
        definitions,
        definitionPath: refPrefix,
        target,
        additionalPropertiesStrategy: "allow"
      }),
      false
    ) as Json

  const named = (name: string): Json | undefined => {
    const own = defined[name]
    if (own !== undefined) return own
    const raw = definitions[name]
    return raw === undefined ? undefined : (clean(raw, true) as Json)
  }

  /** Follows `$ref`s and a lone `allOf` wrapper (Effect's way of annotating a reference). */
  const resolve = (node: Json): Json => {
    if (typeof node.$ref === "string" && node.$ref.startsWith(refPrefix)) {
      const target = named(decodeRef(node.$ref.slice(refPrefix.length)))
      return target === undefined ? node : resolve(target)
    }
    const allOf = node.allOf
    if (Array.isArray(allOf) && allOf.length === 1 && isRecord(allOf[0])) {
      const { allOf: _allOf, ...annotations } = node
      return { ...resolve(allOf[0]), ...annotations }
    }
    return node
  }

  const objectOf = (schema: Schema.Schema<any, any, never>): InputObject | undefined => {
    const resolved = resolve(of(schema))
    if (resolved.type !== "object") return undefined
    const { properties, required, type: _type, ...keywords } = resolved
    return {
      properties: isRecord(properties) ? (properties as Record<string, Json>) : {},
      required: Array.isArray(required) ? (required as Array<string>) : [],
      keywords
    }
  }

  const define = (name: string, schema: Json): Json => {
    defined[name] = schema
    return { $ref: refPrefix + name.replaceAll("~", "~0").replaceAll("/", "~1") }
  }

  const components = (roots: unknown): Record<string, Json> => {
    const reached = new Set<string>()
    const pending = new Set<string>()
    refsIn(roots, pending)
    while (pending.size > 0) {
      const [name] = pending
      pending.delete(name!)
      if (reached.has(name!)) continue
      reached.add(name!)
      const found = new Set<string>()
      refsIn(named(name!), found)
      for (const next of found) if (!reached.has(next)) pending.add(next)
    }
    return Object.fromEntries(
      [...reached]
        .sort()
        .map((name) => [name, named(name)] as const)
        .filter((entry): entry is readonly [string, Json] => entry[1] !== undefined)
    )
  }

  return { of, objectOf, define, components }
}

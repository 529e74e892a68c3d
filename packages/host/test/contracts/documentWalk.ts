/** Reading the generated documents in tests: JSON pointers, `$ref`s, schema navigation. */

export type Json = Record<string, unknown>

export const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The value at a local JSON pointer (`#/components/schemas/Rfq`), or undefined. */
export const atPointer = (document: unknown, pointer: string): unknown => {
  if (!pointer.startsWith("#")) return undefined
  let node: unknown = document
  for (const raw of pointer.slice(1).split("/").slice(1)) {
    const token = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~")
    if (!isRecord(node) && !Array.isArray(node)) return undefined
    node = (node as Record<string, unknown>)[token]
  }
  return node
}

/** Every `$ref` value under `node`, with where it was found. */
export const refsOf = (node: unknown, at = "#"): Array<{ readonly ref: string; readonly at: string }> => {
  if (Array.isArray(node)) return node.flatMap((item, i) => refsOf(item, `${at}/${i}`))
  if (!isRecord(node)) return []
  const own = typeof node.$ref === "string" ? [{ ref: node.$ref, at }] : []
  return [...own, ...Object.entries(node).flatMap(([k, v]) => refsOf(v, `${at}/${k}`))]
}

/** Follows `$ref`s (and a lone `allOf`) to the schema itself. */
export const resolveSchema = (document: unknown, schema: unknown): Json => {
  let node = schema
  for (let hops = 0; hops < 20; hops++) {
    if (isRecord(node) && typeof node.$ref === "string") node = atPointer(document, node.$ref)
    else if (isRecord(node) && Array.isArray(node.allOf) && node.allOf.length === 1) node = node.allOf[0]
    else break
  }
  if (!isRecord(node)) throw new Error(`not a schema: ${JSON.stringify(schema)}`)
  return node
}

/**
 * The object schemas met along the object nodes of `value`: for each path to an object inside
 * `value` (the root included), the schema that describes it.
 */
export const objectSchemas = (
  document: unknown,
  schema: unknown,
  value: unknown,
  path: ReadonlyArray<string | number> = []
): Array<{ readonly path: ReadonlyArray<string | number>; readonly schema: Json }> => {
  const resolved = resolveSchema(document, schema)
  if (Array.isArray(value)) {
    return value.flatMap((item, i) => objectSchemas(document, resolved.items, item, [...path, i]))
  }
  if (!isRecord(value)) return []
  const branches = Array.isArray(resolved.anyOf)
    ? resolved.anyOf
    : Array.isArray(resolved.oneOf)
      ? resolved.oneOf
      : undefined
  if (branches !== undefined) {
    const fitting = branches
      .map((b) => resolveSchema(document, b))
      .find((b) => isRecord(b.properties) && Object.keys(value).every((k) => k in (b.properties as Json)))
    if (fitting === undefined) throw new Error(`no branch of the schema at ${path.join(".")} fits`)
    return objectSchemas(document, fitting, value, path)
  }
  const properties = isRecord(resolved.properties) ? resolved.properties : {}
  return [
    { path, schema: resolved },
    ...Object.entries(value).flatMap(([key, item]) =>
      properties[key] === undefined ? [] : objectSchemas(document, properties[key], item, [...path, key])
    )
  ]
}

/** A copy of `value` with `key: extra` added to the object at `path`. */
export const withKeyAt = (
  value: unknown,
  path: ReadonlyArray<string | number>,
  key: string,
  extra: unknown
): unknown => {
  if (path.length === 0) return isRecord(value) ? { ...value, [key]: extra } : value
  const [head, ...rest] = path
  if (Array.isArray(value))
    return value.map((item, i) => (i === head ? withKeyAt(item, rest, key, extra) : item))
  if (isRecord(value))
    return { ...value, [head as string]: withKeyAt(value[head as string], rest, key, extra) }
  return value
}

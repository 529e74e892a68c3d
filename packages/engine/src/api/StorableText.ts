/**
 * Which client text the service accepts. PostgreSQL's `text` and `jsonb` cannot hold U+0000, and a
 * lone UTF-16 surrogate (JSON `"\ud800"`) has no UTF-8 form: the drivers either fail the statement
 * or silently store U+FFFD instead. The other control characters (C0, DEL, C1) are storable but
 * are never part of a label, alias, id, nonce, instrument name, token or secret a client means to
 * send, and they would reach logs and terminals as they are; they are refused too. Every other
 * character is accepted (bidirectional marks included: they are part of right-to-left text).
 */

const codePointOf = (code: number): string => `U+${code.toString(16).toUpperCase().padStart(4, "0")}`

const isControl = (code: number): boolean => code < 0x20 || (code >= 0x7f && code <= 0x9f)
const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff
const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff

/**
 * Why `text` is refused (a `reason` without the field's path), or undefined when it is accepted.
 * One pass over the UTF-16 code units; the first offending one is named.
 */
export const textIssue = (text: string): string | undefined => {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x7f && code >= 0x20) continue
    if (isControl(code)) return `must not contain the control character ${codePointOf(code)}`
    if (isHighSurrogate(code) && i + 1 < text.length && isLowSurrogate(text.charCodeAt(i + 1))) {
      i++
      continue
    }
    if (isHighSurrogate(code) || isLowSurrogate(code)) {
      return `must not contain a lone surrogate (${codePointOf(code)})`
    }
  }
  return undefined
}

/** Where the first refused string of a decoded request is, and why. */
export interface TextProblem {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/**
 * The walk behind `findRefusedText`. It runs on every decoded request, so the path is built only
 * when something is refused: segments are pushed innermost first as the search unwinds.
 */
const search = (
  value: unknown
): { readonly path: Array<PropertyKey>; readonly message: string } | undefined => {
  if (typeof value === "string") {
    const message = textIssue(value)
    return message === undefined ? undefined : { path: [], message }
  }
  if (typeof value !== "object" || value === null) return undefined
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = search(value[i])
      if (found !== undefined) {
        found.path.push(i)
        return found
      }
    }
    return undefined
  }
  const proto = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return undefined
  for (const key of Object.keys(value)) {
    const keyMessage = textIssue(key)
    if (keyMessage !== undefined) return { path: [key], message: `key ${keyMessage}` }
    const found = search((value as Record<string, unknown>)[key])
    if (found !== undefined) {
      found.path.push(key)
      return found
    }
  }
  return undefined
}

/**
 * The first refused string (value or key) inside a decoded request: plain objects and arrays are
 * searched, other objects (decimals) hold no client text. The schemas' text fields refuse such text
 * with a better message first; this is the net under every field, so none can be forgotten.
 */
export const findRefusedText = (value: unknown): TextProblem | undefined => {
  const found = search(value)
  return found === undefined ? undefined : { path: found.path.reverse(), message: found.message }
}

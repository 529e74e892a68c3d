import { apiError, type ApiError } from "../domain/Errors.js"

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

const isPlainContainer = (value: object): boolean => {
  if (Array.isArray(value)) return true
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/**
 * The first refused string (value or key) inside a decoded request: plain objects and arrays are
 * searched, other objects (decimals) hold no client text. The schemas' text fields refuse such text
 * with a better message first; this is the net under every field, so none can be forgotten.
 */
export const findRefusedText = (
  value: unknown,
  path: ReadonlyArray<PropertyKey> = []
): TextProblem | undefined => {
  if (typeof value === "string") {
    const message = textIssue(value)
    return message === undefined ? undefined : { path, message }
  }
  if (typeof value !== "object" || value === null || !isPlainContainer(value)) return undefined
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findRefusedText(value[i], [...path, i])
      if (found !== undefined) return found
    }
    return undefined
  }
  for (const key of Object.keys(value)) {
    const keyMessage = textIssue(key)
    if (keyMessage !== undefined) return { path: [...path, key], message: `key ${keyMessage}` }
    const found = findRefusedText((value as Record<string, unknown>)[key], [...path, key])
    if (found !== undefined) return found
  }
  return undefined
}

/** The 400 for refused text, its reason prefixed with the field's path (`format`). */
export const refusedTextError = (
  problem: TextProblem,
  format: (path: ReadonlyArray<PropertyKey>) => string
): ApiError =>
  apiError("invalidRequest", [
    problem.path.length === 0 ? problem.message : `${format(problem.path)}: ${problem.message}`
  ])

/**
 * The deepest nesting of arrays and objects any request of this API needs is a handful of levels
 * (an RFQ's legs: body → legs → leg → contracts). Deeper input is refused before `JSON.parse`:
 * parsing and then validating a body nested 10,000 deep costs milliseconds of the one event loop
 * every other client shares, for a body no valid request can be.
 */
export const MAX_JSON_DEPTH = 32

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACKET = 0x5b
const OPEN_BRACE = 0x7b
const CLOSE_BRACKET = 0x5d
const CLOSE_BRACE = 0x7d

/**
 * Whether the JSON text nests arrays and objects deeper than `max`, counting only brackets outside
 * strings. Malformed text is scanned all the same; `JSON.parse` refuses it afterwards.
 */
export const nestedDeeperThan = (text: string, max: number = MAX_JSON_DEPTH): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === BACKSLASH) i++
      else if (c === QUOTE) inString = false
    } else if (c === QUOTE) inString = true
    else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > max) return true
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) depth--
  }
  return false
}

import { type ApiError, apiError } from "@rfq/engine"
import { Either } from "effect"

/**
 * The one JSON parser of the host, for REST bodies, token requests and JSON-RPC frames. Each of
 * them words its refusals its own way (the texts clients have always seen), so the refusal comes
 * back as a reason and the caller picks the text.
 *
 * The deepest nesting of arrays and objects any request of this API needs is a handful of levels
 * (an RFQ's legs: body → legs → leg → contracts). Deeper input is refused before `JSON.parse`:
 * parsing and then validating a body nested 10,000 deep costs milliseconds of the one event loop
 * every other client shares, for a body no valid request can be.
 *
 * The depth scan is ours: `JSON.parse` has no depth limit, and Effect's `Schema.parseJson` runs it
 * first.
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

/** Why a JSON text or body was refused. */
export type JsonRefusal = "notUtf8" | "tooDeep" | "malformed" | "notAnObject"

/** Any JSON value (a JSON-RPC frame may be an array); never throws. */
export const parseJson = (text: string): Either.Either<unknown, "tooDeep" | "malformed"> => {
  if (nestedDeeperThan(text)) return Either.left("tooDeep")
  try {
    return Either.right(JSON.parse(text))
  } catch {
    return Either.left("malformed")
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true })

/** The body as UTF-8 text; `undefined` when it is not valid UTF-8. */
export const decodeUtf8 = (body: Uint8Array): string | undefined => {
  try {
    return utf8.decode(body)
  } catch {
    return undefined
  }
}

/** How an endpoint reads a JSON object body. */
export interface JsonObjectRules {
  /** Whether an empty or blank body stands for `{}` (REST) rather than malformed JSON. */
  readonly emptyIsObject: boolean
  /** The `reason` of the 400 `invalid request` for each refusal. */
  readonly reasons: Readonly<Record<JsonRefusal, string>>
}

/**
 * A body that must be a JSON object, or the 400 naming why not. An `Either` is an Effect too, so
 * a caller in Effect uses it as it is.
 */
export const parseJsonObject = (
  body: Uint8Array,
  rules: JsonObjectRules
): Either.Either<Record<string, unknown>, ApiError> => {
  if (body.length === 0 && rules.emptyIsObject) return Either.right({})
  const text = decodeUtf8(body)
  if (text === undefined) return Either.left(apiError("invalidRequest", rules.reasons.notUtf8))
  if (rules.emptyIsObject && text.trim() === "") return Either.right({})
  const parsed = parseJson(text)
  if (Either.isLeft(parsed)) return Either.left(apiError("invalidRequest", rules.reasons[parsed.left]))
  const value = parsed.right
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? Either.right(value as Record<string, unknown>)
    : Either.left(apiError("invalidRequest", rules.reasons.notAnObject))
}

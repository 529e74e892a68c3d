import { BigDecimal } from "effect"
import type { EngineEvent } from "../services/Events.js"

/**
 * The wire form of engine events between hosts: UTF-8 JSON of `{ v: 1, events: [...] }`.
 *
 * Records hold their decimals as canonical strings (`rfq/RfqRecord.ts#Dec`), so they travel as
 * plain JSON strings and come back digit for digit. Values JSON cannot carry are tagged on the way
 * out and rebuilt on the way in: a `BigDecimal` as `{ "$bigdecimal": [value, scale] }` (same value
 * and scale back), a `bigint` as `{ "$bigint": "…" }`. Fields whose value is `undefined` are left
 * out, so optional fields stay absent.
 *
 * Decoding checks the envelope's version and, of each event, what a receiver relies on (its kind,
 * `seq`, the RFQ id of its view); everything else is kept as sent. Encoding checks the same, so a
 * host never sends what the others would refuse. The checks are plain code rather than a schema:
 * every step of every RFQ goes through here on every host (issue 15).
 */

/** The version of the envelope; a host refuses messages of another version. */
export const EVENT_CODEC_VERSION = 1

const BIG_DECIMAL = "$bigdecimal"
const BIG_INT = "$bigint"

/** JSON.stringify's replacer: `this[key]` is the value before its own `toJSON` ran. */
function replacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const raw = this[key]
  if (BigDecimal.isBigDecimal(raw)) return { [BIG_DECIMAL]: [raw.value.toString(), raw.scale] }
  if (typeof raw === "bigint") return { [BIG_INT]: raw.toString() }
  return value
}

const isTagged = (value: unknown, tag: string): value is Record<string, unknown> =>
  typeof value === "object" &&
  value !== null &&
  !Array.isArray(value) &&
  Object.keys(value).length === 1 &&
  tag in value

function reviver(_key: string, value: unknown): unknown {
  if (isTagged(value, BIG_DECIMAL)) {
    const [digits, scale] = value[BIG_DECIMAL] as [string, number]
    return BigDecimal.make(BigInt(digits), scale)
  }
  if (isTagged(value, BIG_INT)) return BigInt(value[BIG_INT] as string)
  return value
}

/**
 * JSON text of `value`. Plain JSON first (a replacer is a call per value, the larger part of the
 * cost): a `bigint` makes it throw, and a `BigDecimal` shows as its own `toJSON` (an object with
 * `"_id":"BigDecimal"`, which nothing else in a record writes); either way the text is made again
 * with the replacer, which tags them.
 */
const stringify = (value: unknown): string => {
  try {
    const text = JSON.stringify(value)
    if (!text.includes('"_id":"BigDecimal"')) return text
  } catch (e) {
    if (!(e instanceof TypeError)) throw e
  }
  return JSON.stringify(value, replacer)
}

/**
 * Parses JSON text, rebuilding tagged values. The reviver (a call per value) runs only when the
 * text could hold a tag: its name, or any `\u` escape (a key may be spelt with escapes).
 */
const parse = (text: string): unknown =>
  text.includes(BIG_DECIMAL) || text.includes(BIG_INT) || text.includes("\\u")
    ? JSON.parse(text, reviver)
    : JSON.parse(text)

const utf8Encoder = new TextEncoder()
const utf8Decoder = new TextDecoder("utf-8", { fatal: true })

/** Why a message could not be read as engine events (bad UTF-8, JSON, version or shape). */
export class EventDecodeError extends Error {
  override readonly name = "EventDecodeError"
}

const KINDS: ReadonlySet<unknown> = new Set(["created", "updated", "deleted"])

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
const isInt = (value: unknown): boolean => typeof value === "number" && Number.isSafeInteger(value)

/**
 * What is wrong with `event` as a wire event, or undefined: its kind (`type`, `event`), a positive
 * integer `seq`, a view with an integer RFQ id and a list of quotes, and for a quote or a trade the
 * quote's integer id and RFQ id. Everything else is the records as they were sent.
 */
const eventIssue = (event: unknown): string | undefined => {
  if (!isObject(event)) return "an event is not an object"
  const { type, seq, view } = event
  if (type !== "rfq" && type !== "quote" && type !== "trade")
    return `unknown event type ${JSON.stringify(type)}`
  if (type === "trade" ? event.event !== "created" : !KINDS.has(event.event))
    return `unknown ${type} event ${JSON.stringify(event.event)}`
  if (!isInt(seq) || (seq as number) <= 0) return `seq ${JSON.stringify(seq)} is not a positive integer`
  if (!isObject(view) || !isObject(view.rfq) || !isInt(view.rfq.id) || !Array.isArray(view.quotes))
    return "view needs rfq.id (an integer) and quotes (a list)"
  if (type !== "rfq" && !(isObject(event.quote) && isInt(event.quote.id) && isInt(event.quote.rfqId)))
    return `a ${type} event needs quote.id and quote.rfqId (integers)`
  return undefined
}

/** What is wrong with `message` as an envelope of events, or undefined. */
const envelopeIssue = (message: unknown): string | undefined => {
  if (!isObject(message)) return "not an object"
  if (message.v !== EVENT_CODEC_VERSION)
    return `version ${JSON.stringify(message.v)} is not ${EVENT_CODEC_VERSION}`
  if (!Array.isArray(message.events)) return "events is not a list"
  for (const [i, event] of message.events.entries()) {
    const issue = eventIssue(event)
    if (issue !== undefined) return `events[${i}]: ${issue}`
  }
  return undefined
}

/** The events as one wire message; throws an `EventDecodeError` for an event receivers would refuse. */
export const encodeEvents = (events: ReadonlyArray<EngineEvent>): Uint8Array => {
  const envelope = { v: EVENT_CODEC_VERSION, events }
  const issue = envelopeIssue(envelope)
  if (issue !== undefined) throw new EventDecodeError(`not sent: ${issue}`)
  return utf8Encoder.encode(stringify(envelope))
}

/** The events of one wire message; throws an `EventDecodeError` when it is not one. */
export const decodeEvents = (bytes: Uint8Array): ReadonlyArray<EngineEvent> => {
  let parsed: unknown
  try {
    parsed = parse(utf8Decoder.decode(bytes))
  } catch (cause) {
    throw new EventDecodeError(`not UTF-8 JSON: ${String(cause)}`, { cause })
  }
  const issue = envelopeIssue(parsed)
  if (issue !== undefined) throw new EventDecodeError(issue)
  // The fields receivers rely on are checked; the rest is the records as they were sent.
  return (parsed as { events: ReadonlyArray<EngineEvent> }).events
}

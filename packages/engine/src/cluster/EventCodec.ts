import { BigDecimal } from "effect"
import type { EventAudience } from "../services/EventAudience.js"
import type { EngineEvent } from "../services/Events.js"

/**
 * The wire form of engine events between hosts: UTF-8 JSON of `{ v: 2, views: [...], events: [...] }`,
 * each event's `view` the index of its view in `views`. A step's events share one view (the RFQ
 * after the step, `rfq/StepEvents.ts`), so it is written and parsed once per step instead of once
 * per event: an accept's five events carried the same 1.5 KB view five times, and every host parses
 * every step (issue 15). Version 1, `{ v: 1, events: [...] }` with each view inline, is still read.
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
 * every step of every RFQ goes through here on every host whose sessions may hear it (issue 15).
 */

/** The version of the envelope written; a host refuses messages of a version it does not know. */
export const EVENT_CODEC_VERSION = 2
/** The envelope before views were shared: still read (a host of the version before may send it). */
const INLINE_VIEWS_VERSION = 1

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

/** What is wrong with `events` (each with its view inline) as events to send or deliver, or undefined. */
const eventsIssue = (events: unknown): string | undefined => {
  if (!Array.isArray(events)) return "events is not a list"
  for (const [i, event] of events.entries()) {
    const issue = eventIssue(event)
    if (issue !== undefined) return `events[${i}]: ${issue}`
  }
  return undefined
}

/**
 * The events of a parsed envelope with their views in place (version 2's indexes replaced by the
 * views they name), or what is wrong with it.
 */
const eventsOfEnvelope = (message: unknown): ReadonlyArray<EngineEvent> | string => {
  if (!isObject(message)) return "not an object"
  if (message.v === INLINE_VIEWS_VERSION) {
    const issue = eventsIssue(message.events)
    return issue ?? (message.events as ReadonlyArray<EngineEvent>)
  }
  if (message.v !== EVENT_CODEC_VERSION)
    return `version ${JSON.stringify(message.v)} is not ${EVENT_CODEC_VERSION} (or ${INLINE_VIEWS_VERSION})`
  const { views, events } = message
  if (!Array.isArray(views)) return "views is not a list"
  if (!Array.isArray(events)) return "events is not a list"
  for (const [i, event] of events.entries()) {
    if (!isObject(event)) return `events[${i}]: an event is not an object`
    const at = event.view
    if (!isInt(at) || (at as number) < 0 || (at as number) >= views.length)
      return `events[${i}]: view ${JSON.stringify(at)} is not an index of views`
    // The parsed objects are this message's own: the events share their step's view, as sent.
    event.view = views[at as number]
  }
  const issue = eventsIssue(events)
  return issue ?? (events as ReadonlyArray<EngineEvent>)
}

/** The events as one wire message; throws an `EventDecodeError` for an event receivers would refuse. */
export const encodeEvents = (events: ReadonlyArray<EngineEvent>): Uint8Array => {
  const issue = eventsIssue(events)
  if (issue !== undefined) throw new EventDecodeError(`not sent: ${issue}`)
  const views: Array<EngineEvent["view"]> = []
  const indexOf = new Map<EngineEvent["view"], number>()
  const wire = events.map((event) => {
    let at = indexOf.get(event.view)
    if (at === undefined) {
      at = views.length
      views.push(event.view)
      indexOf.set(event.view, at)
    }
    return { ...event, view: at }
  })
  return utf8Encoder.encode(stringify({ v: EVENT_CODEC_VERSION, views, events: wire }))
}

/** The events of one wire message; throws an `EventDecodeError` when it is not one. */
export const decodeEvents = (bytes: Uint8Array): ReadonlyArray<EngineEvent> => {
  let parsed: unknown
  try {
    parsed = parse(utf8Decoder.decode(bytes))
  } catch (cause) {
    throw new EventDecodeError(`not UTF-8 JSON: ${String(cause)}`, { cause })
  }
  // The fields receivers rely on are checked; the rest is the records as they were sent.
  const events = eventsOfEnvelope(parsed)
  if (typeof events === "string") throw new EventDecodeError(events)
  return events
}

/**
 * The message header naming a step's audience (`services/EventAudience.ts`): a host none of whose
 * subscribers wants it leaves the message unread. A message without it (or with one that cannot be
 * read) is decoded as before, so hosts of the version before still interoperate.
 */
export const AUDIENCE_HEADER = "Rfq-Audience"

/**
 * The header value of `audience`: JSON `{"d":[taker desk ids],"m":[maker ids],"t":trade}` on one
 * line of printable ASCII (JSON escapes control characters; everything above `~` is written as
 * `\uXXXX`), whatever a maker id holds.
 */
export const encodeAudience = (audience: EventAudience): string =>
  JSON.stringify({ d: audience.takerDeskIds, m: audience.makerIds, t: audience.trade }).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`
  )

const isStringList = (value: unknown): value is ReadonlyArray<string> =>
  Array.isArray(value) && value.every((item) => typeof item === "string")
const isIntList = (value: unknown): value is ReadonlyArray<number> =>
  Array.isArray(value) && value.every(isInt)

/** The audience a message's header names, or undefined (no header, or not one `encodeAudience` writes). */
export const audienceOfMessage = (header: string | undefined): EventAudience | undefined => {
  if (header === undefined || header === "") return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(header)
  } catch {
    return undefined
  }
  if (!isObject(parsed)) return undefined
  const { d, m, t } = parsed
  return isIntList(d) && isStringList(m) && typeof t === "boolean"
    ? { takerDeskIds: d, makerIds: m, trade: t }
    : undefined
}

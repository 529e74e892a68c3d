import { BigDecimal, Either, ParseResult, Schema } from "effect"
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
 * `seq`, the RFQ id of its view); everything else is kept as sent.
 */

/** The version of the envelope; a host refuses messages of another version. */
export const EVENT_CODEC_VERSION = 1

const Rfq = Schema.Struct({ id: Schema.Int })
const View = Schema.Struct({ rfq: Rfq, quotes: Schema.Array(Schema.Unknown) })
const Seq = Schema.Int.pipe(Schema.positive())
const Kind = Schema.Literal("created", "updated", "deleted")

const WireEvent = Schema.Union(
  Schema.Struct({ type: Schema.Literal("rfq"), event: Kind, seq: Seq, view: View }),
  Schema.Struct({
    type: Schema.Literal("quote"),
    event: Kind,
    seq: Seq,
    view: View,
    quote: Schema.Struct({ id: Schema.Int, rfqId: Schema.Int })
  }),
  // A print of the public tape (issue 16): the accepted quote rides along for its leg prices.
  Schema.Struct({
    type: Schema.Literal("trade"),
    event: Schema.Literal("created"),
    seq: Seq,
    view: View,
    quote: Schema.Struct({ id: Schema.Int, rfqId: Schema.Int })
  })
)

const Envelope = Schema.Struct({
  v: Schema.Literal(EVENT_CODEC_VERSION),
  events: Schema.Array(WireEvent)
})

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

// Everything not named in the schema (the rest of the records) is carried through untouched.
const options = { onExcessProperty: "preserve" } as const
const encodeEnvelope = Schema.encodeSync(Envelope, options)
const decodeEnvelope = Schema.decodeUnknownEither(Envelope, options)

const utf8Encoder = new TextEncoder()
const utf8Decoder = new TextDecoder("utf-8", { fatal: true })

/** Why a message could not be read as engine events (bad UTF-8, JSON, version or shape). */
export class EventDecodeError extends Error {
  override readonly name = "EventDecodeError"
}

/** The events as one wire message. */
export const encodeEvents = (events: ReadonlyArray<EngineEvent>): Uint8Array =>
  utf8Encoder.encode(JSON.stringify(encodeEnvelope({ v: EVENT_CODEC_VERSION, events }), replacer))

/** The events of one wire message; throws an `EventDecodeError` when it is not one. */
export const decodeEvents = (bytes: Uint8Array): ReadonlyArray<EngineEvent> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(utf8Decoder.decode(bytes), reviver)
  } catch (cause) {
    throw new EventDecodeError(`not UTF-8 JSON: ${String(cause)}`, { cause })
  }
  return Either.match(decodeEnvelope(parsed), {
    onLeft: (issue) => {
      throw new EventDecodeError(ParseResult.TreeFormatter.formatErrorSync(issue))
    },
    // The schema checked the fields receivers rely on; the rest is the records as they were sent.
    onRight: (envelope) => envelope.events as unknown as ReadonlyArray<EngineEvent>
  })
}

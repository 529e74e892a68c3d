import { describe, expect, it } from "@effect/vitest"
import { BigDecimal } from "effect"
import * as fc from "fast-check"
import { headers, MsgHdrsImpl } from "@nats-io/transport-node"
import {
  AUDIENCE_HEADER,
  audienceOfMessage,
  decodeEvents,
  EventDecodeError,
  encodeAudience,
  encodeEvents
} from "../../src/cluster/EventCodec.js"
import type { EngineEvent } from "../../src/services/Events.js"
import { eventsArb, stepEvents, withoutUndefined } from "./eventFixtures.js"

const roundTrip = (events: ReadonlyArray<EngineEvent>) => decodeEvents(encodeEvents(events))
const utf8 = (text: string) => new TextEncoder().encode(text)

describe("EventCodec", () => {
  it("round-trips generated events exactly, keeping undefined optional fields absent", () => {
    fc.assert(
      fc.property(eventsArb, (events) => {
        expect(roundTrip(events)).toStrictEqual(withoutUndefined(events))
      }),
      { numRuns: 300 }
    )
  })

  it("keeps decimal strings digit for digit", () => {
    for (const price of [
      "0.0001",
      "-12.5",
      "-12.50",
      "0.00000001",
      "1e-8",
      "123456789012345678.000000000001"
    ]) {
      const [quoteEvent] = roundTrip(stepEvents(7, 2, price))
      expect(quoteEvent?.type === "quote" && quoteEvent.quote.price).toBe(price)
    }
  })

  it("brings BigDecimal values back as BigDecimal with the same value and scale", () => {
    const decimals = [
      BigDecimal.make(1n, 4), // 0.0001
      BigDecimal.make(-1250n, 2), // -12.50, scale kept
      BigDecimal.make(1n, 8), // 1e-8
      BigDecimal.make(5n, -3) // 5000 at a negative scale
    ]
    const [event] = stepEvents(3, 1)
    const carrying = { ...event!, extra: { decimals, big: 2n ** 70n } } as unknown as EngineEvent
    const back = roundTrip([carrying])[0] as unknown as {
      extra: { decimals: Array<BigDecimal.BigDecimal>; big: bigint }
    }
    expect(back.extra.big).toBe(2n ** 70n)
    expect(back.extra.decimals.map((d) => [BigDecimal.isBigDecimal(d), d.value, d.scale])).toStrictEqual(
      decimals.map((d) => [true, d.value, d.scale])
    )
  })

  it("tags a BigDecimal even when no bigint forces the tagged path", () => {
    const [event] = stepEvents(3, 1)
    const carrying = { ...event!, extra: { d: BigDecimal.make(-1250n, 2) } } as unknown as EngineEvent
    const text = new TextDecoder().decode(encodeEvents([carrying]))
    expect(text).toContain('"$bigdecimal":["-1250",2]')
    const back = roundTrip([carrying])[0] as unknown as { extra: { d: BigDecimal.BigDecimal } }
    expect([BigDecimal.isBigDecimal(back.extra.d), back.extra.d.value, back.extra.d.scale]).toStrictEqual([
      true,
      -1250n,
      2
    ])
  })

  it("rebuilds a tag however its key is spelt, and leaves strings that merely name a tag alone", () => {
    const [event] = stepEvents(3, 1)
    const text = new TextDecoder().decode(encodeEvents([event!]))
    const spelt = text.replace('"seq":1', '"seq":1,"big":{"\\u0024bigint":"5"},"note":"$bigint $bigdecimal"')
    const [back] = decodeEvents(utf8(spelt)) as unknown as Array<{ big: bigint; note: string }>
    expect(back!.big).toBe(5n)
    expect(back!.note).toBe("$bigint $bigdecimal")
  })

  it("carries hostile text that spells a tag or a BigDecimal's JSON as the same text", () => {
    const [event] = stepEvents(3, 1)
    const hostile = [
      '{"_id":"BigDecimal","value":"1","scale":0}',
      '"_id":"BigDecimal"',
      '{"$bigdecimal":["1",0]}',
      '{"$bigint":"7"}',
      "\\u0024bigint \u2028 \u0000"
    ]
    for (const text of hostile) {
      const carrying = {
        ...event!,
        extra: { label: text, nested: { [text]: text } }
      } as unknown as EngineEvent
      const [back] = roundTrip([carrying]) as unknown as Array<{ extra: { label: string; nested: object } }>
      expect(back!.extra).toStrictEqual({ label: text, nested: { [text]: text } })
    }
  })

  it("leaves out a field set to undefined", () => {
    const [event] = roundTrip(stepEvents(5, 1))
    expect(event?.view).not.toHaveProperty("trade")
  })

  it("refuses what is not an event message", () => {
    const events = stepEvents(4, 2)
    const wire = JSON.parse(new TextDecoder().decode(encodeEvents(events))) as {
      v: number
      views: Array<unknown>
      events: Array<unknown>
    }
    const bad = [
      utf8("not json"),
      new Uint8Array([0xff, 0xfe]),
      utf8(JSON.stringify({ ...wire, v: 3 })),
      utf8(JSON.stringify({ ...wire, views: undefined })),
      utf8(JSON.stringify({ ...wire, events: [{ ...(wire.events[0] as object), view: 1 }] })),
      utf8(JSON.stringify({ ...wire, events: [{ ...(wire.events[0] as object), view: -1 }] })),
      utf8(JSON.stringify({ ...wire, events: [{ ...(wire.events[0] as object), view: "0" }] })),
      utf8(JSON.stringify({ ...wire, events: [{ ...(wire.events[0] as object), view: 0.5 }] })),
      utf8(JSON.stringify({ ...wire, events: [7] })),
      utf8(JSON.stringify({ ...wire, views: [{ rfq: { id: 4 } }] })),
      utf8(JSON.stringify({ v: 1, events: [{ ...events[0], seq: "2" }] })),
      utf8(JSON.stringify({ v: 1, events: [{ ...events[0], quote: undefined }] })),
      utf8(JSON.stringify({ v: 1, events: [{ ...events[0], seq: 0 }] })),
      utf8(JSON.stringify({ v: 1, events: [{ ...events[0], seq: 1.5 }] })),
      utf8(JSON.stringify({ v: 1, events: [{ ...events[0], event: "moved" }] })),
      utf8(JSON.stringify({ v: 1, events: [{ ...events[0], type: "trade", event: "updated" }] })),
      utf8(JSON.stringify({ v: 1, events: [{ ...events[1], view: { rfq: { id: 4 } } }] })),
      utf8(JSON.stringify({ v: 1, events: [{ ...events[1], view: { rfq: { id: "4" }, quotes: [] } }] })),
      utf8(JSON.stringify({ v: 1, events: [null] })),
      utf8(JSON.stringify({ v: 1, events: {} })),
      utf8(JSON.stringify([1]))
    ]
    for (const bytes of bad) expect(() => decodeEvents(bytes)).toThrow(EventDecodeError)
    // A well-formed message of the same steps is read.
    expect(decodeEvents(utf8(JSON.stringify(wire)))).toHaveLength(2)
  })

  it("writes a step's shared view once, and its events share it again once read", () => {
    const events = stepEvents(4, 2)
    expect(events[0]!.view).toBe(events[1]!.view)
    const bytes = encodeEvents(events)
    const wire = JSON.parse(new TextDecoder().decode(bytes)) as {
      views: Array<unknown>
      events: Array<unknown>
    }
    expect(wire.views).toHaveLength(1)
    expect(wire.events.map((e) => (e as { view: unknown }).view)).toStrictEqual([0, 0])
    const read = decodeEvents(bytes)
    expect(read[0]!.view).toBe(read[1]!.view)
    expect(read).toStrictEqual(withoutUndefined(events))
    // Two steps in one message (as a republish may send): one view each, each event with its own.
    const two = [...stepEvents(4, 2), ...stepEvents(5, 2)]
    const both = JSON.parse(new TextDecoder().decode(encodeEvents(two))) as { views: Array<unknown> }
    expect(both.views).toHaveLength(2)
    expect(decodeEvents(encodeEvents(two))).toStrictEqual(withoutUndefined(two))
  })

  it("still reads version 1 (each event with its view inline), as the version before sent it", () => {
    fc.assert(
      fc.property(eventsArb, (events) => {
        const v1 = utf8(JSON.stringify({ v: 1, events }))
        expect(decodeEvents(v1)).toStrictEqual(withoutUndefined(events))
      }),
      { numRuns: 100 }
    )
  })

  it("refuses to send what receivers would refuse", () => {
    const [, quoteEvent] = stepEvents(4, 2)
    const broken = { ...quoteEvent!, seq: 0 } as EngineEvent
    expect(() => encodeEvents([broken])).toThrow(EventDecodeError)
  })

  it("writes an audience as one header line of printable ASCII, read back exactly, whatever maker ids hold", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 2 ** 31 }), { maxLength: 3 }),
        fc.array(
          fc.oneof(
            fc.string(),
            fc.string({ unit: "binary" }),
            fc.constantFrom("a\r\nb: c", '"},{"t":true', "\u0000")
          ),
          {
            maxLength: 4
          }
        ),
        fc.boolean(),
        (takerDeskIds, makerIds, trade) => {
          const audience = { takerDeskIds, makerIds, trade }
          const value = encodeAudience(audience)
          expect(value).toMatch(/^[\x20-\x7e]+$/)
          // Through NATS's own header encoding and decoding, as a message carries it.
          const hdrs = headers()
          hdrs.set(AUDIENCE_HEADER, value)
          const back = MsgHdrsImpl.decode((hdrs as MsgHdrsImpl).encode()).get(AUDIENCE_HEADER)
          expect(audienceOfMessage(back)).toStrictEqual(audience)
        }
      ),
      { numRuns: 300 }
    )
  })

  it("reads no audience from a header that is missing or not one it writes (the message is then decoded)", () => {
    for (const header of [
      undefined,
      "",
      "not json",
      "[]",
      "null",
      '{"d":[1],"m":["x"]}',
      '{"d":[1.5],"m":[],"t":false}',
      '{"d":["1"],"m":[],"t":false}',
      '{"d":[1],"m":[2],"t":false}',
      '{"d":[1],"m":[],"t":"yes"}',
      '{"d":{},"m":[],"t":true}'
    ])
      expect(audienceOfMessage(header)).toBeUndefined()
  })
})

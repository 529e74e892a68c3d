import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { subscriptionNotification } from "../../src/ws/JsonRpc.js"
import { NotificationFrame } from "../../src/ws/NotificationFrame.js"

const text = (bytes: Uint8Array) => new TextDecoder("utf-8", { fatal: true }).decode(bytes)

describe("NotificationFrame", () => {
  it("is the notification's JSON in UTF-8 for every seq, whatever the seqs asked before", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme" }),
        fc.jsonValue(),
        fc.array(fc.maxSafeNat(), { minLength: 1, maxLength: 8 }),
        (channel, data, seqs) => {
          const json = JSON.stringify(data)
          const frame = new NotificationFrame(channel, json)
          for (const seq of seqs) {
            assert.strictEqual(
              text(frame.bytes(seq)),
              JSON.stringify(subscriptionNotification(channel, seq, JSON.parse(json)))
            )
          }
        }
      )
    )
  })

  it("seqs of the same, more and fewer digits in turn each get their own frame, whole", () => {
    const frame = new NotificationFrame("rfq.maker", '{"event":"created","label":"é✓"}')
    for (const seq of [1234567, 8, 9, 12, 34, 1234568, 7, 99999999]) {
      assert.deepStrictEqual(JSON.parse(text(frame.bytes(seq))), {
        jsonrpc: "2.0",
        method: "v1/subscription",
        params: { channel: "rfq.maker", seq, data: { event: "created", label: "é✓" } }
      })
    }
  })
})

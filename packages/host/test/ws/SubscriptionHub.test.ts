import { assert, describe, it } from "@effect/vitest"
import type { Caller } from "@rfq/engine"
import { parseChannel } from "../../src/ws/Channels.js"
import { type Rendered, SubscriptionHub } from "../../src/ws/SubscriptionHub.js"
import { rfqEvent } from "./sessionHarness.js"

const makerOf = (deskId: number, userId: number): Caller =>
  ({ deskId, userId, roles: ["trader"], makerId: `maker-${deskId}` }) as unknown as Caller

describe("SubscriptionHub", () => {
  it("renders an event once per desk view and hands every session the same rendering", () => {
    const renders: Array<number> = []
    const hub = new SubscriptionHub((event, _channel, caller) => {
      renders.push(caller.deskId)
      return { rfqId: event.view.rfq.id, seenBy: caller.deskId }
    })
    const received: Array<{ userId: number; channel: string; rendered: Rendered }> = []
    const channel = parseChannel("rfq.maker")!
    for (let i = 0; i < 300; i++) {
      const caller = makerOf(1 + (i % 3), 100 + i)
      hub.add({
        caller: () => caller,
        subscriptions: () => [channel],
        deliver: (name, rendered) => received.push({ userId: caller.userId, channel: name, rendered })
      })
    }
    assert.deepStrictEqual(hub.publish(rfqEvent(7, "BTC")), [])
    assert.deepStrictEqual(renders.sort(), [1, 2, 3])
    assert.strictEqual(received.length, 300)
    for (const r of received) {
      const deskId = 1 + ((r.userId - 100) % 3)
      assert.deepStrictEqual(JSON.parse(r.rendered.json), { rfqId: 7, seenBy: deskId })
    }
    assert.strictEqual(new Set(received.map((r) => r.rendered)).size, 3)
  })
})

import { jetstream } from "@nats-io/jetstream"
import { connect } from "@nats-io/transport-node"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { encodeEvents } from "../../src/cluster/EventCodec.js"
import { natsNames } from "../../src/cluster/NatsConnection.js"
import { NatsEventsLive } from "../../src/cluster/NatsEvents.js"
import type { EventAudience } from "../../src/services/EventAudience.js"
import { type EngineEvent, Events } from "../../src/services/Events.js"
import { stepEvents, stepEventsOf } from "./eventFixtures.js"
import {
  capturingLogger,
  CuttableProxy,
  deleteStream,
  expected,
  marker,
  ofRfq,
  randomNamespace,
  received,
  servers,
  startHost,
  storeRaw,
  storeSteps,
  storeWithoutId,
  takeUntilMarker
} from "./natsSupport.js"

/** How steps reach every host's subscribers: once, in order, only where wanted (the stream itself: `NatsStream.test.ts`). */

const namespace = randomNamespace()
const otherNamespaces: Array<string> = []
afterAll(() => Promise.all([namespace, ...otherNamespaces].map(deleteStream)))

describe("NatsEventsLive", () => {
  it.scopedLive("every host receives every step once, in each RFQ's order, whichever host published it", () =>
    Effect.gen(function* () {
      const hosts = [yield* startHost({ namespace }), yield* startHost({ namespace })] as const
      const queues = [yield* hosts[0].events.subscribe, yield* hosts[1].events.subscribe]
      const rfqIds = [101, 102, 103, 104, 105, 106]
      const seqs = [1, 2, 3, 4, 5]
      // RFQs concurrently, each RFQ's steps one after the other, alternating between the hosts.
      yield* Effect.forEach(
        rfqIds,
        (rfqId) =>
          Effect.forEach(seqs, (seq) => hosts[(rfqId + seq) % 2]!.events.publish(stepEvents(rfqId, seq))),
        { concurrency: "unbounded" }
      )
      yield* marker(namespace, 199, 1)

      for (const queue of queues) {
        const got = yield* takeUntilMarker(queue, 199)
        expect(got.length).toBe(rfqIds.length * (1 + 2 * (seqs.length - 1)))
        for (const rfqId of rfqIds) {
          expect(received(ofRfq(got, rfqId))).toStrictEqual(
            expected(seqs.map((seq) => [rfqId, seq] as const))
          )
        }
      }
    })
  )

  it.scopedLive(
    "a step published again is delivered once, and an older step after a newer one not at all",
    () =>
      Effect.gen(function* () {
        const [a, b] = [yield* startHost({ namespace }), yield* startHost({ namespace })]
        const queues = [yield* a.events.subscribe, yield* b.events.subscribe]
        yield* a.events.publish(stepEvents(201, 1))
        yield* a.events.publish(stepEvents(201, 1)) // same message id: JetStream drops it
        yield* b.events.publish(stepEvents(201, 1))
        yield* b.events.publish(stepEvents(201, 2))
        yield* storeWithoutId(namespace, 201, 2) // stored twice (a republish after the duplicate window)
        yield* storeWithoutId(namespace, 201, 1) // an older step after a newer one
        yield* a.events.publish(stepEvents(201, 3))
        yield* marker(namespace, 299, 1)

        for (const queue of queues) {
          expect(received(yield* takeUntilMarker(queue, 299))).toStrictEqual(
            expected([
              [201, 1],
              [201, 2],
              [201, 3]
            ])
          )
        }
      })
  )

  it.scopedLive(
    "a host that owns an RFQ now, its earlier steps not yet come from the stream, delivers them first",
    () =>
      Effect.gen(function* () {
        const host = yield* startHost({ namespace })
        const queue = yield* host.events.subscribe
        // Steps 1 to 3 came from another host (stored, not yet read here); this host commits step 4.
        yield* storeSteps(namespace, [
          [801, 1],
          [801, 2],
          [801, 3]
        ])
        yield* host.events.publish(stepEvents(801, 4))
        yield* marker(namespace, 899, 1)
        expect(received(yield* takeUntilMarker(queue, 899))).toStrictEqual(
          expected([
            [801, 1],
            [801, 2],
            [801, 3],
            [801, 4]
          ])
        )
      })
  )

  it.scopedLive("a step delivered already is skipped unread: only unread messages are decoded", () =>
    Effect.gen(function* () {
      const { logged, capture } = capturingLogger()
      // A short duplicate window, so that a step's id can be stored again (as a late republish is).
      const fresh = randomNamespace()
      otherNamespaces.push(fresh)
      const options = { namespace: fresh, duplicateWindowMs: 100 }
      const [a, b] = [
        yield* startHost(options).pipe(Effect.provide(capture)),
        yield* startHost(options).pipe(Effect.provide(capture))
      ]
      const queues = [yield* a.events.subscribe, yield* b.events.subscribe]
      yield* a.events.publish(stepEvents(901, 1))
      yield* a.events.publish(stepEvents(901, 2))
      yield* marker(fresh, 990, 1)
      for (const queue of queues) yield* takeUntilMarker(queue, 990)
      yield* Effect.sleep("300 millis")
      // Bytes no host could read, under the ids of a step both delivered and of one neither did.
      yield* storeRaw(fresh, 901, "901:1", "not an event message")
      yield* storeRaw(fresh, 902, "902:1", "not an event message")
      yield* marker(fresh, 991, 1)
      for (const queue of queues) expect(yield* takeUntilMarker(queue, 991)).toStrictEqual([])
      const skipped = logged.filter((line) => line.includes("skipped"))
      expect(skipped).toHaveLength(2) // 902:1 on each host; 901:1 was not even read
      for (const line of skipped) expect(line).toMatch(/message \d+ skipped: not UTF-8 JSON/)
    })
  )

  it.scopedLive("a host reads only the steps its subscribers may want, and leaves the others unread", () =>
    Effect.gen(function* () {
      const { logged, capture } = capturingLogger()
      const fresh = randomNamespace()
      otherNamespaces.push(fresh)
      const [a, b] = [
        yield* startHost({ namespace: fresh }).pipe(Effect.provide(capture)),
        yield* startHost({ namespace: fresh }).pipe(Effect.provide(capture))
      ]
      // Each host's one subscriber listens for one taker desk's RFQs (as a host's sessions would).
      const forDesk = (deskId: number) => (audience: EventAudience) => audience.takerDeskIds.includes(deskId)
      const [onA, onB] = [yield* a.events.subscribeFor(forDesk(1)), yield* b.events.subscribeFor(forDesk(2))]
      const ofDesk = (deskId: number, rfqId: number, seq: number) =>
        stepEventsOf(rfqId, seq, deskId, [`maker-of-${deskId}`])
      // Both hosts publish steps of both desks' RFQs.
      for (const seq of [1, 2]) {
        yield* a.events.publish(ofDesk(1, 311, seq))
        yield* a.events.publish(ofDesk(2, 312, seq))
        yield* b.events.publish(ofDesk(1, 313, seq))
        yield* b.events.publish(ofDesk(2, 314, seq))
      }
      // Bytes no host could read, each naming one desk in its header: only that desk's host reads them.
      yield* storeRaw(fresh, 315, "315:1", "not an event message", {
        takerDeskIds: [1],
        makerIds: [],
        trade: false
      })
      yield* storeRaw(fresh, 316, "316:1", "not an event message", {
        takerDeskIds: [2],
        makerIds: [],
        trade: false
      })
      const end = (deskId: number) =>
        Effect.promise(async () => {
          const nc = await connect({ servers })
          try {
            await jetstream(nc).publish(
              natsNames(fresh).eventSubject(390 + deskId),
              encodeEvents(ofDesk(deskId, 390 + deskId, 1))
            )
          } finally {
            await nc.close()
          }
        })
      yield* end(1)
      yield* end(2)
      // Only the order within each RFQ is kept across hosts.
      const stepsOf = (events: ReadonlyArray<EngineEvent>) =>
        [...new Set(events.map((e) => `${e.view.rfq.id}:${e.seq}`))].sort()
      expect(stepsOf(yield* takeUntilMarker(onA, 391))).toStrictEqual(["311:1", "311:2", "313:1", "313:2"])
      expect(stepsOf(yield* takeUntilMarker(onB, 392))).toStrictEqual(["312:1", "312:2", "314:1", "314:2"])
      // Each unreadable message was read by one host only: the other left it unread, unlogged.
      const skipped = logged.filter((line) => /message \d+ skipped/.test(line))
      expect(skipped).toHaveLength(2)
    })
  )

  it.scopedLive("decimals arrive digit for digit", () =>
    Effect.gen(function* () {
      const host = yield* startHost({ namespace })
      const queue = yield* host.events.subscribe
      const prices = ["0.0001", "-12.5", "0.00000001", "98765432109876543210.123456789"]
      yield* Effect.forEach(prices, (price, i) => host.events.publish(stepEvents(301, i + 2, price)))
      yield* marker(namespace, 399, 1)
      const got = yield* takeUntilMarker(queue, 399)
      expect(got.flatMap((e) => (e.type === "quote" ? [e.quote.price] : []))).toStrictEqual(prices)
      expect(got.flatMap((e) => e.view.quotes.map((q) => q.price))).toStrictEqual(
        prices.flatMap((p) => [p, p])
      )
    })
  )

  it.scopedLive("a host receives what is stored after it started, not before", () =>
    Effect.gen(function* () {
      const a = yield* startHost({ namespace })
      const early = yield* a.events.subscribe
      yield* a.events.publish(stepEvents(401, 1))
      const b = yield* startHost({ namespace })
      const late = yield* b.events.subscribe
      yield* a.events.publish(stepEvents(401, 2))
      yield* marker(namespace, 499, 1)
      expect(received(yield* takeUntilMarker(late, 499))).toStrictEqual(expected([[401, 2]]))
      expect(received(yield* takeUntilMarker(early, 499))).toStrictEqual(
        expected([
          [401, 1],
          [401, 2]
        ])
      )
    })
  )

  it.scopedLive(
    "a host cut off from NATS gets every step it missed once it is back, each once and in order",
    () =>
      Effect.gen(function* () {
        const proxy = yield* Effect.acquireRelease(
          Effect.promise(() => CuttableProxy.start()),
          (p) => Effect.promise(() => p.close())
        )
        const fresh = randomNamespace()
        otherNamespaces.push(fresh)
        const cutOff = yield* Effect.map(
          Layer.build(NatsEventsLive({ servers: proxy.url, namespace: fresh })),
          (ctx) => Context.get(ctx, Events)
        )
        const other = yield* startHost({ namespace: fresh })
        const heard = yield* cutOff.subscribe
        yield* other.events.publish(stepEvents(601, 1))
        yield* marker(fresh, 690, 1)
        expect(received(yield* takeUntilMarker(heard, 690))).toStrictEqual(expected([[601, 1]]))

        proxy.cut()
        for (const seq of [2, 3, 4]) yield* other.events.publish(stepEvents(601, seq))
        yield* other.events.publish(stepEvents(602, 1))
        yield* Effect.sleep("1 second")
        proxy.restore()
        yield* marker(fresh, 691, 1)
        const missed = yield* takeUntilMarker(heard, 691).pipe(Effect.timeout("60 seconds"))
        expect(received(missed)).toStrictEqual(
          expected([
            [601, 2],
            [601, 3],
            [601, 4],
            [602, 1]
          ])
        )
      }),
    90_000
  )
})

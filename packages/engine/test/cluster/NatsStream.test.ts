import { jetstream } from "@nats-io/jetstream"
import { connect, nanos } from "@nats-io/transport-node"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Exit, Layer, Logger, Queue, Schedule, Scope } from "effect"
import { publishEvents } from "../../src/cluster/EventStream.js"
import { natsNames } from "../../src/cluster/NatsConnection.js"
import { NatsEventsLive } from "../../src/cluster/NatsEvents.js"
import { stepEvents } from "./eventFixtures.js"
import {
  deleteStream,
  expected,
  marker,
  randomNamespace,
  received,
  servers,
  startHost,
  takeUntilMarker,
  withJsm
} from "./natsSupport.js"

/** The stream and the bus themselves: set-up, repair, clean-up, failures (delivery: `NatsEvents.test.ts`). */

const namespace = randomNamespace()
const otherNamespaces: Array<string> = []
afterAll(() => Promise.all([namespace, ...otherNamespaces].map(deleteStream)))

describe("NatsEventsLive: the stream and the bus", () => {
  it.scopedLive("the bus reaches every host on the topic, the sender's own included", () =>
    Effect.gen(function* () {
      const [a, b] = [yield* startHost({ namespace }), yield* startHost({ namespace })]
      const clears = [yield* a.bus.subscribe("cache.clear"), yield* b.bus.subscribe("cache.clear")]
      const others = [yield* a.bus.subscribe("tokens-revoked"), yield* b.bus.subscribe("tokens-revoked")]
      yield* a.bus.broadcast("cache.clear", {
        from: "a",
        keys: [1, 2.5, "x"],
        nested: { ok: true, none: null }
      })
      yield* b.bus.broadcast("cache.clear", { from: "b" })
      yield* b.bus.broadcast("tokens-revoked", "marker")
      for (const queue of clears) {
        expect(Chunk.toReadonlyArray(yield* Queue.takeN(queue, 2))).toStrictEqual([
          { from: "a", keys: [1, 2.5, "x"], nested: { ok: true, none: null } },
          { from: "b" }
        ])
      }
      for (const queue of others) expect(yield* Queue.take(queue)).toBe("marker")
    })
  )

  it.scopedLive("hosts starting together set the stream up once; a host with other limits updates it", () =>
    Effect.gen(function* () {
      const fresh = randomNamespace()
      otherNamespaces.push(fresh)
      const { stream } = natsNames(fresh)
      yield* Effect.all(
        Array.from({ length: 4 }, () => startHost({ namespace: fresh })),
        { concurrency: "unbounded" }
      )
      const before = yield* Effect.promise(() => withJsm((jsm) => jsm.streams.info(stream)))
      expect([before.config.max_age, before.config.duplicate_window]).toStrictEqual([
        nanos(3_600_000),
        nanos(120_000)
      ])
      expect(before.config.subjects).toStrictEqual([`rfq.${fresh}.events.>`])

      yield* startHost({ namespace: fresh, maxAgeMs: 600_000, duplicateWindowMs: 30_000 })
      const after = yield* Effect.promise(() => withJsm((jsm) => jsm.streams.info(stream)))
      expect([after.config.max_age, after.config.duplicate_window]).toStrictEqual([
        nanos(600_000),
        nanos(30_000)
      ])
    })
  )

  it.scopedLive("a host whose stream was deleted sets it up again and carries on", () =>
    Effect.gen(function* () {
      const fresh = randomNamespace()
      otherNamespaces.push(fresh)
      const { stream } = natsNames(fresh)
      const host = yield* startHost({ namespace: fresh })
      const queue = yield* host.events.subscribe
      yield* host.events.publish(stepEvents(501, 1))
      yield* marker(fresh, 598, 1)
      expect(received(yield* takeUntilMarker(queue, 598))).toStrictEqual(expected([[501, 1]]))

      yield* Effect.promise(() => deleteStream(fresh))
      // Waits (with no deadline of its own) for the host to notice and create the stream again.
      yield* Effect.tryPromise(() => withJsm((jsm) => jsm.streams.info(stream))).pipe(
        Effect.retry(Schedule.spaced("100 millis"))
      )
      yield* host.events.publish(stepEvents(501, 2))
      yield* marker(fresh, 599, 1)
      expect(received(yield* takeUntilMarker(queue, 599))).toStrictEqual(expected([[501, 2]]))
    })
  )

  it.live("a closed host leaves no consumer behind", () =>
    Effect.gen(function* () {
      const fresh = randomNamespace()
      otherNamespaces.push(fresh)
      const consumers = Effect.promise(() =>
        withJsm(async (jsm) => (await jsm.consumers.list(natsNames(fresh).stream).next()).length)
      )
      const scope = yield* Scope.make()
      yield* Scope.extend(startHost({ namespace: fresh }), scope)
      expect(yield* consumers).toBe(1)
      yield* Scope.close(scope, Exit.void)
      expect(yield* consumers).toBe(0)
    })
  )

  it.live("a publish NATS never acknowledges gives up after its deadline, logged, without failing", () =>
    Effect.gen(function* () {
      const logged: Array<string> = []
      const capture = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ logLevel, message }) => {
          logged.push(`${logLevel.label} ${String(message)}`)
        })
      )
      const nc = yield* Effect.acquireRelease(
        Effect.promise(() => connect({ servers })),
        (c) => Effect.promise(() => c.close())
      )
      // No host ever set this namespace's stream up: nothing answers its subjects.
      const publish = publishEvents(jetstream(nc), natsNames(randomNamespace()), "300 millis")
      yield* publish(stepEvents(601, 1)).pipe(Effect.provide(capture))
      expect(logged).toStrictEqual([expect.stringMatching(/^ERROR events of step 601:1 not published/)])
    }).pipe(Effect.scoped)
  )

  it.live("NATS out of reach is NatsUnavailable", () =>
    Effect.gen(function* () {
      const error = yield* Layer.build(NatsEventsLive({ servers: "nats://127.0.0.1:1", namespace })).pipe(
        Effect.scoped,
        Effect.flip
      )
      expect(error._tag).toBe("NatsUnavailable")
    })
  )
})

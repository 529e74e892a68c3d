import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Option, Queue, Scope } from "effect"
import { natsNames } from "../../src/cluster/NatsConnection.js"
import { NatsEventsLive } from "../../src/cluster/NatsEvents.js"
import { Events } from "../../src/services/Events.js"
import { stepEvents } from "./eventFixtures.js"
import {
  capturingLogger,
  CuttableProxy,
  deleteStream,
  randomNamespace,
  received,
  withJsm
} from "./natsSupport.js"

/**
 * `Events.publishStep` on several hosts: the owner's own subscribers get the step at once and the
 * call answers then, leaving the stream's acknowledgement to what it returns (the RFQ's next step
 * waits for that: `engine test/engine/StepPublication.test.ts`); a host that closes waits for the
 * steps still on their way. NATS is reached through a proxy the tests cut or stall.
 */

const namespaces: Array<string> = []
afterAll(() => Promise.all(namespaces.map(deleteStream)))

const hostBehind = (proxy: CuttableProxy, publishDeadlineMs: number, scope: Scope.Scope) => {
  const namespace = randomNamespace()
  namespaces.push(namespace)
  return Effect.map(
    Layer.buildWithScope(NatsEventsLive({ servers: proxy.url, namespace, publishDeadlineMs }), scope),
    (ctx) => ({ events: Context.get(ctx, Events), namespace })
  )
}

const proxied = Effect.acquireRelease(
  Effect.promise(() => CuttableProxy.start()),
  (p) => Effect.promise(() => p.close())
)

describe("Events.publishStep over NATS", () => {
  for (const [trouble, cause] of [
    ["cut", (p: CuttableProxy) => p.cut()],
    ["stalled", (p: CuttableProxy) => p.stall()]
  ] as const) {
    it.scopedLive(
      `NATS ${trouble}: answers once the host's own subscribers have the step; the stream's part is what it returns`,
      () =>
        Effect.gen(function* () {
          const proxy = yield* proxied
          const { logged, capture } = capturingLogger()
          const { events } = yield* hostBehind(proxy, 600, yield* Effect.scope)
          const heard = yield* events.subscribe

          cause(proxy)
          const rest = yield* events.publishStep(stepEvents(801, 1)).pipe(Effect.provide(capture))
          // Already with the subscribers, though NATS cannot acknowledge anything.
          expect(received([...(yield* Queue.takeAll(heard))])).toStrictEqual(received(stepEvents(801, 1)))
          expect(rest).toBeDefined()
          const waiting = yield* Effect.fork(rest!)
          expect(Option.isNone(yield* Fiber.poll(waiting))).toBe(true)
          // What is left ends when the publication gave up (its deadline), logged, without failing.
          yield* Fiber.join(waiting).pipe(Effect.timeout("10 seconds"))
          expect(logged).toContainEqual(expect.stringMatching(/^events of step 801:1 not published/))
          proxy.resume()
        })
    )
  }

  it.scopedLive("a host that closes waits for the steps still on their way to the stream", () =>
    Effect.gen(function* () {
      const proxy = yield* proxied
      const scope = yield* Scope.make()
      const { events, namespace } = yield* hostBehind(proxy, 5_000, scope)

      proxy.cut()
      yield* events.publishStep(stepEvents(802, 1))
      // NATS comes back while the host is closing: the step still gets stored before it is gone.
      yield* Effect.fork(
        Effect.delay(
          Effect.sync(() => proxy.restore()),
          "500 millis"
        )
      )
      yield* Scope.close(scope, Exit.void)
      const stored = yield* Effect.promise(() =>
        withJsm((jsm) =>
          jsm.streams.getMessage(natsNames(namespace).stream, {
            last_by_subj: natsNames(namespace).eventSubject(802)
          })
        )
      )
      expect(stored?.header.get("Nats-Msg-Id")).toBe("802:1")
    })
  )
})

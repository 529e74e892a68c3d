import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, TestClock } from "effect"
import { ReadCache } from "../../src/storage/ReadCache.js"

describe("ReadCache", () => {
  it.effect("serves a loaded value until its TTL, then loads again", () =>
    Effect.gen(function* () {
      const cache = new ReadCache<string, number>(5_000, 10)
      let loads = 0
      const load = Effect.sync(() => ++loads)
      assert.strictEqual(yield* cache.get("k", load), 1)
      yield* TestClock.adjust(4_999)
      assert.strictEqual(yield* cache.get("k", load), 1)
      yield* TestClock.adjust(1)
      assert.strictEqual(yield* cache.get("k", load), 2)
    })
  )

  it.effect("clear() forgets everything, and a load in flight during it is not stored", () =>
    Effect.gen(function* () {
      const cache = new ReadCache<string, string>(60_000, 10)
      assert.strictEqual(yield* cache.get("k", Effect.succeed("before")), "before")
      cache.clear()
      assert.strictEqual(yield* cache.get("k", Effect.succeed("after")), "after")

      const gate = yield* Deferred.make<void>()
      const slow = yield* Effect.fork(cache.get("s", Effect.as(Deferred.await(gate), "stale")))
      yield* Effect.yieldNow()
      cache.clear() // a write lands while the read is in flight
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual(yield* Fiber.join(slow), "stale")
      assert.strictEqual(yield* cache.get("s", Effect.succeed("fresh")), "fresh")
    })
  )

  it.effect("holds at most maxEntries, dropping the oldest", () =>
    Effect.gen(function* () {
      const cache = new ReadCache<number, number>(60_000, 3)
      for (let i = 0; i < 10; i++) yield* cache.get(i, Effect.succeed(i))
      assert.strictEqual(cache.size, 3)
      assert.strictEqual(yield* cache.get(9, Effect.succeed(-1)), 9)
      assert.strictEqual(yield* cache.get(0, Effect.succeed(-1)), -1)
    })
  )
})

import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber } from "effect"
import * as fc from "fast-check"
import { PermitQueue } from "../../src/storage/PermitQueue.js"
import { isDeadlineExceeded } from "../../src/storage/StatementDeadline.js"

const sleep = (ms: number) => Effect.promise(() => new Promise((done) => setTimeout(done, ms)))

describe("PermitQueue (the PGlite session's one permit)", () => {
  it("is handed out first come, first served; a withdrawn waiter is skipped", () => {
    const queue = new PermitQueue()
    const order: Array<string> = []
    queue.request(() => order.push("a"))
    queue.request(() => order.push("b"))
    const withdrawC = queue.request(() => order.push("c"))
    queue.request(() => order.push("d"))
    assert.isTrue(withdrawC())
    assert.isFalse(withdrawC(), "a withdrawal happens once")
    queue.release()
    queue.release()
    queue.release()
    assert.deepStrictEqual(order, ["a", "b", "d"])
    const withdrawE = queue.request(() => order.push("e"))
    assert.deepStrictEqual(order, ["a", "b", "d", "e"], "free again: granted at once")
    assert.isFalse(withdrawE(), "granted: nothing to withdraw")
  })

  it.live("a wait past its deadline fails with the deadline error; the holder keeps the permit", () =>
    Effect.gen(function* () {
      const queue = new PermitQueue()
      yield* queue.take(undefined)
      const exit = yield* Effect.exit(queue.take(30))
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit))
        assert.isTrue(isDeadlineExceeded(exit.cause._tag === "Fail" ? exit.cause.error : undefined))
      assert.strictEqual(queue.waiting, 0)
      queue.release()
      yield* queue.take(30)
    })
  )

  it.live("an interrupted waiter never keeps the permit, granted or not", () =>
    Effect.gen(function* () {
      const queue = new PermitQueue()
      yield* queue.take(undefined)
      const waiter = yield* Effect.fork(queue.withPermit(undefined)(Effect.never))
      yield* sleep(5)
      queue.release()
      yield* sleep(5)
      yield* Fiber.interrupt(waiter)
      // The waiter got the permit and then was interrupted: the permit came back.
      yield* queue.take(50)
    })
  )

  it.live("random holders, waiters with deadlines and interruptions never lose or double the permit", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.record({
              hold: fc.integer({ min: 0, max: 3 }),
              deadline: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
              interruptAfter: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined })
            }),
            { minLength: 1, maxLength: 12 }
          ),
          async (plans) => {
            const queue = new PermitQueue()
            let holders = 0
            let maxHolders = 0
            const program = Effect.forEach(
              plans,
              (plan) =>
                Effect.gen(function* () {
                  const fiber = yield* Effect.fork(
                    queue.withPermit(plan.deadline)(
                      Effect.acquireUseRelease(
                        Effect.sync(() => {
                          holders++
                          maxHolders = Math.max(maxHolders, holders)
                        }),
                        () => sleep(plan.hold),
                        () => Effect.sync(() => holders--)
                      )
                    )
                  )
                  if (plan.interruptAfter !== undefined) {
                    yield* sleep(plan.interruptAfter)
                    yield* Fiber.interrupt(fiber)
                  }
                  return fiber
                }),
              { concurrency: "unbounded" }
            ).pipe(Effect.flatMap((fibers) => Effect.forEach(fibers, Fiber.await)))
            await Effect.runPromise(program)
            if (maxHolders > 1) throw new Error(`${maxHolders} holders at once`)
            // Free at the end: a take succeeds at once.
            await Effect.runPromise(queue.take(20))
          }
        ),
        { numRuns: 60 }
      )
    )
  )
})

import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, FiberId } from "effect"
import { Mailbox } from "../../src/rfq/Mailbox.js"

// Lets every fiber that can run, run.
const settle = Effect.repeatN(Effect.yieldNow(), 20)

describe("Mailbox", () => {
  it.effect("runs one body at a time, in the order they came, under contention", () =>
    Effect.gen(function* () {
      const mailbox = new Mailbox()
      let inside = 0
      let most = 0
      const order: Array<number> = []
      const body = (i: number) =>
        Effect.gen(function* () {
          inside++
          most = Math.max(most, inside)
          order.push(i)
          // Gives the others every chance to get in.
          yield* Effect.yieldNow()
          yield* Effect.sleep(0)
          inside--
          return i
        })
      const results = yield* Effect.all(
        Array.from({ length: 25 }, (_, i) => mailbox.run(body(i))),
        { concurrency: "unbounded" }
      )
      expect(most).toBe(1)
      expect(results).toEqual(Array.from({ length: 25 }, (_, i) => i))
      expect(order).toEqual(Array.from({ length: 25 }, (_, i) => i))
      expect(mailbox.busy).toBe(false)
    })
  )

  it.effect("a body interrupted while it waits never runs, and the next one does", () =>
    Effect.gen(function* () {
      const mailbox = new Mailbox()
      const gate = yield* Deferred.make<void>()
      const ran: Array<string> = []
      const first = yield* Effect.fork(
        mailbox.run(
          Effect.zipRight(
            Deferred.await(gate),
            Effect.sync(() => ran.push("a"))
          )
        )
      )
      yield* settle
      const second = yield* Effect.fork(mailbox.run(Effect.sync(() => ran.push("b"))))
      const third = yield* Effect.fork(mailbox.run(Effect.sync(() => ran.push("c"))))
      yield* settle
      yield* Fiber.interrupt(second)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(first)
      yield* Fiber.join(third)
      expect(ran).toEqual(["a", "c"])
      expect(mailbox.busy).toBe(false)
    })
  )

  it.effect("a body interrupted while it holds the mailbox gives it back", () =>
    Effect.gen(function* () {
      const mailbox = new Mailbox()
      const holding = yield* Effect.fork(mailbox.run(Effect.never))
      yield* settle
      expect(mailbox.busy).toBe(true)
      const next = yield* Effect.fork(mailbox.run(Effect.succeed("next")))
      yield* settle
      expect(next.unsafePoll()).toBeNull()
      yield* Fiber.interrupt(holding)
      expect(yield* Fiber.join(next)).toBe("next")
      expect(mailbox.busy).toBe(false)
    })
  )

  it.effect("a failure or a defect gives the mailbox back, and reaches its caller unchanged", () =>
    Effect.gen(function* () {
      const mailbox = new Mailbox()
      const failed = yield* Effect.exit(mailbox.run(Effect.fail("refused")))
      expect(failed).toEqual(Exit.fail("refused"))
      const died = yield* Effect.exit(mailbox.run(Effect.dieMessage("broken")))
      expect(Exit.isFailure(died) && !Exit.isInterrupted(died)).toBe(true)
      expect(yield* mailbox.run(Effect.succeed(1))).toBe(1)
      expect(mailbox.busy).toBe(false)
    })
  )

  it.effect("a waiter interrupted just as it is woken leaves no one waiting", () =>
    Effect.gen(function* () {
      const mailbox = new Mailbox()
      const gate = yield* Deferred.make<void>()
      const ran: Array<string> = []
      let woken: Fiber.RuntimeFiber<unknown> | undefined
      // The holder's last act: an interruption told to the first waiter, which the waiter reads
      // only after the release has woken it. Woken alone, it would take the wake-up with it.
      const holder = yield* Effect.fork(
        mailbox.run(
          Effect.zipRight(
            Deferred.await(gate),
            Effect.sync(() => woken!.unsafeInterruptAsFork(FiberId.none))
          )
        )
      )
      yield* settle
      woken = yield* Effect.fork(mailbox.run(Effect.sync(() => ran.push("woken"))))
      yield* settle
      const other = yield* Effect.fork(mailbox.run(Effect.sync(() => ran.push("other"))))
      yield* settle
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(holder)
      yield* Fiber.join(other)
      expect(Exit.isInterrupted(yield* Fiber.await(woken))).toBe(true)
      expect(ran).toEqual(["other"])
      expect(mailbox.busy).toBe(false)
      // And the mailbox still works.
      expect(yield* mailbox.run(Effect.succeed("after"))).toBe("after")
    })
  )
})

import { apiError, isApiError } from "@rfq/engine"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber } from "effect"
import { answerOfCause } from "../src/ErrorTable.js"

/**
 * How a failed call is answered when the failure is not an `ApiError`: a step refused by the RFQ's
 * version (its owner changed mid-command, several hosts) is a 503 the client may retry, also when
 * the defect crossed the cluster as plain text; any other defect stays a 500.
 */
describe("answerOfCause", () => {
  const answer = (cause: Cause.Cause<unknown>) => answerOfCause(cause, isApiError, "request failed")

  it.effect("a stale step is 503 service unavailable, as an object or as text from another host", () =>
    Effect.gen(function* () {
      const local = new Error(
        "RfqStore.applyStep: stale step: event 4 of RFQ 7 onto event 3 (expected 1 row(s), wrote 0)"
      )
      const remote = { name: "Error", message: local.message }
      for (const defect of [local, remote]) {
        const answered = yield* answer(Cause.die(defect))
        assert.strictEqual(answered.status, 503)
        assert.strictEqual(answered.message, "service unavailable")
      }
    })
  )

  it.effect("another step mismatch, or any other defect, is 500", () =>
    Effect.gen(function* () {
      const mismatch = new Error("RfqStore.applyStep: update active quote 4 (expected 1 row(s), wrote 0)")
      assert.strictEqual((yield* answer(Cause.die(mismatch))).status, 500)
      assert.strictEqual((yield* answer(Cause.die("boom"))).status, 500)
      assert.deepStrictEqual(yield* answer(Cause.fail(apiError("rfqNotFound"))), apiError("rfqNotFound"))
    })
  )

  it.effect(
    "an interruption from something the call waited on is a 503 the client hears; the call's own stays one",
    () =>
      Effect.gen(function* () {
        // An inner fiber interrupted and joined: the caller is not interrupted, its handler answers.
        const inner = Effect.flatMap(Effect.fork(Effect.never), (fiber) =>
          Effect.zipRight(Fiber.interrupt(fiber), Fiber.join(fiber))
        )
        const answered = yield* Effect.catchAllCause(inner, answer)
        assert.strictEqual(answered.status, 503)
        assert.deepStrictEqual(answered.reason, [
          "the call was cut short inside the service; read before sending it again"
        ])
        // The call's own interruption (client gone, shutdown) skips the handler: still an interruption.
        const own = yield* Effect.fork(Effect.catchAllCause(Effect.never, answer))
        yield* Effect.yieldNow()
        assert.isTrue(Exit.isInterrupted(yield* Fiber.interrupt(own)))
      })
  )
})

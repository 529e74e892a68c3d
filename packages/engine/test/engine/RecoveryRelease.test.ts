import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Option } from "effect"
import { ActiveQuotes } from "../../src/engine/ActiveQuotes.js"
import { Engine } from "../../src/engine/Engine.js"
import { Recovery } from "../../src/engine/Recovery.js"
import {
  type EngineContext,
  quoteAtMark,
  sharedOwnerEngine,
  spreadRfqRequest
} from "../support/engineHarness.js"

/**
 * An engine that shares ownership lets go of the RFQs of a shard it lost (`Recovery.release`):
 * their actors and their quotes in its active-quote index are forgotten, so nothing of its memory
 * answers for an RFQ another engine now changes; other RFQs are kept.
 */

const legs = ["BTC-27DEC30-90000-C", "BTC-27DEC30-110000-C"] as const

describe("Recovery.release", () => {
  it.scoped("forgets the released RFQs' actors and indexed quotes, and only theirs", () =>
    Effect.gen(function* () {
      const { context, callers } = yield* sharedOwnerEngine
      const engine = Context.get(context, Engine)
      const index = Context.get(context, ActiveQuotes)
      const recovery = Context.get(context, Recovery)

      const rfqAndQuote = (requestId: number) =>
        Effect.gen(function* () {
          const { rfqId } = yield* engine.createRfq(
            callers.taker,
            yield* spreadRfqRequest(callers, legs, requestId)
          )
          const { rfqQuoteId } = yield* engine.createQuote(
            callers.maker1,
            yield* quoteAtMark(context as unknown as EngineContext, rfqId, legs)
          )
          return { rfqId, rfqQuoteId }
        })

      const released = yield* rfqAndQuote(1)
      const kept = yield* rfqAndQuote(2)
      assert.isTrue(Option.isSome(yield* index.find(released.rfqQuoteId)))

      assert.strictEqual(yield* recovery.release((id) => id === released.rfqId), 1)
      assert.isTrue(Option.isNone(yield* index.find(released.rfqQuoteId)))
      assert.deepStrictEqual(
        Option.map(yield* index.find(kept.rfqQuoteId), (q) => q.rfqId),
        Option.some(kept.rfqId)
      )
    })
  )
})

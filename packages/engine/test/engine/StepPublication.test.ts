import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Either, Fiber, Layer, Option } from "effect"
import { decodeRequest } from "../../src/api/Decode.js"
import { LegPricesRequest } from "../../src/api/RfqRequests.js"
import { Engine } from "../../src/engine/Engine.js"
import { Events, EventsLive } from "../../src/services/Events.js"
import {
  type EngineContext,
  quoteAtMark,
  sharedOwnerEngineWith,
  spreadRfqRequest
} from "../support/engineHarness.js"

/**
 * A command's answer does not wait for what is left of its step's publication (on several hosts,
 * the stream's acknowledgement: `Events.publishStep`), and the RFQ's next step waits for it, so
 * steps reach the stream in order and at most an RFQ's last step is ever still on its way
 * (`RfqActors.ts`). Here what is left is a gate the test opens.
 */

const legs = ["BTC-27DEC30-90000-C", "BTC-27DEC30-110000-C"] as const

/** In-memory events whose `publishStep` records each step (`rfqId:seq`) and leaves `gate` to wait for. */
const gatedEvents = (gate: Deferred.Deferred<void>, handed: Array<string>) =>
  Layer.effect(
    Events,
    Effect.map(Events, (inner) => ({
      ...inner,
      publishStep: (events) =>
        Effect.zipRight(
          inner.publish(events),
          Effect.sync(() => {
            for (const e of events) handed.push(`${e.view.rfq.id}:${e.seq}`)
            return Deferred.await(gate)
          })
        )
    }))
  ).pipe(Layer.provide(EventsLive))

describe("a step's publication", () => {
  it.scopedLive("the answer goes before the stream's part; the RFQ's next step waits for it", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const handed: Array<string> = []
      const { context, callers, sql } = yield* sharedOwnerEngineWith(gatedEvents(gate, handed))
      const engine = Context.get(context, Engine)
      const quotesOf = (rfqId: number) =>
        Effect.map(
          sql<{ n: number }>`SELECT count(*)::int AS n FROM quotes WHERE rfq_id = ${rfqId}`,
          (r) => r[0]!.n
        )

      // The create answers with its step's publication still open.
      const { rfqId } = yield* engine
        .createRfq(callers.taker, yield* spreadRfqRequest(callers, legs))
        .pipe(Effect.timeout("10 seconds"))
      assert.deepStrictEqual(handed, [`${rfqId}:1`])
      // A read needs no step: it is answered meanwhile.
      const read = yield* engine.getRfq(callers.taker, rfqId).pipe(Effect.timeout("10 seconds"))
      assert.strictEqual((read as { rfqId: number }).rfqId, rfqId)

      // The next step waits: nothing of the quote is written while the create's publication is open.
      const request = yield* quoteAtMark(context as unknown as EngineContext, rfqId, legs)
      const quoting = yield* Effect.fork(engine.createQuote(callers.maker1, request))
      yield* Effect.sleep("300 millis")
      assert.isTrue(Option.isNone(yield* Fiber.poll(quoting)))
      assert.strictEqual(yield* quotesOf(rfqId), 0)
      assert.deepStrictEqual(handed, [`${rfqId}:1`])

      yield* Deferred.succeed(gate, undefined)
      const { rfqQuoteId } = yield* Fiber.join(quoting).pipe(Effect.timeout("10 seconds"))
      assert.isNumber(rfqQuoteId)
      assert.strictEqual(yield* quotesOf(rfqId), 1)
      assert.deepStrictEqual(handed, [`${rfqId}:1`, `${rfqId}:2`])
    })
  )

  it.scopedLive(
    "reads need no mailbox: while a command holds it, leg prices and the taker's book answer",
    () =>
      Effect.gen(function* () {
        const gate = yield* Deferred.make<void>()
        const { context, callers } = yield* sharedOwnerEngineWith(gatedEvents(gate, []))
        const engine = Context.get(context, Engine)
        const { rfqId } = yield* engine.createRfq(callers.taker, yield* spreadRfqRequest(callers, legs))
        // The quote's command takes the mailbox and waits there for the create's publication.
        const request = yield* quoteAtMark(context as unknown as EngineContext, rfqId, legs)
        const quoting = yield* Effect.fork(engine.createQuote(callers.maker1, request))
        yield* Effect.sleep("200 millis")
        assert.isTrue(Option.isNone(yield* Fiber.poll(quoting)))

        const rfq = (yield* engine.getRfq(callers.maker1, rfqId)) as {
          markPrice: number
          legs: ReadonlyArray<{ instrumentName: string; direction: "buy" | "sell"; ratio: number }>
        }
        const priced = yield* engine
          .legPrices(
            callers.maker1,
            yield* decodeRequest(LegPricesRequest, {
              rfqId,
              price: Math.round(rfq.markPrice * 10_000) / 10_000,
              legs: rfq.legs.map(({ instrumentName, direction, ratio }) => ({
                instrumentName,
                direction,
                ratio
              }))
            })
          )
          .pipe(Effect.timeout("10 seconds"))
        assert.strictEqual(priced.legs.length, 2)
        // The book as of the last committed step: the quote still waiting is not in it yet.
        const book = engine.peekTakerQuotes(callers.taker, rfqId)
        assert.isTrue(book !== undefined && Either.isRight(book))
        assert.notInclude(JSON.stringify(book), '"rfqQuoteId"')
        assert.isTrue(Option.isNone(yield* Fiber.poll(quoting)))

        yield* Deferred.succeed(gate, undefined)
        const { rfqQuoteId } = yield* Fiber.join(quoting).pipe(Effect.timeout("10 seconds"))
        assert.include(JSON.stringify(engine.peekTakerQuotes(callers.taker, rfqId)), String(rfqQuoteId))
      })
  )
})

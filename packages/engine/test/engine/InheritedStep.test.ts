import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer, Option } from "effect"
import { Engine } from "../../src/engine/Engine.js"
import { Recovery } from "../../src/engine/Recovery.js"
import { inherits } from "../../src/rfq/InheritedStep.js"
import { RfqStore } from "../../src/rfq/RfqStore.js"
import { type EngineEvent, Events, EventsLive, STEP_DEDUPE_WINDOW_MS } from "../../src/services/Events.js"
import {
  type EngineContext,
  quoteAtMark,
  sharedOwnerEngineOn,
  sharedOwnerEngineWith,
  spreadRfqRequest
} from "../support/engineHarness.js"
import { recordingEvents } from "../support/recordingEvents.js"

/**
 * A step committed by one engine and never published (its host killed between the answer and the
 * stream) is published again by the next engine to touch the RFQ, before that engine's own step
 * (`rfq/InheritedStep.ts`): every host delivers an RFQ's steps in order and drops one numbered below
 * a step it delivered, so a lost step published after a later one would never be heard. The
 * take-over is one such engine; the new owner commanding the RFQ, or expiring a due quote on a
 * read, before its take-over ran (it holds the shard a moment before it adopts the shard's RFQs)
 * is the other.
 */

const legs = ["BTC-27DEC30-90000-C", "BTC-27DEC30-110000-C"] as const

const told = (events: ReadonlyArray<EngineEvent>) =>
  events.map((e) => [e.type, e.event, e.seq, "quote" in e ? e.quote?.id : undefined, e.view.status])

/** An RFQ quoted by maker-1 on a first engine whose events never leave it; a second engine beside it. */
const quotedThenTakenBy = (owns: (rfqId: number) => boolean, validForMs?: number) =>
  Effect.gen(function* () {
    // The first engine owns nothing (it lost the shard): no timer of its own expires the quote.
    const { context, callers, sql, venueAccounts } = yield* sharedOwnerEngineWith(EventsLive, () => false)
    const first = Context.get(context, Engine)
    const { rfqId } = yield* first.createRfq(callers.taker, yield* spreadRfqRequest(callers, legs))
    const ctx = context as unknown as EngineContext
    const { rfqQuoteId } = yield* first.createQuote(
      callers.maker1,
      yield* quoteAtMark(
        ctx,
        rfqId,
        legs,
        validForMs === undefined ? {} : { validUntil: Date.now() + validForMs }
      )
    )
    const heard: Array<EngineEvent> = []
    const next = yield* sharedOwnerEngineOn(sql, venueAccounts, recordingEvents(heard), owns)
    return { rfqId, rfqQuoteId, callers, heard, ctx, next, first, sql }
  })

/** Maker-2 quotes through the second engine: heard are the lost step (maker-1's quote), then its own. */
const secondQuoteAfterTheLostStep = (taken: Effect.Effect.Success<ReturnType<typeof quotedThenTakenBy>>) =>
  Effect.gen(function* () {
    const { rfqId, rfqQuoteId, callers, heard, ctx, next } = taken
    const second = yield* Context.get(next, Engine).createQuote(
      callers.maker2,
      yield* quoteAtMark(ctx, rfqId, legs)
    )
    assert.deepStrictEqual(told(heard), [
      ["quote", "created", 2, rfqQuoteId, "open"],
      ["quote", "created", 3, second.rfqQuoteId, "open"]
    ])
  })

describe("the last step an engine inherits from storage", () => {
  it.scopedLive("the new owner's command before its take-over ran: the lost step first, then its own", () =>
    Effect.gen(function* () {
      const taken = yield* quotedThenTakenBy(() => true)
      const { rfqId, heard, next } = taken
      yield* secondQuoteAfterTheLostStep(taken)
      // The take-over that then runs publishes nothing again: the inheritance is spent.
      yield* Context.get(next as Context.Context<Recovery>, Recovery).adopt((id) => id === rfqId)
      assert.strictEqual(heard.length, 2, JSON.stringify(told(heard)))
    })
  )

  it.scopedLive(
    "a read on the new owner before its take-over ran expires a due quote: the lost step first",
    () =>
      Effect.gen(function* () {
        const { rfqId, rfqQuoteId, callers, heard, next } = yield* quotedThenTakenBy(() => true, 300)
        yield* Effect.sleep(400)
        yield* Context.get(next, Engine).getRfq(callers.taker, rfqId)
        assert.deepStrictEqual(told(heard), [
          ["quote", "created", 2, rfqQuoteId, "open"],
          ["quote", "updated", 3, rfqQuoteId, "open"]
        ])
        assert.strictEqual((heard[1] as { quote: { status: string } }).quote.status, "expired")
      })
  )

  it.scopedLive("a take-over with no command before it publishes the lost step once", () =>
    Effect.gen(function* () {
      const taken = yield* quotedThenTakenBy(() => true)
      const recovery = Context.get(taken.next as Context.Context<Recovery>, Recovery)
      yield* recovery.adopt((id) => id === taken.rfqId)
      yield* recovery.adopt((id) => id === taken.rfqId)
      yield* secondQuoteAfterTheLostStep(taken)
    })
  )

  it.scopedLive("a take-over publishes the closing step of an RFQ that closed lately, once", () =>
    Effect.gen(function* () {
      const { rfqId, rfqQuoteId, callers, heard, next, first } = yield* quotedThenTakenBy(() => true)
      // The dead owner's accept: answered, its step (the fill that closed the RFQ) never published.
      yield* first.trade(callers.taker, rfqQuoteId)
      const recovery = Context.get(next as Context.Context<Recovery>, Recovery)
      // Another shard's take-over leaves it alone; its own publishes the step, a second one nothing.
      yield* recovery.adopt((id) => id !== rfqId)
      assert.deepStrictEqual(heard, [])
      yield* recovery.adopt((id) => id === rfqId)
      yield* recovery.adopt((id) => id === rfqId)
      const told = heard.map((e) => [e.type, e.event, e.seq, e.view.status])
      assert.isAbove(told.length, 0)
      // The accept's second step (the first started the settlement), and nothing else.
      for (const t of told) assert.strictEqual(t[2], 4, JSON.stringify(told))
      assert.deepInclude(told, ["rfq", "updated", 4, "filled"])
      assert.deepInclude(told, ["trade", "created", 4, "filled"])
      assert.strictEqual(new Set(told.map((t) => JSON.stringify(t))).size, told.length, "each told once")
      assert.strictEqual(
        (heard.find((e) => e.type === "quote") as { quote: { id: number; status: string } }).quote.status,
        "filled"
      )
    })
  )

  it.scopedLive("a take-over publishes the deletion of an RFQ deleted lately, and nothing of it before", () =>
    Effect.gen(function* () {
      const { rfqId, callers, heard, next, first } = yield* quotedThenTakenBy(() => true)
      // The dead owner's cancel and delete: both answered, neither step published.
      yield* first.cancelRfq(callers.taker, rfqId)
      yield* first.deleteRfq(callers.taker, rfqId)
      const recovery = Context.get(next as Context.Context<Recovery>, Recovery)
      yield* recovery.adopt((id) => id !== rfqId)
      assert.deepStrictEqual(heard, [])
      yield* recovery.adopt((id) => id === rfqId)
      // The delete step (4, after the create, the quote and the cancel), with the RFQ as it was.
      assert.deepStrictEqual(
        heard.map((e) => [e.type, e.event, e.seq, e.view.rfq.id, e.view.status]),
        [["rfq", "deleted", 4, rfqId, "cancelled"]]
      )
      // Still gone for every read and command on the engine that published it.
      const engine = Context.get(next, Engine)
      const read = yield* Effect.flip(engine.getRfq(callers.taker, rfqId))
      assert.strictEqual(read.message, "rfq not found")
    })
  )

  it.scopedLive("a deletion older than the duplicate window is not published again", () =>
    Effect.gen(function* () {
      const { rfqId, callers, heard, next, first, sql } = yield* quotedThenTakenBy(() => true)
      yield* first.cancelRfq(callers.taker, rfqId)
      yield* first.deleteRfq(callers.taker, rfqId)
      // Deleted (and cancelled) just over the window ago: the stream has let go of its copy.
      const back = STEP_DEDUPE_WINDOW_MS + 1_000
      yield* sql`UPDATE rfqs SET deleted_at = deleted_at - ${back}, closed_at = closed_at - ${back}
        WHERE id = ${rfqId}`
      yield* Context.get(next as Context.Context<Recovery>, Recovery).adopt((id) => id === rfqId)
      assert.deepStrictEqual(heard, [])
    })
  )

  it.scopedLive(
    "a closed RFQ inherits its closing step only within the duplicate window; a live one always",
    () =>
      Effect.gen(function* () {
        const { rfqId, callers, next } = yield* quotedThenTakenBy(() => true)
        const store = Context.get(next as Context.Context<RfqStore>, RfqStore)
        const open = Option.getOrThrow(yield* store.load(rfqId))
        assert.isTrue(inherits(open, Date.now() + 24 * 3600_000))
        yield* Context.get(next, Engine).cancelRfq(callers.taker, rfqId)
        const cancelled = Option.getOrThrow(yield* store.load(rfqId))
        const closedAt = cancelled.state.closedAt!
        assert.isTrue(inherits(cancelled, closedAt + STEP_DEDUPE_WINDOW_MS))
        assert.isFalse(inherits(cancelled, closedAt + STEP_DEDUPE_WINDOW_MS + 1))
      })
  )

  it.scopedLive(
    "a take-over publishes its RFQs' last steps all at once: a stream that does not answer holds it up once",
    () =>
      Effect.gen(function* () {
        const { context, callers, sql, venueAccounts } = yield* sharedOwnerEngineWith(EventsLive, () => false)
        const first = Context.get(context, Engine)
        const ctx = context as unknown as EngineContext
        const rfqIds: Array<number> = []
        for (let i = 0; i < 3; i++) {
          const { rfqId } = yield* first.createRfq(callers.taker, yield* spreadRfqRequest(callers, legs))
          yield* first.createQuote(callers.maker1, yield* quoteAtMark(ctx, rfqId, legs))
          rfqIds.push(rfqId)
        }
        // A stream that holds every publication until the gate opens; how many wait at once.
        const gate = yield* Deferred.make<void>()
        let waiting = 0
        const heard: Array<EngineEvent> = []
        const held = Layer.effect(
          Events,
          Effect.map(Events, (inner) => ({
            ...inner,
            publish: (events: ReadonlyArray<EngineEvent>) =>
              Effect.sync(() => waiting++).pipe(
                Effect.zipRight(Deferred.await(gate)),
                Effect.zipRight(Effect.sync(() => heard.push(...events))),
                Effect.zipRight(inner.publish(events))
              )
          }))
        ).pipe(Layer.provide(EventsLive))
        const next = yield* sharedOwnerEngineOn(sql, venueAccounts, held)
        const adopting = yield* Effect.fork(
          Context.get(next as Context.Context<Recovery>, Recovery).adopt((id) => rfqIds.includes(id))
        )
        // One after the other, the second would never start while the first waits.
        for (let tries = 0; waiting < rfqIds.length && tries < 500; tries++) yield* Effect.sleep(10)
        assert.strictEqual(waiting, rfqIds.length, "every last step on its way at once")
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(adopting)
        assert.sameMembers(
          heard.map((e) => `${e.view.rfq.id}:${e.seq}`),
          rfqIds.map((id) => `${id}:2`)
        )
      })
  )
})

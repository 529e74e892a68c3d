import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { decodeRequest } from "../../src/api/Decode.js"
import { DeleteQuoteRequest, UpdateQuoteRequest } from "../../src/api/QuoteRequests.js"
import { Engine } from "../../src/engine/Engine.js"
import { Recovery } from "../../src/engine/Recovery.js"
import { RfqStore } from "../../src/rfq/RfqStore.js"
import { replayLastStep } from "../../src/rfq/StepReplay.js"
import { type EngineEvent, Events, EventsLive } from "../../src/services/Events.js"
import {
  type EngineContext,
  markPrices,
  quoteAtMark,
  sharedOwnerEngineOn,
  sharedOwnerEngineWith,
  spreadRfqRequest
} from "../support/engineHarness.js"
import { recordingEvents as recordingAll } from "../support/recordingEvents.js"

/**
 * A take-over publishes the dead owner's last step again (`engine/Recovery.ts`), rebuilt from its
 * event-log row (`rfq/StepReplay.ts`): here, after every kind of step, what the row rebuilds must
 * be what the step published. A step lost between its commit and the stream (the owner killed in
 * that moment) is then heard on every host as it would have been.
 */

const legs = ["BTC-27DEC30-90000-C", "BTC-27DEC30-110000-C"] as const

/** In-memory events that also keep each step's events, by `rfqId:seq`. */
const recordingEvents = (steps: Map<string, ReadonlyArray<EngineEvent>>) =>
  Layer.effect(
    Events,
    Effect.map(Events, (inner) => ({
      ...inner,
      publishStep: (events: ReadonlyArray<EngineEvent>) =>
        Effect.sync(() => {
          const first = events[0]
          if (first !== undefined) steps.set(`${first.view.rfq.id}:${first.seq}`, events)
        }).pipe(Effect.zipRight(inner.publishStep(events)))
    }))
  ).pipe(Layer.provide(EventsLive))

/** What a subscriber is told: each event's kind, the quote it is about and its status, the RFQ's status. */
const heard = (events: ReadonlyArray<EngineEvent>) =>
  events.map((e) => ({
    type: e.type,
    event: e.event,
    seq: e.seq,
    quote: "quote" in e && e.quote !== undefined ? { id: e.quote.id, status: e.quote.status } : undefined,
    status: e.view.status,
    quotes: e.view.quotes.map((q) => `${q.id}:${q.status}`),
    trade: e.view.trade?.id
  }))

describe("a dead owner's last step, rebuilt from the event log", () => {
  it.scopedLive("is the step as it was published: quote put, update, cancel, accept", () =>
    Effect.gen(function* () {
      const steps = new Map<string, ReadonlyArray<EngineEvent>>()
      const { context, callers } = yield* sharedOwnerEngineWith(recordingEvents(steps))
      const engine = Context.get(context, Engine)
      const store = Context.get(context as Context.Context<RfqStore>, RfqStore)

      /** Rebuilds the RFQ's last step and compares it with what that step published. */
      const checkLastStep = (rfqId: number, what: string) =>
        Effect.gen(function* () {
          // What a take-over restores: the RFQ as stored after its last step.
          const actor = Option.getOrThrow(yield* store.load(rfqId))
          const last = Option.getOrThrow(yield* store.lastEvent(rfqId))
          assert.strictEqual(last.seq, actor.seq, `${what}: the log's last event is the actor's`)
          const replayed = yield* replayLastStep(
            actor.value,
            actor.state,
            actor.seq,
            last.payload,
            store.quote
          )
          assert.isDefined(replayed, `${what}: rebuilt`)
          const published = steps.get(`${rfqId}:${actor.seq}`)!
          assert.deepStrictEqual(heard(replayed!), heard(published), what)
          return { replayed: replayed!, published }
        })

      const { rfqId } = yield* engine.createRfq(callers.taker, yield* spreadRfqRequest(callers, legs))
      const ctx = context as unknown as EngineContext
      const put1 = yield* engine.createQuote(callers.maker1, yield* quoteAtMark(ctx, rfqId, legs))
      const created = yield* checkLastStep(rfqId, "quote put")
      // A new quote's event carries the whole quote as stored (absent fields and undefined ones alike).
      const asJson = (e: EngineEvent | undefined) =>
        JSON.parse(JSON.stringify((e as { quote: unknown }).quote))
      assert.deepStrictEqual(asJson(created.replayed[0]), asJson(created.published[0]))

      const prices = yield* markPrices(ctx, "DBT", "BTC", legs)
      const update = yield* decodeRequest(UpdateQuoteRequest, {
        rfqQuoteId: put1.rfqQuoteId,
        amount: 50,
        settlementOption: "DBT",
        legs: prices.map((p) => ({
          instrumentName: p.instrumentName,
          price: Number(p.price.value) / 10 ** p.price.scale
        }))
      })
      yield* engine.updateQuote(callers.maker1, update)
      const updated = yield* checkLastStep(rfqId, "quote update")
      assert.strictEqual(updated.replayed[0]!.event, "updated")

      const put2 = yield* engine.createQuote(callers.maker2, yield* quoteAtMark(ctx, rfqId, legs))
      yield* checkLastStep(rfqId, "second quote put")
      yield* engine.deleteQuote(
        callers.maker2,
        yield* decodeRequest(DeleteQuoteRequest, { rfqQuoteId: put2.rfqQuoteId })
      )
      const cancelled = yield* checkLastStep(rfqId, "quote cancel")
      assert.deepStrictEqual(
        heard(cancelled.replayed).map((e) => [e.type, e.event, e.quote?.id]),
        [["quote", "deleted", put2.rfqQuoteId]]
      )

      yield* engine.trade(callers.taker, put1.rfqQuoteId)
      const accepted = yield* checkLastStep(rfqId, "accept (the settled step)")
      assert.includeDeepMembers(
        heard(accepted.replayed).map((e) => [e.type, e.event]),
        [
          ["quote", "updated"],
          ["rfq", "updated"]
        ]
      )
    })
  )

  it.scopedLive(
    "answers nothing for a row it cannot read as a step, so the take-over publishes the RFQ as it is",
    () =>
      Effect.gen(function* () {
        const { context, callers } = yield* sharedOwnerEngineWith()
        const engine = Context.get(context, Engine)
        const store = Context.get(context as Context.Context<RfqStore>, RfqStore)
        const { rfqId } = yield* engine.createRfq(callers.taker, yield* spreadRfqRequest(callers, legs))
        const actor = Option.getOrThrow(yield* store.load(rfqId))
        const creation = Option.getOrThrow(yield* store.lastEvent(rfqId))
        assert.strictEqual(creation.seq, 1)
        for (const payload of [
          creation.payload,
          null,
          { value: "open" },
          { value: "closed", effects: [] },
          { value: "open", effects: [null, 3] }
        ]) {
          assert.isUndefined(yield* replayLastStep(actor.value, actor.state, actor.seq, payload, store.quote))
        }
        // A closed quote storage no longer has cannot be told: nothing rather than half a step.
        const missing = {
          value: "open",
          effects: [{ type: "quotesClosed", at: 1, closed: [{ quoteId: 999_999, status: "cancelled" }] }]
        }
        assert.isUndefined(yield* replayLastStep(actor.value, actor.state, actor.seq, missing, store.quote))
      })
  )

  it.scopedLive("a take-over publishes the dead owner's unpublished last step as that step", () =>
    Effect.gen(function* () {
      // The first engine's events stay in its memory: its last step never reaches the other.
      const { context, callers, sql, venueAccounts } = yield* sharedOwnerEngineWith()
      const engine = Context.get(context, Engine)
      const { rfqId } = yield* engine.createRfq(callers.taker, yield* spreadRfqRequest(callers, legs))
      const ctx = context as unknown as EngineContext
      const { rfqQuoteId } = yield* engine.createQuote(callers.maker1, yield* quoteAtMark(ctx, rfqId, legs))

      // A second engine on the same database takes the RFQ over, as a host acquiring its shard does.
      const published: Array<EngineEvent> = []
      const next = yield* sharedOwnerEngineOn(sql, venueAccounts, recordingAll(published))
      yield* Context.get(next as Context.Context<Recovery>, Recovery).adopt((id) => id === rfqId)

      // The quote's own event, under the step's number: the taker's sessions on every host hear it.
      assert.deepStrictEqual(
        heard(published).map((e) => [e.type, e.event, e.seq, e.quote?.id, e.quote?.status]),
        [["quote", "created", 2, rfqQuoteId, "active"]]
      )
    })
  )
})

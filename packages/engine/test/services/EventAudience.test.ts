import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import type { Caller } from "../../src/rfq/RfqRecord.js"
import { AudienceIndex, audienceOf } from "../../src/services/EventAudience.js"
import { EventInterests } from "../../src/services/EventInterests.js"
import { CHANNELS as channels, renderEvent } from "../../src/services/Events.js"
import { eventsArb, reference, stepEvents } from "../cluster/eventFixtures.js"

/** Callers of every kind: the fixtures' takers and makers, a desk nobody invites, a maker id nobody invites. */
const callerArb: fc.Arbitrary<Caller> = fc.oneof(
  fc
    .constantFrom(...reference.takers)
    .map((t): Caller => ({ deskId: t.deskId, userId: t.userId, roles: ["trader"] })),
  fc
    .constantFrom(...reference.makers)
    .map((m): Caller => ({ deskId: m.deskId, userId: m.userId, roles: ["trader"], makerId: m.makerId })),
  fc.record({
    deskId: fc.integer({ min: 1, max: 12 }),
    userId: fc.constant(99),
    roles: fc.constant<Caller["roles"]>(["viewer"]),
    makerId: fc.option(fc.constantFrom("maker-1", "maker-9", "x\n\u00e9"), { nil: undefined })
  })
)

describe("audienceOf and AudienceIndex", () => {
  it("whoever renderEvent shows anything of a step to is in its audience, on every channel", () =>
    fc.assert(
      fc.property(
        eventsArb,
        fc.array(fc.tuple(fc.constantFrom(...channels), callerArb)),
        (events, listeners) => {
          const audience = audienceOf(events)
          for (const [channel, caller] of listeners) {
            const index = new AudienceIndex()
            index.add(channel, caller)
            const hears = events.some((event) => renderEvent(event, channel, caller) !== undefined)
            if (hears) expect(index.wants(audience)).toBe(true)
          }
        }
      ),
      { numRuns: 300 }
    ))

  it("wants only what one of its listeners may hear, until that listener is removed", () => {
    const events = stepEvents(5, 2) // taker desk 1; makers maker-1, maker-2, maker-3 invited
    const audience = audienceOf(events)
    expect(audience).toStrictEqual({
      takerDeskIds: [1],
      makerIds: ["maker-1", "maker-2", "maker-3"],
      trade: false
    })
    const index = new AudienceIndex()
    const stranger: Caller = { deskId: 7, userId: 70, roles: ["trader"], makerId: "maker-9" }
    index.add("rfq.taker", stranger)
    index.add("trades", stranger) // no trade in the step
    index.add("mmp.maker", { ...stranger, deskId: 1 }) // notices only: no step for it
    expect(index.wants(audience)).toBe(false)
    const maker2: Caller = { deskId: 4, userId: 41, roles: ["trader"], makerId: "maker-2" }
    index.add("rfq.maker", maker2)
    index.add("rfq_quote.maker", maker2)
    expect(index.wants(audience)).toBe(true)
    index.remove("rfq.maker", maker2)
    expect(index.wants(audience)).toBe(true) // its other view still listens
    index.remove("rfq_quote.maker", maker2)
    expect(index.wants(audience)).toBe(false)
    index.add("rfq_quote.taker", { deskId: 1, userId: 12, roles: ["viewer"] }) // the taker desk, any user
    expect(index.wants(audience)).toBe(true)
    // A trade is heard by every listener of the tape, whoever it is (the stranger listens to it).
    const trade = { takerDeskIds: [3], makerIds: [], trade: true }
    expect(index.wants(trade)).toBe(true)
    index.remove("trades", stranger)
    expect(index.wants(trade)).toBe(false)
    expect(index.wants({ ...trade, trade: false, takerDeskIds: [1] })).toBe(true)
  })

  it.scoped(
    "EventInterests: a plain subscription wants everything, an interest what it says, none nothing",
    () =>
      Effect.gen(function* () {
        const interests = new EventInterests()
        const events = stepEvents(5, 1)
        expect(interests.wantsEvents(events)).toBe(false)
        yield* Effect.scoped(
          Effect.gen(function* () {
            yield* interests.register(() => false)
            expect(interests.wantsEvents(events)).toBe(false)
            yield* interests.register((a) => a.takerDeskIds.includes(1))
            expect(interests.wantsEvents(events)).toBe(true)
            expect(
              interests.wantsEvents(
                stepEvents(5, 1).map((e) => ({
                  ...e,
                  view: { ...e.view, rfq: { ...e.view.rfq, takerDeskId: 2, makers: {} } }
                }))
              )
            ).toBe(false)
          })
        )
        expect(interests.wantsEvents(events)).toBe(false) // both gone with their scope
        const same = () => true
        yield* Effect.scoped(
          Effect.gen(function* () {
            yield* interests.register(same)
            yield* Effect.scoped(interests.register(same)) // the same interest twice, one released
            expect(interests.wantsEvents(events)).toBe(true)
          })
        )
        yield* interests.register(undefined)
        expect(interests.wantsEvents([])).toBe(true)
      })
  )
})

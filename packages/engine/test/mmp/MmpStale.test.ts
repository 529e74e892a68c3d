import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  fillBarred,
  frozenUntilOf,
  isFrozenAt,
  type MmpState,
  staleBeforeOfReset,
  staleBeforeOfTrip
} from "../../src/mmp/MmpRules.js"

/**
 * The stale-quote rule (`fillBarred`) against a model of freezes as intervals on one clock. A
 * quote put before a trip was to be cancelled by it; one put during the freeze was to be refused.
 * Either can survive when the trip's notice is lost (a crash, a missed bus message), and neither
 * may ever fill: a fill of a quote put at `p` is refused at `now` iff the desk is frozen at `now`,
 * or `p` is before the end of a freeze that began at or before `now` (a freeze ends at its
 * `frozenUntil` or at a reset, at least a millisecond after its trip). A quote put after a freeze
 * ended trades. The state is driven only by the rule's own writers (trip, reset; a thaw writes
 * nothing the rule reads), as the store does.
 */

type Op =
  | { readonly kind: "trip"; readonly after: number; readonly frozenMs: number; readonly decidedLag: number }
  | { readonly kind: "reset"; readonly after: number }
  | { readonly kind: "fill"; readonly after: number; readonly putBefore: number }

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant("trip" as const),
    after: fc.integer({ min: 0, max: 50 }),
    frozenMs: fc.constantFrom(0, 1, 5, 40),
    decidedLag: fc.integer({ min: 0, max: 3 })
  }),
  fc.record({ kind: fc.constant("reset" as const), after: fc.integer({ min: 0, max: 50 }) }),
  fc.record({
    kind: fc.constant("fill" as const),
    after: fc.integer({ min: 0, max: 50 }),
    putBefore: fc.integer({ min: 0, max: 120 })
  })
)

/**
 * A freeze as the model sees it: tripped by a fill stamped `at`, decided under the lock at
 * `decidedAt`, frozen until `until` (undefined: until a reset) or an earlier `reset`.
 */
interface Freeze {
  readonly at: number
  readonly decidedAt: number
  readonly until: number | undefined
  reset?: number
}

const frozenAt = (f: Freeze, now: number) => f.reset === undefined && (f.until === undefined || now < f.until)

/** Quotes put before this were active at the trip or put during the freeze: none may fill. */
const staleEnd = (f: Freeze) =>
  f.reset !== undefined
    ? Math.max(f.reset, f.at + 1)
    : f.until === undefined
      ? Number.POSITIVE_INFINITY
      : Math.max(f.until, f.decidedAt + 1)

describe("mmp stale quotes (pure rule)", () => {
  it("a quote put before the end of the last freeze never fills; one put after it does", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        let now = 1_000
        let state: MmpState = { clearedThrough: 0 }
        const freezes: Array<Freeze> = []
        for (const o of ops) {
          now += o.after
          const last = freezes.at(-1)
          const frozen = last !== undefined && frozenAt(last, now)
          assert.strictEqual(isFrozenAt(state, now), frozen, `frozen at ${now}`)
          switch (o.kind) {
            case "trip": {
              // A desk trips only when a fill is admitted: never while frozen.
              if (frozen) break
              const frozenUntil = frozenUntilOf({ frozenMs: o.frozenMs }, now)
              const decidedAt = now + o.decidedLag
              state = {
                clearedThrough: 0,
                frozenAt: now,
                frozenUntil,
                staleBefore: staleBeforeOfTrip(now, decidedAt, frozenUntil)
              }
              freezes.push({ at: now, decidedAt, until: frozenUntil })
              // On one clock, whatever follows the trip follows its decision.
              now = decidedAt
              break
            }
            case "reset": {
              state = { clearedThrough: 0, staleBefore: staleBeforeOfReset(state, now) }
              if (frozen) last.reset = now
              break
            }
            case "fill": {
              const putAt = now - o.putBefore
              const expected = frozen || (last !== undefined && putAt < staleEnd(last))
              assert.strictEqual(
                fillBarred(state, putAt, now),
                expected,
                `quote put at ${putAt}, fill at ${now}`
              )
              break
            }
          }
        }
      }),
      { numRuns: 2_000 }
    )
  })

  it("the edges: the trip's own millisecond stays barred, a reset lets quotes put from then on trade", () => {
    const trip = {
      clearedThrough: 0,
      frozenAt: 100,
      frozenUntil: undefined,
      staleBefore: staleBeforeOfTrip(100, 100, undefined)
    }
    assert.isTrue(fillBarred(trip, 100, 100))
    assert.isTrue(fillBarred(trip, 1, 10_000), "frozen until reset: every fill refused")
    const sameMs = { clearedThrough: 0, staleBefore: staleBeforeOfReset(trip, 100) }
    assert.isTrue(
      fillBarred(sameMs, 100, 100),
      "a reset in the trip's millisecond keeps that millisecond barred"
    )
    const reset = { clearedThrough: 0, staleBefore: staleBeforeOfReset(trip, 500) }
    assert.isTrue(fillBarred(reset, 499, 10_000))
    assert.isFalse(fillBarred(reset, 500, 10_000))
    // A freeze with an end: quotes put during it (a host that had not heard) stay barred after it.
    const timed = {
      clearedThrough: 0,
      frozenAt: 100,
      frozenUntil: 400,
      staleBefore: staleBeforeOfTrip(100, 102, 400)
    }
    assert.isTrue(fillBarred(timed, 399, 10_000))
    assert.isFalse(fillBarred(timed, 400, 10_000))
    // A decision later than the freeze's end (a lock waited on): quotes put until the decision.
    assert.strictEqual(staleBeforeOfTrip(100, 130, 101), 131)
    // Never tripped: nothing is barred.
    assert.isFalse(fillBarred({ clearedThrough: 0 }, 0, 10_000))
  })
})

import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, layer } from "@effect/vitest"
import { BigDecimal, Effect, Runtime, TestClock } from "effect"
import * as fc from "fast-check"
import {
  type CountedFill,
  countedAfter,
  fillBarred,
  frozenUntilOf,
  isFrozenAt,
  limitReached,
  type MmpConfig,
  type MmpState,
  settledFigures,
  staleBeforeOfReset,
  staleBeforeOfTrip,
  windowOf
} from "../../src/mmp/MmpRules.js"
import { MmpStore } from "../../src/mmp/MmpStore.js"
import { makeSqlMmpStore } from "../../src/mmp/SqlMmpStore.js"
import { testDatabases, testDatabaseTimeout } from "../support/TestDatabases.js"

/**
 * The SQL store's window and trips against a plain model: random fills at random instants of a
 * random clock, of quotes put at random instants before them (a quote put before the end of the
 * last freeze is refused: `fillBarred`), settled fully, partly or not at all, resets, and status
 * reads in between. The
 * model keeps every fill in an array and sums it with `windowOf`; the store sums in SQL under the
 * desk's lock, prunes, and writes trips and thaws. Both must agree on every admission (frozen or
 * not, tripped or not, by which limit, with which figures) and on every window read.
 */

type Op =
  | {
      readonly kind: "fill"
      readonly after: number
      /** How long before the fill its quote was last put. */
      readonly putBefore: number
      readonly amount: string
      readonly delta: string
    }
  | { readonly kind: "settle"; readonly which: number; readonly part: "all" | "half" | "none" }
  | { readonly kind: "reset"; readonly after: number }
  | { readonly kind: "read"; readonly after: number }

const decimal = (max: number, scale: number) =>
  fc
    .integer({ min: 1, max: max * 10 ** scale })
    .map((n) => BigDecimal.format(BigDecimal.make(BigInt(n), scale)))

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("fill" as const),
      after: fc.integer({ min: 0, max: 1500 }),
      putBefore: fc.integer({ min: 0, max: 3000 }),
      amount: decimal(50, 1),
      delta: decimal(5, 8)
    })
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("settle" as const),
      which: fc.nat(),
      part: fc.constantFrom("all" as const, "half" as const, "none" as const)
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("reset" as const), after: fc.integer({ min: 0, max: 500 }) })
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("read" as const), after: fc.integer({ min: 0, max: 3000 }) })
  }
)

const config: fc.Arbitrary<MmpConfig> = fc
  .record({
    baseCurrency: fc.constant("BTC" as const),
    intervalMs: fc.integer({ min: 1, max: 4000 }),
    frozenMs: fc.constantFrom(0, 1, 700, 2500),
    amountLimit: fc.option(decimal(200, 1).map(BigDecimal.unsafeFromString), { nil: undefined }),
    deltaLimit: fc.option(decimal(20, 8).map(BigDecimal.unsafeFromString), { nil: undefined }),
    tradeCountLimit: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined })
  })
  .filter((c) => c.amountLimit !== undefined || c.deltaLimit !== undefined || c.tradeCountLimit !== undefined)

interface ModelFill extends CountedFill {
  readonly tradeId: number
  readonly planned: { readonly amount: BigDecimal.BigDecimal; readonly delta: BigDecimal.BigDecimal }
}

const figures = (w: { amount: BigDecimal.BigDecimal; delta: BigDecimal.BigDecimal; trades: number }) => ({
  amount: BigDecimal.format(BigDecimal.normalize(w.amount)),
  delta: BigDecimal.format(BigDecimal.normalize(w.delta)),
  trades: w.trades
})

let nextTradeId = 1

/** Runs `ops` on the store for a fresh desk, checking each answer against the model. */
const run = (cfg: MmpConfig, ops: ReadonlyArray<Op>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const store = yield* MmpStore
    const [desk] = yield* sql<{ id: number }>`INSERT INTO desks (name, created_at)
      VALUES (${`mmp-model-${nextTradeId}-${Math.random()}`}, 0) RETURNING id`
    const deskId = Number(desk!.id)
    let now = 1_000_000
    yield* store.putConfig(deskId, cfg, now)
    let state: MmpState = { clearedThrough: 0 }
    const fills: Array<ModelFill> = []
    let id = 0
    for (const o of ops) {
      switch (o.kind) {
        case "fill": {
          now += o.after
          const tradeId = nextTradeId++
          const amount = BigDecimal.unsafeFromString(o.amount)
          const delta = BigDecimal.unsafeFromString(o.delta)
          const quotePutAt = now - o.putBefore
          // The store decides a trip at the clock's instant (`staleBeforeOfTrip`): the fill's.
          yield* TestClock.setTime(now)
          const admission = yield* store.admit({
            deskId,
            baseCurrency: "BTC",
            tradeId,
            rfqId: 1,
            at: now,
            quotePutAt,
            amount,
            delta
          })
          if (fillBarred(state, quotePutAt, now)) {
            assert.strictEqual(admission._tag, "Frozen", `frozen at ${now}, quote put at ${quotePutAt}`)
            break
          }
          const thawed = state.frozenAt !== undefined
          const after = countedAfter(state, now)
          fills.push({ id: ++id, at: now, amount, delta, tradeId, planned: { amount, delta } })
          const window = windowOf(fills, now, cfg.intervalMs, after)
          const limit = limitReached(cfg, window)
          assert.strictEqual(admission._tag, "Admitted")
          if (admission._tag !== "Admitted") break
          assert.strictEqual(admission.thawed, thawed)
          assert.strictEqual(admission.tripped?.limit, limit)
          if (admission.tripped !== undefined) {
            assert.deepStrictEqual(figures(admission.tripped.window), figures(window))
            assert.strictEqual(admission.tripped.frozenUntil, frozenUntilOf(cfg, now))
          }
          if (limit !== undefined || thawed) {
            state = {
              frozenAt: limit === undefined ? undefined : now,
              frozenUntil: limit === undefined ? undefined : frozenUntilOf(cfg, now),
              tripFillId: limit === undefined ? undefined : id,
              clearedThrough: after,
              staleBefore:
                limit === undefined ? state.staleBefore : staleBeforeOfTrip(now, now, frozenUntilOf(cfg, now))
            }
          }
          break
        }
        case "settle": {
          if (fills.length === 0) break
          const i = o.which % fills.length
          const fill = fills[i]!
          const half = BigDecimal.normalize(
            BigDecimal.round(BigDecimal.unsafeDivide(fill.planned.amount, BigDecimal.fromBigInt(2n)), {
              scale: 1,
              mode: "floor"
            })
          )
          const filled =
            o.part === "all" ? fill.planned.amount : o.part === "half" ? half : BigDecimal.fromBigInt(0n)
          yield* store.settle(fill.tradeId, filled)
          fills[i] = { ...fill, ...settledFigures(fill.planned, filled) }
          break
        }
        case "reset": {
          now += o.after
          yield* store.reset(deskId, "BTC", now)
          state = { clearedThrough: id, staleBefore: staleBeforeOfReset(state, now) }
          break
        }
        case "read": {
          now += o.after
          // The store's own state, with its own fill ids (the model's ids count from 1).
          const [stored] = yield* store.configs(deskId)
          assert.strictEqual(isFrozenAt(stored!, now), isFrozenAt(state, now))
          assert.strictEqual(stored!.staleBefore, state.staleBefore)
          const window = yield* store.window(deskId, "BTC", cfg.intervalMs, countedAfter(stored!, now), now)
          assert.deepStrictEqual(
            figures(window),
            figures(windowOf(fills, now, cfg.intervalMs, countedAfter(state, now)))
          )
          break
        }
      }
    }
  })

describe.each(testDatabases)("mmp window against a model on $name", ({ layer: database }) => {
  layer(database, { timeout: testDatabaseTimeout })((it) => {
    it.effect(
      "admissions, trips, thaws and window sums agree with the model under random fills and clocks",
      () =>
        Effect.gen(function* () {
          const store = yield* makeSqlMmpStore
          const runtime = yield* Effect.runtime<SqlClient.SqlClient>()
          yield* Effect.promise(() =>
            fc.assert(
              fc.asyncProperty(config, fc.array(op, { maxLength: 30 }), (cfg, ops) =>
                Runtime.runPromise(runtime)(run(cfg, ops).pipe(Effect.provideService(MmpStore, store)))
              ),
              { numRuns: 40 }
            )
          )
        }),
      { timeout: 120_000 }
    )
  })
})

import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, layer } from "@effect/vitest"
import { BigDecimal, Effect } from "effect"
import { makeSqlMmpStore } from "../../src/mmp/SqlMmpStore.js"
import { testDatabases, testDatabaseTimeout } from "../support/TestDatabases.js"

/**
 * Admission order against instants: each accept takes its instant in its own RFQ's mailbox (on any
 * host) and only then the desk's lock, so a fill can be admitted after one whose instant is a few
 * milliseconds later. It must still count that earlier-admitted fill: with a limit of two fills,
 * the second admitted trips whatever its instant, and the third is refused. (Found on three hosts:
 * nine concurrent accepts against a limit of three filled four.)
 */

const one = BigDecimal.unsafeFromString("1")

describe.each(testDatabases)("mmp admission order on $name", ({ layer: database }) => {
  layer(database, { timeout: testDatabaseTimeout })((it) => {
    it.effect("a fill admitted after a later-stamped one counts it; the trip holds", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const store = yield* makeSqlMmpStore
        const [desk] = yield* sql<{ id: number }>`INSERT INTO desks (name, created_at)
          VALUES (${`mmp-order-${Math.random()}`}, 0) RETURNING id`
        const deskId = Number(desk!.id)
        yield* store.putConfig(
          deskId,
          { baseCurrency: "BTC", intervalMs: 60_000, frozenMs: 0, tradeCountLimit: 2 },
          1_000
        )
        const admit = (tradeId: number, at: number) =>
          store.admit({
            deskId,
            baseCurrency: "BTC",
            tradeId,
            rfqId: tradeId,
            at,
            quotePutAt: at,
            amount: one,
            delta: one
          })
        const first = yield* admit(900_001, 10_050)
        assert.deepStrictEqual(first, { _tag: "Admitted", thawed: false })
        const second = yield* admit(900_002, 10_020)
        assert.strictEqual(second._tag, "Admitted")
        assert.strictEqual(second._tag === "Admitted" ? second.tripped?.limit : undefined, "tradeCount")
        assert.deepStrictEqual(yield* admit(900_003, 10_030), { _tag: "Frozen" })
        // The status read at an instant before the later-stamped fill counts both as well.
        const window = yield* store.window(deskId, "BTC", 60_000, 0, 10_020)
        assert.strictEqual(window.trades, 2)
      })
    )
  })
})

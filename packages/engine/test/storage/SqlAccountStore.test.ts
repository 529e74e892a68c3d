import { randomBytes } from "node:crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Either, Layer, Option } from "effect"
import { AccountStore, type NewCredentials } from "../../src/accounts/AccountStore.js"
import type { SettlementOption } from "../../src/domain/Primitives.js"
import { SqlAccountStoreLive } from "../../src/storage/SqlAccountStore.js"
import { Reference, referenceLayer } from "../support/records.js"
import { testDatabases } from "../support/TestDatabases.js"

/** A desk of its own for each test, so tests in one database never see each other's rows. */
const freshDesk = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const name = `desk-${randomBytes(4).toString("hex")}`
  const [desk] = yield* sql<{
    id: number
  }>`INSERT INTO desks (name, created_at) VALUES (${name}, 0) RETURNING id`
  const deskId = Number(desk!.id)
  yield* sql`INSERT INTO users (desk_id, name, roles, created_at) VALUES (${deskId}, ${`${name} trader`}, '{trader}', 0)`
  return { deskId, name }
})

const newCredentials = (
  deskId: number,
  alias: string,
  exchange: SettlementOption,
  isExchangeDefault = false
): NewCredentials => ({
  deskId,
  alias,
  exchange,
  clientId: `${alias}-client`,
  clientSecretSealed: new Uint8Array(randomBytes(45)),
  isExchangeDefault
})

/** Alias → isExchangeDefault of the desk's visible credentials. */
const defaultsOf = (deskId: number) =>
  Effect.flatMap(AccountStore, (store) =>
    Effect.map(store.credentialsOfDesk(deskId), (rows) =>
      Object.fromEntries(rows.map((r) => [r.alias, r.isExchangeDefault]))
    )
  )

const accountLayer = (db: Layer.Layer<SqlClient.SqlClient, unknown>) =>
  Layer.mergeAll(SqlAccountStoreLive, referenceLayer).pipe(Layer.provideMerge(db))

describe.each(testDatabases)("SqlAccountStore on $name", (db) => {
  layer(accountLayer(db.layer), { timeout: 60_000 })((it) => {
    it.effect("inserted credentials read back by desk, id and alias, secret bytes intact", () =>
      Effect.gen(function* () {
        const store = yield* AccountStore
        const { deskId } = yield* freshDesk
        const row = newCredentials(deskId, "dbt-main", "DBT", true)
        const id = yield* store.insertCredentials(row)
        const expected = {
          id,
          deskId,
          alias: "dbt-main",
          exchange: "DBT" as const,
          clientId: "dbt-main-client",
          clientSecretSealed: row.clientSecretSealed,
          isExchangeDefault: true
        }
        assert.deepStrictEqual(yield* store.credentialsOfDesk(deskId), [expected])
        assert.deepStrictEqual(yield* store.credentials(id), Option.some(expected))
        assert.deepStrictEqual(yield* store.credentialsByAlias(deskId, "dbt-main"), Option.some(expected))
        assert.isTrue(Option.isNone(yield* store.credentialsByAlias(deskId, "bull-main")))
      })
    )

    it.effect("a duplicate alias on one desk is refused and writes nothing; other desks may reuse it", () =>
      Effect.gen(function* () {
        const store = yield* AccountStore
        const a = yield* freshDesk
        const b = yield* freshDesk
        yield* store.insertCredentials(newCredentials(a.deskId, "main", "DBT", true))
        // Also a new default: the unset of the previous default must roll back with the refusal.
        const duplicate = yield* Effect.either(
          store.insertCredentials(newCredentials(a.deskId, "main", "DBT", true))
        )
        assert.isTrue(Either.isLeft(duplicate))
        if (Either.isLeft(duplicate)) {
          assert.strictEqual(duplicate.left.key, "duplicateCredentialsAlias")
          assert.strictEqual(
            duplicate.left.message,
            "exchange credentials with the same alias already exists"
          )
        }
        const otherExchange = yield* Effect.either(
          store.insertCredentials(newCredentials(a.deskId, "main", "BULL"))
        )
        assert.isTrue(Either.isLeft(otherExchange))
        assert.deepStrictEqual(yield* defaultsOf(a.deskId), { main: true })
        yield* store.insertCredentials(newCredentials(b.deskId, "main", "DBT"))
        assert.deepStrictEqual(yield* defaultsOf(b.deskId), { main: false })
      })
    )

    it.effect("a new default replaces the desk's previous default for that exchange only", () =>
      Effect.gen(function* () {
        const store = yield* AccountStore
        const a = yield* freshDesk
        const b = yield* freshDesk
        yield* store.insertCredentials(newCredentials(a.deskId, "dbt-1", "DBT", true))
        yield* store.insertCredentials(newCredentials(a.deskId, "bull-1", "BULL", true))
        yield* store.insertCredentials(newCredentials(b.deskId, "dbt-b", "DBT", true))
        yield* store.insertCredentials(newCredentials(a.deskId, "dbt-2", "DBT", false))
        assert.deepStrictEqual(yield* defaultsOf(a.deskId), { "dbt-1": true, "bull-1": true, "dbt-2": false })
        yield* store.insertCredentials(newCredentials(a.deskId, "dbt-3", "DBT", true))
        assert.deepStrictEqual(yield* defaultsOf(a.deskId), {
          "dbt-1": false,
          "bull-1": true,
          "dbt-2": false,
          "dbt-3": true
        })
        assert.deepStrictEqual(yield* defaultsOf(b.deskId), { "dbt-b": true })
      })
    )

    it.effect(
      "deleted credentials vanish from every read, only their own desk deletes them, the alias frees up",
      () =>
        Effect.gen(function* () {
          const store = yield* AccountStore
          const a = yield* freshDesk
          const b = yield* freshDesk
          const id = yield* store.insertCredentials(newCredentials(a.deskId, "gone", "DBT", true))
          const kept = yield* store.insertCredentials(newCredentials(a.deskId, "kept", "BULL"))
          assert.isFalse(yield* store.deleteCredentials(b.deskId, id))
          assert.isTrue(Option.isSome(yield* store.credentials(id)))
          assert.isTrue(yield* store.deleteCredentials(a.deskId, id))
          assert.isFalse(yield* store.deleteCredentials(a.deskId, id))
          assert.isTrue(Option.isNone(yield* store.credentials(id)))
          assert.isTrue(Option.isNone(yield* store.credentialsByAlias(a.deskId, "gone")))
          assert.deepStrictEqual(
            (yield* store.credentialsOfDesk(a.deskId)).map((c) => c.id),
            [kept]
          )
          // The deleted default no longer blocks a new default, nor its alias a new row.
          const again = yield* store.insertCredentials(newCredentials(a.deskId, "gone", "DBT", true))
          assert.notStrictEqual(again, id)
          assert.deepStrictEqual(yield* defaultsOf(a.deskId), { kept: false, gone: true })
        })
    )

    it.effect("makers are listed by id and found by desk", () =>
      Effect.gen(function* () {
        const store = yield* AccountStore
        const ref = yield* Reference
        assert.deepStrictEqual(
          yield* store.makers,
          ref.makers.map((m, i) => ({ makerId: m.makerId, deskId: m.deskId, name: `Maker ${i + 1}` }))
        )
        assert.deepStrictEqual(
          yield* store.makerOfDesk(ref.makers[1].deskId),
          Option.some({ makerId: "maker-2", deskId: ref.makers[1].deskId, name: "Maker 2" })
        )
        assert.isTrue(Option.isNone(yield* store.makerOfDesk(ref.takers[0].deskId)))
      })
    )

    it.effect(
      "counterparties are the desks listed, allowing block trades only when they list the desk back",
      () =>
        Effect.gen(function* () {
          const store = yield* AccountStore
          const sql = yield* SqlClient.SqlClient
          const [me, open, closed, silent, stranger] = yield* Effect.all([
            freshDesk,
            freshDesk,
            freshDesk,
            freshDesk,
            freshDesk
          ])
          const list = (desk: number, other: number, allows: boolean) =>
            sql`INSERT INTO otc_counterparties (desk_id, counterparty_desk_id, allows_block_trade, created_at)
            VALUES (${desk}, ${other}, ${allows}, 0)`
          yield* list(me!.deskId, open!.deskId, true)
          yield* list(me!.deskId, closed!.deskId, true)
          yield* list(me!.deskId, silent!.deskId, true)
          yield* list(open!.deskId, me!.deskId, true)
          yield* list(closed!.deskId, me!.deskId, false)
          yield* list(stranger!.deskId, me!.deskId, true)
          assert.deepStrictEqual(yield* store.counterparties(me!.deskId), [
            { id: open!.deskId, name: open!.name, allowsBlockTrade: true },
            { id: closed!.deskId, name: closed!.name, allowsBlockTrade: false },
            { id: silent!.deskId, name: silent!.name, allowsBlockTrade: false }
          ])
          assert.deepStrictEqual(yield* store.counterparties(silent!.deskId), [])
        })
    )

    it.effect("a nonce is claimed once per desk, forever, and numbers its block trade", () =>
      Effect.gen(function* () {
        const store = yield* AccountStore
        const a = yield* freshDesk
        const b = yield* freshDesk
        const nonce = randomBytes(8).toString("hex")
        const first = yield* store.claimNonce(a.deskId, nonce)
        assert.isTrue(Option.isSome(first))
        assert.isTrue(Option.isNone(yield* store.claimNonce(a.deskId, nonce)))
        const other = yield* store.claimNonce(b.deskId, nonce)
        assert.isTrue(Option.isSome(other))
        const claims = yield* Effect.all(
          Array.from({ length: 5 }, () => store.claimNonce(a.deskId, `${nonce}-race`)),
          { concurrency: "unbounded" }
        )
        const won = claims.filter(Option.isSome).map((c) => c.value)
        assert.strictEqual(won.length, 1)
        // Block trade ids are integers, unique across desks.
        const ids = [Option.getOrThrow(first), Option.getOrThrow(other), ...won]
        assert.isTrue(ids.every(Number.isSafeInteger))
        assert.strictEqual(new Set(ids).size, ids.length)
      })
    )
  })
})

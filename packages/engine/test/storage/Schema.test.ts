import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, layer } from "@effect/vitest"
import { BigDecimal, Effect, Schema } from "effect"
import { StorageConstraints } from "../../src/storage/Migrations.js"
import { testDatabases, testDatabaseTimeout } from "../support/TestDatabases.js"
import {
  expectUniqueViolation,
  insertQuote,
  insertRfq,
  insertRow,
  quoteValues,
  rfqValues,
  roundTrip,
  seedGraph,
  t0,
  unique
} from "./storageFixtures.js"

describe.each(testDatabases)("storage schema on $name", ({ layer: database }) => {
  layer(database, { timeout: testDatabaseTimeout })((it) => {
    it.effect("every table round-trips its columns exactly", () =>
      Effect.gen(function* () {
        const desk = yield* roundTrip("desks", { name: unique("desk"), created_at: t0 })
        const counterparty = yield* roundTrip("desks", { name: unique("desk"), created_at: t0 + 1 })
        const user = yield* roundTrip("users", {
          desk_id: desk.id,
          name: "Trader",
          email: `${unique("t")}@example.test`,
          roles: ["trader", "viewer"],
          active: false,
          created_at: t0
        })
        yield* roundTrip("api_clients", {
          client_id: unique("client"),
          secret_hash: "$scrypt$N=16384$c2FsdA$aGFzaA",
          user_id: user.id,
          active: true,
          created_at: t0
        })
        const makerId = unique("maker")
        yield* roundTrip("makers", {
          maker_id: makerId,
          desk_id: counterparty.id,
          name: "Maker One",
          created_at: t0
        })
        const credentials = yield* roundTrip("exchange_credentials", {
          desk_id: desk.id,
          alias: "bull-main",
          exchange: "BULL",
          client_id: "venue-client",
          client_secret_encrypted: new Uint8Array([0, 255, 16, 32, 7]),
          is_exchange_default: true,
          can_block_rfq: true,
          can_block_trade: false,
          created_at: t0,
          deleted_at: null
        })
        assert.instanceOf(credentials.client_secret_encrypted, Uint8Array)
        yield* roundTrip("otc_counterparties", {
          desk_id: desk.id,
          counterparty_desk_id: counterparty.id,
          allows_block_trade: false,
          created_at: t0
        })
        const rfq = yield* roundTrip("rfqs", {
          request_id: 42,
          request_hash: "sha256:abc",
          taker_desk_id: desk.id,
          taker_user_id: user.id,
          label: "my-label",
          kind: "option",
          strategy: "Call Spread",
          description: "BTC 27DEC30 90000/110000 Call Spread",
          status: "open",
          base_currency: "BTC",
          quote_currency: "BTC",
          quote_currencies: JSON.stringify({ DBT: "BTC", BULL: "USDC" }),
          amount: "25.5",
          anonymous: true,
          settlement_options: ["BULL", "DBT"],
          settlement_accounts: JSON.stringify({
            BULL: [{ credentialsId: credentials.id, percentage: "100" }]
          }),
          makers: JSON.stringify({ BULL: [makerId], DBT: [makerId] }),
          hedge: JSON.stringify({
            instrumentName: "BTC-PERPETUAL",
            direction: "buy",
            amount: "200000",
            price: "95000.5"
          }),
          mark_price: "0.0123456789",
          created_at: t0,
          expires_at: t0 + 300_000,
          closed_at: null,
          deleted_at: null
        })
        yield* roundTrip("rfq_makers", { rfq_id: rfq.id, settlement_option: "BULL", maker_id: makerId })
        yield* roundTrip("rfq_legs", {
          rfq_id: rfq.id,
          position: 0,
          instrument_name: "BTC-27DEC30-90000-C",
          direction: "buy",
          ratio: "1.25",
          amount: "31.875",
          price: "0.05"
        })
        const makerUser = yield* insertRow("users", { desk_id: counterparty.id, name: "M", created_at: t0 })
        const quote = yield* roundTrip("quotes", {
          rfq_id: rfq.id,
          maker_desk_id: counterparty.id,
          maker_user_id: makerUser.id,
          maker_id: makerId,
          label: "q-1",
          direction: "sell",
          settlement_option: "BULL",
          settlement_credentials_id: null,
          quote_currency: "USDC",
          amount: "25.5",
          price: "1234.5",
          legs: JSON.stringify([
            { instrumentName: "BTC-27DEC30-90000-C", price: "1234.5", amount: "31.875" }
          ]),
          hedge: null,
          status: "active",
          created_at: t0 + 5,
          updated_at: t0 + 6,
          version: 1
        })
        const trade = yield* roundTrip("trades", {
          rfq_id: rfq.id,
          quote_id: quote.id,
          taker_user_id: user.id,
          taker_direction: "buy",
          settlement_option: "BULL",
          price: "1234.5",
          amount: "25.5",
          filled_amount: "12.7",
          status: "filledPartial",
          created_at: t0 + 7,
          updated_at: t0 + 8
        })
        yield* roundTrip("allocations", {
          trade_id: trade.id,
          position: 0,
          venue: "BULL",
          credentials_id: credentials.id,
          percentage: "33.333",
          amount: "8.4",
          status: "failed",
          idempotency_key: unique("alloc"),
          exchange_trade_id: null,
          reason: "venue rejected the block trade",
          created_at: t0 + 7,
          updated_at: t0 + 9
        })
        yield* roundTrip("block_trade_nonces", {
          desk_id: desk.id,
          nonce: "1700000000000",
          user_id: user.id,
          result: JSON.stringify({ blockTradeId: "BT-1" }),
          created_at: t0
        })
        yield* roundTrip("rfq_events", {
          rfq_id: rfq.id,
          seq: 1,
          type: "created",
          payload: JSON.stringify({ status: "open", amount: "25.5" }),
          created_at: t0
        })
        yield* roundTrip("refresh_tokens", {
          jti: unique("jti"),
          family: unique("family"),
          user_id: user.id,
          client_id: (yield* insertRow("api_clients", {
            client_id: unique("c"),
            secret_hash: "h",
            user_id: user.id,
            created_at: t0
          })).client_id,
          created_at: t0,
          expires_at: t0 + 1_800_000,
          used_at: null,
          revoked_at: null
        })
        yield* roundTrip("venue_block_trades", {
          venue: "DBT",
          idempotency_key: unique("key"),
          block_trade_id: unique("BT"),
          payload: JSON.stringify({ legs: [{ price: "0.0125", amount: "25" }] }),
          created_at: t0
        })
      })
    )

    it.effect("ids and ms timestamps read back as numbers, int8 beyond 2^53 as bigint", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const graph = yield* seedGraph
        const rfqId = yield* insertRfq(graph, {
          created_at: 8_640_000_000_000,
          expires_at: 8_640_000_000_001
        })
        const [row] =
          yield* sql`SELECT id, created_at, expires_at, settlement_options FROM rfqs WHERE id = ${rfqId}`
        assert.deepStrictEqual(row, {
          id: rfqId,
          created_at: 8_640_000_000_000,
          expires_at: 8_640_000_000_001,
          settlement_options: ["DBT"]
        })
        assert.isTrue(Number.isSafeInteger(rfqId))
        const [big] =
          yield* sql`SELECT 9007199254740993::int8 AS big, ARRAY[1, 9007199254740993]::int8[] AS arr`
        assert.deepStrictEqual(big, { big: 9007199254740993n, arr: [1, 9007199254740993n] })
        const [count] = yield* sql`SELECT count(*) AS n FROM rfqs WHERE id = ${rfqId}`
        assert.deepStrictEqual(count, { n: 1 })
      })
    )

    it.effect("numeric columns keep exact decimals and SQL arithmetic on them is exact", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const graph = yield* seedGraph
        const rfqId = yield* insertRfq(graph)
        const a = yield* insertQuote(graph, rfqId, { amount: "0.1", price: "0.1" })
        const b = yield* insertQuote(graph, rfqId, { amount: "0.2", price: "0.2" })
        const [sum] = yield* sql`SELECT sum(amount) AS total FROM quotes WHERE id IN (${a}, ${b})`
        assert.strictEqual(sum!.total, "0.3")
        const huge = "123456789012345678901234567890.123456789012345678901234567890"
        const [stored] =
          yield* sql`UPDATE quotes SET price = ${huge} WHERE id = ${a} RETURNING price, price * 3 AS triple`
        assert.strictEqual(stored!.price, huge)
        assert.strictEqual(stored!.triple, "370370367037037036703703703670.370370367037037036703703703670")
        const [arr] = yield* sql`SELECT ARRAY[amount, price] AS pair FROM quotes WHERE id = ${b}`
        assert.deepStrictEqual(arr!.pair, ["0.2", "0.2"])
      })
    )

    it.effect("Schema.BigDecimal encodes parameters and decodes numeric columns without loss", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const graph = yield* seedGraph
        const rfqId = yield* insertRfq(graph)
        const Row = Schema.Struct({ amount: Schema.BigDecimal, price: Schema.BigDecimal })
        const written = {
          amount: BigDecimal.unsafeFromString("25.1"),
          price: BigDecimal.unsafeFromString("0.00000000000000001")
        }
        const encoded = yield* Schema.encode(Row)(written)
        const quoteId = yield* insertQuote(graph, rfqId, encoded)
        const [row] = yield* sql`SELECT amount, price FROM quotes WHERE id = ${quoteId}`
        const decoded = yield* Schema.decodeUnknown(Row)(row)
        assert.isTrue(BigDecimal.equals(decoded.amount, written.amount))
        assert.isTrue(BigDecimal.equals(decoded.price, written.price))
        assert.strictEqual(row!.price, "0.00000000000000001")
      })
    )

    it.effect("jsonb documents round-trip when passed as JSON text, arrays included", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const graph = yield* seedGraph
        const rfqId = yield* insertRfq(graph)
        const legs = [
          { instrumentName: "BTC-27DEC30-100000-C", price: "0.1" },
          { nested: [1, "2", null, true] }
        ]
        const quoteId = yield* insertQuote(graph, rfqId, { legs: JSON.stringify(legs) })
        const [row] =
          yield* sql`SELECT legs, legs -> 0 ->> 'price' AS first_price FROM quotes WHERE id = ${quoteId}`
        assert.deepStrictEqual(row, { legs, first_price: "0.1" })
      })
    )

    it.effect("keyset paging walks RFQs newest first by (created_at, id) without gaps or repeats", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const graph = yield* seedGraph
        // Ties on created_at are the case the id tiebreaker exists for.
        const createdAts = [t0 + 3, t0 + 1, t0 + 3, t0 + 2, t0 + 1, t0 + 3, t0, t0 + 2]
        const statuses = ["open", "filled", "cancelled", "open", "expired", "filledPartial", "open", "open"]
        const inserted: Array<{ id: number; created_at: number; status: string }> = []
        for (const [i, createdAt] of createdAts.entries()) {
          const status = statuses[i]!
          const id = yield* insertRfq(graph, {
            created_at: createdAt,
            expires_at: createdAt + 300_000,
            status,
            base_currency: i % 3 === 0 ? "ETH" : "BTC"
          })
          inserted.push({ id, created_at: createdAt, status })
        }
        const newestFirst = [...inserted]
          .sort((x, y) => y.created_at - x.created_at || y.id - x.id)
          .map((r) => r.id)

        const page = (
          cursor: readonly [number, number] | undefined,
          limit: number,
          statusFilter?: ReadonlyArray<string>
        ) =>
          sql<{ id: number; created_at: number }>`
            SELECT id, created_at FROM rfqs
            WHERE taker_desk_id = ${graph.takerDesk}
              ${cursor ? sql`AND (created_at, id) < (${cursor[0]}, ${cursor[1]})` : sql``}
              ${statusFilter ? sql`AND ${sql.in("status", statusFilter)}` : sql``}
            ORDER BY created_at DESC, id DESC
            LIMIT ${limit}`

        const walk = (limit: number, statusFilter?: ReadonlyArray<string>) =>
          Effect.gen(function* () {
            const seen: Array<number> = []
            let cursor: readonly [number, number] | undefined
            for (;;) {
              const rows = yield* page(cursor, limit, statusFilter)
              seen.push(...rows.map((r) => r.id))
              if (rows.length < limit) return seen
              const last = rows[rows.length - 1]!
              cursor = [last.created_at, last.id]
            }
          })

        for (const limit of [1, 3, 8, 100]) assert.deepStrictEqual(yield* walk(limit), newestFirst)
        const traded = ["filled", "filledPartial"]
        assert.deepStrictEqual(
          yield* walk(2, traded),
          newestFirst.filter((id) => traded.includes(inserted.find((r) => r.id === id)!.status))
        )

        const [counted] =
          yield* sql`SELECT count(*) AS n FROM rfqs WHERE taker_desk_id = ${graph.takerDesk} AND base_currency = 'ETH'`
        assert.strictEqual(counted!.n, inserted.filter((_, i) => i % 3 === 0).length)
      })
    )

    it.effect("a maker's list joins the RFQs it is invited on", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const graph = yield* seedGraph
        const invited = yield* insertRfq(graph)
        const notInvited = yield* insertRfq(graph, { makers: JSON.stringify({ DBT: [] }) })
        yield* insertRow("rfq_makers", { rfq_id: invited, settlement_option: "DBT", maker_id: graph.makerId })
        const rows = yield* sql<{ id: number }>`
          SELECT r.id FROM rfqs r
          WHERE EXISTS (SELECT 1 FROM rfq_makers m WHERE m.rfq_id = r.id AND m.maker_id = ${graph.makerId})
          ORDER BY r.created_at DESC, r.id DESC`
        assert.deepStrictEqual(
          rows.map((r) => r.id),
          [invited]
        )
        assert.notStrictEqual(invited, notInvited)
      })
    )

    it.effect("an exchange credentials alias is unique per desk among live credentials", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const graph = yield* seedGraph
        const again = (deskId: number) =>
          insertRow("exchange_credentials", {
            desk_id: deskId,
            alias: "dbt-main",
            exchange: "DBT",
            client_id: "x",
            client_secret_encrypted: new Uint8Array([9]),
            created_at: t0
          })
        yield* expectUniqueViolation(again(graph.takerDesk), StorageConstraints.credentialsAliasPerDesk)
        yield* sql`UPDATE exchange_credentials SET deleted_at = ${t0} WHERE id = ${graph.takerCredentials}`
        const reused = yield* again(graph.takerDesk)
        assert.notStrictEqual(reused.id, graph.takerCredentials)
      })
    )

    it.effect("a label is unique among a maker's active quotes only", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const graph = yield* seedGraph
        const rfqA = yield* insertRfq(graph)
        const rfqB = yield* insertRfq(graph)
        const first = yield* insertQuote(graph, rfqA, { label: "mine" })
        yield* expectUniqueViolation(
          insertRow("quotes", quoteValues(graph, rfqB, { label: "mine" })),
          StorageConstraints.activeQuoteLabelPerMaker
        )
        yield* insertQuote(graph, rfqB, { label: null })
        yield* insertQuote(graph, rfqB, { label: null })
        yield* sql`UPDATE quotes SET status = 'cancelled' WHERE id = ${first}`
        yield* insertQuote(graph, rfqB, { label: "mine" })
      })
    )

    it.effect("a request id is unique per user, and 0 means no key", () =>
      Effect.gen(function* () {
        const graph = yield* seedGraph
        yield* insertRfq(graph, { request_id: 7, request_hash: "h1" })
        yield* expectUniqueViolation(
          insertRow("rfqs", rfqValues(graph, { request_id: 7, request_hash: "h2" })),
          StorageConstraints.rfqRequestIdPerUser
        )
        yield* insertRfq(graph, { request_id: 0 })
        yield* insertRfq(graph, { request_id: 0 })
        yield* insertRfq(graph, { request_id: 7, request_hash: "h1", taker_user_id: graph.makerUser })
      })
    )

    it.effect("a block trade nonce is unique per desk", () =>
      Effect.gen(function* () {
        const graph = yield* seedGraph
        const nonce = (deskId: number, user: number) =>
          insertRow("block_trade_nonces", { desk_id: deskId, nonce: "n-1", user_id: user, created_at: t0 })
        yield* nonce(graph.takerDesk, graph.taker)
        yield* expectUniqueViolation(
          nonce(graph.takerDesk, graph.taker),
          StorageConstraints.blockTradeNoncePerDesk
        )
        yield* nonce(graph.makerDesk, graph.makerUser)
      })
    )

    it.effect("rfq events have a unique seq per RFQ and cannot be changed", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const graph = yield* seedGraph
        const rfqA = yield* insertRfq(graph)
        const rfqB = yield* insertRfq(graph)
        const event = (rfqId: number, seq: number) =>
          insertRow("rfq_events", { rfq_id: rfqId, seq, type: "created", payload: "{}", created_at: t0 })
        yield* event(rfqA, 1)
        yield* event(rfqA, 2)
        yield* expectUniqueViolation(event(rfqA, 2), StorageConstraints.rfqEventSeq)
        yield* event(rfqB, 1)
        yield* Effect.flip(sql`UPDATE rfq_events SET type = 'changed' WHERE rfq_id = ${rfqA}`)
        yield* Effect.flip(sql`DELETE FROM rfq_events WHERE rfq_id = ${rfqA}`)
        const rows = yield* sql`SELECT seq, type FROM rfq_events WHERE rfq_id = ${rfqA} ORDER BY seq`
        assert.deepStrictEqual(rows, [
          { seq: 1, type: "created" },
          { seq: 2, type: "created" }
        ])
      })
    )

    it.effect("one trade that did not fail per RFQ; allocation idempotency keys are unique", () =>
      Effect.gen(function* () {
        const graph = yield* seedGraph
        const rfqId = yield* insertRfq(graph)
        const quoteId = yield* insertQuote(graph, rfqId)
        const trade = (status: string) =>
          insertRow("trades", {
            rfq_id: rfqId,
            quote_id: quoteId,
            taker_user_id: graph.taker,
            taker_direction: "buy",
            settlement_option: "DBT",
            price: "0.0125",
            amount: "25",
            filled_amount: "0",
            status,
            created_at: t0,
            updated_at: t0
          })
        yield* trade("failed")
        const pending = yield* trade("pending")
        yield* expectUniqueViolation(trade("pending"), StorageConstraints.oneTradePerRfq)
        const allocation = (position: number, key: string) =>
          insertRow("allocations", {
            trade_id: pending.id,
            position,
            venue: "DBT",
            credentials_id: position === 0 ? graph.takerCredentials : graph.makerCredentials,
            percentage: "50",
            amount: "12.5",
            status: "pending",
            idempotency_key: key,
            created_at: t0,
            updated_at: t0
          })
        const key = unique("alloc")
        yield* allocation(0, key)
        yield* expectUniqueViolation(allocation(1, key), StorageConstraints.allocationIdempotencyKey)
      })
    )

    it.effect("check constraints refuse impossible rows", () =>
      Effect.gen(function* () {
        const graph = yield* seedGraph
        const refused = (overrides: Record<string, unknown>) =>
          Effect.flip(insertRow("rfqs", rfqValues(graph, overrides))).pipe(
            Effect.map((error) => (error.cause as { code?: string }).code)
          )
        assert.strictEqual(yield* refused({ amount: "0" }), "23514")
        assert.strictEqual(yield* refused({ status: "traded" }), "23514")
        assert.strictEqual(yield* refused({ settlement_options: ["FTX"] }), "23514")
        assert.strictEqual(yield* refused({ request_id: 5, request_hash: null }), "23514")
        const rfqId = yield* insertRfq(graph)
        const leg = (ratio: string) =>
          insertRow("rfq_legs", {
            rfq_id: rfqId,
            position: 0,
            instrument_name: "BTC-27DEC30-100000-C",
            direction: "buy",
            ratio,
            amount: "25"
          })
        const error = yield* Effect.flip(leg("1.255"))
        assert.strictEqual((error.cause as { code?: string }).code, "23514")
        yield* leg("1.250")
      })
    )
  })
})

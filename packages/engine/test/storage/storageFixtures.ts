import { randomBytes } from "node:crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { assert } from "@effect/vitest"
import { Effect, Option } from "effect"
import { uniqueViolation } from "../../src/storage/SqlErrors.js"

/** A suffix that keeps the rows of one test apart from those of the others sharing a database. */
export const unique = (prefix: string): string => `${prefix}-${randomBytes(5).toString("hex")}`

/** 2026-01-01T00:00:00Z: ms timestamps are well past 2^32 and must come back as exact numbers. */
export const t0 = 1_767_225_600_000

type Row = Record<string, unknown>

/** Bytes compare by content whatever the client's container (Buffer or Uint8Array). */
const comparable = (value: unknown): unknown => (value instanceof Uint8Array ? Array.from(value) : value)

/** The listed columns of `row`, so that columns added by later migrations do not matter. */
export const pick = (row: Row, columns: ReadonlyArray<string>): Row =>
  Object.fromEntries(columns.map((column) => [column, comparable(row[column])]))

/** Inserts `values` into `table` and returns the whole stored row. */
export const insertRow = (table: string, values: Row) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<Row>`INSERT INTO ${sql(table)} ${sql.insert(values)} RETURNING *`
    return rows[0]!
  })

/** Inserts and checks that every given column reads back exactly as written. */
export const roundTrip = (table: string, values: Row) =>
  Effect.gen(function* () {
    const stored = yield* insertRow(table, values)
    const columns = Object.keys(values)
    const expected = Object.fromEntries(
      columns.map((column) => {
        const value = values[column]
        // jsonb parameters are sent as JSON text and read back parsed.
        return [
          column,
          typeof value === "string" && jsonColumns.has(column) ? JSON.parse(value) : comparable(value)
        ]
      })
    )
    assert.deepStrictEqual(pick(stored, columns), expected, `round trip of ${table}`)
    return stored
  })

const jsonColumns = new Set([
  "quote_currencies",
  "settlement_accounts",
  "makers",
  "hedge",
  "legs",
  "payload",
  "result"
])

/** Fails unless `effect` fails with a violation of the named unique constraint. */
export const expectUniqueViolation = <A, R>(effect: Effect.Effect<A, SqlError, R>, constraint: string) =>
  Effect.gen(function* () {
    const error = yield* Effect.flip(effect)
    assert.deepStrictEqual(uniqueViolation(error), Option.some(constraint))
  })

export interface Graph {
  readonly takerDesk: number
  readonly makerDesk: number
  readonly taker: number
  readonly makerUser: number
  readonly makerId: string
  readonly takerCredentials: number
  readonly makerCredentials: number
}

/** A taker desk and a maker desk, each with a trader, exchange credentials and (maker) a maker id. */
export const seedGraph = Effect.gen(function* () {
  const desk = (name: string) => insertRow("desks", { name: unique(name), created_at: t0 })
  const takerDesk = (yield* desk("taker")).id as number
  const makerDesk = (yield* desk("maker")).id as number
  const user = (deskId: number) =>
    insertRow("users", { desk_id: deskId, name: unique("trader"), roles: ["trader"], created_at: t0 })
  const taker = (yield* user(takerDesk)).id as number
  const makerUser = (yield* user(makerDesk)).id as number
  const makerId = unique("maker")
  yield* insertRow("makers", { maker_id: makerId, desk_id: makerDesk, name: "Maker", created_at: t0 })
  const credentials = (deskId: number) =>
    insertRow("exchange_credentials", {
      desk_id: deskId,
      alias: "dbt-main",
      exchange: "DBT",
      client_id: unique("client"),
      client_secret_encrypted: new Uint8Array([1, 2, 3]),
      created_at: t0
    })
  const takerCredentials = (yield* credentials(takerDesk)).id as number
  const makerCredentials = (yield* credentials(makerDesk)).id as number
  return {
    takerDesk,
    makerDesk,
    taker,
    makerUser,
    makerId,
    takerCredentials,
    makerCredentials
  } satisfies Graph
})

/** The columns of an open BTC option RFQ of the graph's taker; override what a test is about. */
export const rfqValues = (graph: Graph, overrides: Row = {}): Row => ({
  taker_desk_id: graph.takerDesk,
  taker_user_id: graph.taker,
  kind: "option",
  strategy: "Call",
  description: "BTC 27DEC30 100000 Call",
  status: "open",
  base_currency: "BTC",
  quote_currency: "BTC",
  quote_currencies: JSON.stringify({ DBT: "BTC", BULL: "USDC" }),
  amount: "25",
  settlement_options: ["DBT"],
  settlement_accounts: JSON.stringify({
    DBT: [{ credentialsId: graph.takerCredentials, percentage: "100" }]
  }),
  makers: JSON.stringify({ DBT: [graph.makerId] }),
  created_at: t0,
  expires_at: t0 + 300_000,
  ...overrides
})

export const insertRfq = (graph: Graph, overrides: Row = {}) =>
  Effect.map(insertRow("rfqs", rfqValues(graph, overrides)), (row) => row.id as number)

/** The columns of an active maker quote on `rfqId`. */
export const quoteValues = (graph: Graph, rfqId: number, overrides: Row = {}): Row => ({
  rfq_id: rfqId,
  maker_desk_id: graph.makerDesk,
  maker_user_id: graph.makerUser,
  maker_id: graph.makerId,
  direction: "sell",
  settlement_option: "DBT",
  quote_currency: "BTC",
  amount: "25",
  price: "0.0125",
  legs: JSON.stringify([{ instrumentName: "BTC-27DEC30-100000-C", price: "0.0125" }]),
  status: "active",
  created_at: t0,
  updated_at: t0,
  ...overrides
})

export const insertQuote = (graph: Graph, rfqId: number, overrides: Row = {}) =>
  Effect.map(insertRow("quotes", quoteValues(graph, rfqId, overrides)), (row) => row.id as number)

/**
 * Embedding the RFQ engine in a Node application, without the HTTP host: an in-memory PGlite
 * database, the shipped simulated venues, the contract's demo desks, and one RFQ from creation to
 * a filled trade. Run it with `node --conditions=source --import tsx packages/engine/examples/embed.ts`.
 */
import { randomBytes } from "node:crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import {
  CreateQuoteRequest,
  CreateRfqRequest,
  Engine,
  LegPricesRequest,
  SecretBoxLive,
  decodeRequest,
  makeDatabaseLayer,
  makeEngineLayer,
  seedDemoData
} from "@rfq/engine"
import { Effect, Layer } from "effect"

const encryptionKeys = new Map([[1, new Uint8Array(randomBytes(32))]])

/** Who is who in the demo data: the engine takes the caller's identity explicitly. */
const callerOf = (clientId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{
      userId: number
      deskId: number
      roles: Array<"trader" | "viewer">
      makerId: string | null
    }>`
      SELECT u.id AS "userId", u.desk_id AS "deskId", u.roles, m.maker_id AS "makerId"
      FROM api_clients c JOIN users u ON u.id = c.user_id LEFT JOIN makers m ON m.desk_id = u.desk_id
      WHERE c.client_id = ${clientId}`
    return { deskId: row!.deskId, userId: row!.userId, roles: row!.roles, makerId: row!.makerId ?? undefined }
  })

export const program = Effect.gen(function* () {
  const engine = yield* Engine
  const taker = yield* callerOf("demo-taker")
  const maker = yield* callerOf("demo-maker-1")

  // The taker asks maker-1 for a price on a 1x1 call spread, 50 BTC, settled on DBT.
  const { rfqId } = yield* engine.createRfq(
    taker,
    yield* decodeRequest(CreateRfqRequest, {
      baseCurrency: "BTC",
      amount: 50,
      anonymous: false,
      settlementOptions: ["DBT"],
      makers: { DBT: ["maker-1"] },
      legs: [
        { direction: "buy", instrumentName: "BTC-27DEC30-90000-C", ratio: 1 },
        { direction: "sell", instrumentName: "BTC-27DEC30-110000-C", ratio: 1 }
      ]
    })
  )

  // The maker prices each leg at the leg-price helper's answer for the RFQ's mark.
  const rfq = (yield* engine.getRfq(maker, rfqId)) as {
    markPrice: number
    legs: Array<{ instrumentName: string; direction: "buy" | "sell"; ratio: number }>
  }
  const priced = yield* engine.legPrices(
    maker,
    yield* decodeRequest(LegPricesRequest, {
      rfqId,
      price: Math.round(rfq.markPrice * 10_000) / 10_000,
      legs: rfq.legs.map(({ instrumentName, direction, ratio }) => ({ instrumentName, direction, ratio }))
    })
  )
  const { rfqQuoteId } = yield* engine.createQuote(
    maker,
    yield* decodeRequest(CreateQuoteRequest, {
      rfqId,
      direction: "sell",
      amount: 50,
      settlementOption: "DBT",
      legs: priced.legs.map((l) => ({ instrumentName: l.instrumentName, price: l.price }))
    })
  )

  // The taker accepts: one block trade on the simulated DBT, and the RFQ is filled.
  const trade = yield* engine.trade(taker, rfqQuoteId)
  const filled = yield* engine.getRfq(taker, rfqId)
  return { rfqId, rfqQuoteId, trade, status: (filled as { status: string }).status }
})

/** The engine over an embedded database; swap the database layer for PostgreSQL in production. */
export const EmbeddedEngine = Layer.unwrapEffect(
  Effect.gen(function* () {
    yield* seedDemoData({ hashSecret: (s) => Effect.succeed(`example-only:${s}`) }).pipe(
      Effect.provide(SecretBoxLive(encryptionKeys))
    )
    return makeEngineLayer({ rfqTtlMs: 300_000, encryptionKeys })
  })
).pipe(Layer.provideMerge(makeDatabaseLayer({ kind: "pglite", dataDir: "memory://" })))

if (import.meta.url === `file://${process.argv[1]}`) {
  Effect.runPromise(program.pipe(Effect.provide(EmbeddedEngine))).then(
    (result) => console.log(JSON.stringify(result, null, 2)),
    (error) => {
      console.error(error)
      process.exitCode = 1
    }
  )
}

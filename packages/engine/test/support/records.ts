import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { BigDecimal, Context, Effect, Layer } from "effect"
import type { SettlementOption } from "../../src/domain/Primitives.js"
import type { LegMarket } from "../../src/rfq/QuoteRules.js"
import { dec, decString } from "../../src/rfq/Dec.js"
import type {
  AllocationRecord,
  Caller,
  LegContract,
  QuoteRecord,
  RfqRecord,
  TradeRecord
} from "../../src/rfq/RfqRecord.js"

/**
 * Fixtures for storage tests: the reference rows RFQs point at (desks, users, makers, exchange
 * credentials), inserted with the database's own ids, and builders of realistic records over them.
 */

export interface MakerDesk {
  readonly makerId: string
  readonly deskId: number
  readonly userId: number
  readonly credentials: Readonly<Record<SettlementOption, number>>
}

export interface TakerDesk {
  readonly deskId: number
  readonly userId: number
  /** Two DBT accounts (for splits) and one BULL account. */
  readonly credentials: { readonly DBT: readonly [number, number]; readonly BULL: number }
}

export interface ReferenceData {
  readonly takers: readonly [TakerDesk, TakerDesk]
  readonly makers: readonly [MakerDesk, MakerDesk, MakerDesk]
}

export class Reference extends Context.Tag("test/Reference")<Reference, ReferenceData>() {}

const insertDesk = (sql: SqlClient.SqlClient, name: string) =>
  Effect.gen(function* () {
    const [desk] = yield* sql<{
      id: number
    }>`INSERT INTO desks (name, created_at) VALUES (${name}, 0) RETURNING id`
    const [user] = yield* sql<{ id: number }>`INSERT INTO users (desk_id, name, roles, created_at)
      VALUES (${desk!.id}, ${`${name} trader`}, '{trader}', 0) RETURNING id`
    return { deskId: Number(desk!.id), userId: Number(user!.id) }
  })

const insertCredentials = (
  sql: SqlClient.SqlClient,
  deskId: number,
  alias: string,
  exchange: SettlementOption
) =>
  Effect.map(
    sql<{ id: number }>`INSERT INTO exchange_credentials
        (desk_id, alias, exchange, client_id, client_secret_encrypted, created_at)
      VALUES (${deskId}, ${alias}, ${exchange}, ${`${deskId}-${alias}`}, ${new Uint8Array([1, 2, 3])}, 0)
      RETURNING id`,
    ([row]) => Number(row!.id)
  )

export const insertReferenceData: Effect.Effect<ReferenceData, SqlError, SqlClient.SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient
    const taker = (name: string) =>
      Effect.gen(function* () {
        const desk = yield* insertDesk(sql, name)
        const dbtA = yield* insertCredentials(sql, desk.deskId, "dbt-main", "DBT")
        const dbtB = yield* insertCredentials(sql, desk.deskId, "dbt-alt", "DBT")
        const bull = yield* insertCredentials(sql, desk.deskId, "bull-main", "BULL")
        return { ...desk, credentials: { DBT: [dbtA, dbtB] as const, BULL: bull } }
      })
    const maker = (n: number) =>
      Effect.gen(function* () {
        const desk = yield* insertDesk(sql, `Maker ${n}`)
        const makerId = `maker-${n}`
        yield* sql`INSERT INTO makers (maker_id, desk_id, name, created_at) VALUES (${makerId}, ${desk.deskId}, ${`Maker ${n}`}, 0)`
        const DBT = yield* insertCredentials(sql, desk.deskId, "dbt-main", "DBT")
        const BULL = yield* insertCredentials(sql, desk.deskId, "bull-main", "BULL")
        return { ...desk, makerId, credentials: { DBT, BULL } }
      })
    return {
      takers: [yield* taker("Taker A"), yield* taker("Taker B")],
      makers: [yield* maker(1), yield* maker(2), yield* maker(3)]
    }
  }
)

export const referenceLayer: Layer.Layer<Reference, SqlError, SqlClient.SqlClient> = Layer.effect(
  Reference,
  insertReferenceData
)

export const takerCaller = (taker: TakerDesk): Caller => ({
  deskId: taker.deskId,
  userId: taker.userId,
  roles: ["trader"]
})
export const makerCaller = (maker: MakerDesk): Caller => ({
  deskId: maker.deskId,
  userId: maker.userId,
  roles: ["trader"],
  makerId: maker.makerId
})

/** Venue rules loose enough for every fixture quote. */
export const looseMarket: LegMarket = {
  tick: "0.0001",
  low: "0.0001",
  high: "100000",
  amountStep: "0.1",
  minBlockAmount: "1"
}

const contract = (
  instrumentId: number,
  venueName: string,
  quoteCurrency: LegContract["quoteCurrency"]
): LegContract => ({
  instrumentId,
  venueName,
  quoteCurrency
})

/**
 * A two-leg BTC call spread on DBT (split 60/40 over the taker's two DBT accounts) and BULL (one
 * account), with a hedge, a label and indicative leg prices: every optional field present.
 */
export const rfqRecord = (ref: ReferenceData, id: number, over: Partial<RfqRecord> = {}): RfqRecord => {
  const taker = ref.takers[0]
  const [m1, m2, m3] = ref.makers
  return {
    id,
    requestId: 0,
    takerDeskId: taker.deskId,
    takerUserId: taker.userId,
    label: `rfq-${id}`,
    kind: "option",
    strategy: "Call Spread",
    description: "BTC 27DEC30 90000/110000 Call Spread",
    baseCurrency: "BTC",
    quoteCurrency: "BTC",
    quoteCurrencies: { DBT: "BTC", BULL: "USDC" },
    amount: "50",
    anonymous: false,
    settlementOptions: ["DBT", "BULL"],
    settlementAccounts: {
      DBT: [
        { credentialsId: taker.credentials.DBT[0], percentage: "60" },
        { credentialsId: taker.credentials.DBT[1], percentage: "40" }
      ],
      BULL: [{ credentialsId: taker.credentials.BULL, percentage: "100" }]
    },
    split: true,
    makers: { DBT: [m1.makerId, m2.makerId], BULL: [m1.makerId, m3.makerId] },
    legs: [
      {
        instrumentName: "BTC-27DEC30-90000-C",
        direction: "buy",
        ratio: "1",
        amount: "50",
        price: "0.1205",
        expiry: "27DEC30",
        contracts: {
          DBT: contract(101, "BTC-27DEC30-90000-C", "BTC"),
          BULL: contract(201, "BTC-27DEC30-90000-C-USDC", "USDC")
        }
      },
      {
        instrumentName: "BTC-27DEC30-110000-C",
        direction: "sell",
        ratio: "1.5",
        amount: "75",
        expiry: "27DEC30",
        contracts: {
          DBT: contract(102, "BTC-27DEC30-110000-C", "BTC"),
          BULL: contract(202, "BTC-27DEC30-110000-C-USDC", "USDC")
        }
      }
    ],
    hedge: {
      instrumentName: "BTC-PERPETUAL",
      direction: "sell",
      amount: "200000",
      price: "101234.5",
      contracts: { DBT: contract(103, "BTC-PERPETUAL", "BTC"), BULL: contract(203, "BTC-USDC-PERP", "USDC") }
    },
    markPrice: "-0.0125",
    createdAt: 1_700_000_000_000,
    expiresAt: 1_700_000_300_000,
    ...over
  }
}

/** The same RFQ without any optional field: no label, hedge, leg prices or expiries; one option. */
export const bareRfqRecord = (ref: ReferenceData, id: number, over: Partial<RfqRecord> = {}): RfqRecord => {
  const { label: _label, hedge: _hedge, ...base } = rfqRecord(ref, id)
  return {
    ...base,
    quoteCurrencies: { DBT: "BTC" },
    settlementOptions: ["DBT"],
    settlementAccounts: { DBT: [{ credentialsId: ref.takers[0].credentials.DBT[0], percentage: "100" }] },
    split: false,
    makers: { DBT: [ref.makers[0].makerId] },
    legs: [
      {
        instrumentName: "BTC-PERPETUAL",
        direction: "buy",
        ratio: "1",
        amount: "50",
        contracts: { DBT: contract(103, "BTC-PERPETUAL", "BTC") }
      }
    ],
    ...over
  }
}

/** A maker's quote on `rfq` whose legs follow the RFQ's (an ask sells the structure as listed). */
export const quoteRecord = (
  rfq: RfqRecord,
  maker: MakerDesk,
  id: number,
  over: Partial<QuoteRecord> = {}
): QuoteRecord => {
  const direction = over.direction ?? "sell"
  const option = over.settlementOption ?? "DBT"
  const amount = over.amount ?? rfq.amount
  const legs = rfq.legs.map((leg, i) => ({
    instrumentName: leg.instrumentName,
    instrumentId: leg.contracts[option]?.instrumentId ?? 0,
    direction:
      direction === "sell" ? leg.direction : leg.direction === "buy" ? ("sell" as const) : ("buy" as const),
    price: decString(BigDecimal.sum(dec("0.1"), BigDecimal.unsafeFromString(`0.00${i + 1}`))),
    amount: decString(BigDecimal.multiply(dec(amount), dec(leg.ratio)))
  }))
  return {
    id,
    rfqId: rfq.id,
    makerId: maker.makerId,
    makerDeskId: maker.deskId,
    makerUserId: maker.userId,
    label: `q-${id}`,
    direction,
    settlementOption: option,
    settlementCredentials: maker.credentials[option],
    quoteCurrency: rfq.quoteCurrencies[option] ?? rfq.quoteCurrency,
    amount,
    price: "0.0505",
    legs,
    ...(rfq.hedge === undefined
      ? {}
      : {
          hedge: {
            instrumentName: rfq.hedge.instrumentName,
            instrumentId: rfq.hedge.contracts[option]?.instrumentId ?? 0,
            direction: rfq.hedge.direction,
            price: rfq.hedge.price,
            amount: rfq.hedge.amount
          }
        }),
    status: "active",
    createdAt: rfq.createdAt + 1_000,
    updatedAt: rfq.createdAt + 1_000,
    ...over
  }
}

/**
 * The pending trade of accepting `quote`: one allocation per settlement account of the quote's
 * option, amount = quote amount × percentage / 100, ids from `allocationIds`.
 */
export const pendingTrade = (
  rfq: RfqRecord,
  quote: QuoteRecord,
  tradeId: number,
  allocationIds: ReadonlyArray<number>,
  createdAt: number
): TradeRecord => {
  const accounts = rfq.settlementAccounts[quote.settlementOption] ?? []
  return {
    id: tradeId,
    rfqId: rfq.id,
    quoteId: quote.id,
    makerId: quote.makerId,
    makerDeskId: quote.makerDeskId,
    settlementOption: quote.settlementOption,
    makerDirection: quote.direction,
    price: quote.price,
    amount: quote.amount,
    filledAmount: "0",
    createdAt,
    allocations: accounts.map(
      (a, i): AllocationRecord => ({
        id: allocationIds[i]!,
        credentialsId: a.credentialsId,
        percentage: a.percentage,
        amount: decString(
          BigDecimal.unsafeDivide(BigDecimal.multiply(dec(quote.amount), dec(a.percentage)), dec("100"))
        ),
        status: "pending",
        idempotencyKey: `trade-${tradeId}-allocation-${allocationIds[i]!}`,
        updatedAt: createdAt
      })
    )
  }
}

/** The trade after the venue answered: allocation i filled when `filled[i]`, else failed. */
export const settledTrade = (trade: TradeRecord, filled: ReadonlyArray<boolean>, at: number): TradeRecord => {
  const allocations = trade.allocations.map(
    (a, i): AllocationRecord =>
      filled[i] === true
        ? { ...a, status: "filled", exchangeTradeId: `BT-${a.id}`, updatedAt: at }
        : { ...a, status: "failed", reason: "venue refused the block trade", updatedAt: at }
  )
  const filledAmount = allocations
    .filter((a) => a.status === "filled")
    .reduce((sum, a) => BigDecimal.sum(sum, dec(a.amount)), dec("0"))
  return { ...trade, allocations, filledAmount: decString(filledAmount) }
}

import { randomBytes } from "node:crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import { BigDecimal, Context, Effect, Exit, Layer, Option, Scope } from "effect"
import { decodeRequest } from "../../src/api/Decode.js"
import { CreateQuoteRequest } from "../../src/api/QuoteRequests.js"
import { CreateRfqRequest } from "../../src/api/RfqRequests.js"
import { ActiveQuotesInMemory } from "../../src/engine/ActiveQuotes.js"
import { Engine, EngineLive, type EngineService } from "../../src/engine/Engine.js"
import { engineServicesLayer, makeEngineLayer } from "../../src/engine/EngineLayer.js"
import { Ownership } from "../../src/engine/Ownership.js"
import type { Caller } from "../../src/rfq/RfqRecord.js"
import { SecretBoxLive, type SecretBox } from "../../src/security/SecretBox.js"
import { type Events, EventsLive } from "../../src/services/Events.js"
import { Pricing } from "../../src/services/Pricing.js"
import { Venues } from "../../src/services/Venues.js"
import { seedDemoData } from "../../src/storage/DemoSeed.js"
import type { VenueLedger } from "../../src/venues/VenueLedger.js"
import type { AccountRegistration } from "../../src/venues/VenueAccounts.js"
import { pgliteTestLayer } from "./TestDatabases.js"

/** A fixed wall-clock start for engine tests (TestClock starts at 0, before any listed expiry). */
export const testEpoch = Date.parse("2026-11-20T12:00:00Z")
export const rfqTtlMs = 300_000

export const encryptionKeys = new Map([[1, new Uint8Array(randomBytes(32))]])

export interface DemoCallers {
  readonly taker: Caller
  readonly viewer: Caller
  readonly maker1: Caller
  readonly maker2: Caller
  readonly maker3: Caller
  /** Credentials ids of the taker desk by alias, and of each maker desk. */
  readonly credentials: Readonly<Record<string, number>>
}

/** Seeds the contract's demo data on an empty database (once) and reads back who is who. */
export const seedAndResolve = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const seeded = yield* seedDemoData({ hashSecret: (s) => Effect.succeed(`plain:${s}`) }).pipe(
    Effect.provide(SecretBoxLive(encryptionKeys))
  )
  const callerOf = (clientId: string) =>
    Effect.gen(function* () {
      const rows = yield* sql<{
        userId: number
        deskId: number
        roles: Array<string>
        makerId: string | null
      }>`
        SELECT u.id AS "userId", u.desk_id AS "deskId", u.roles, m.maker_id AS "makerId"
        FROM api_clients c JOIN users u ON u.id = c.user_id LEFT JOIN makers m ON m.desk_id = u.desk_id
        WHERE c.client_id = ${clientId}`
      const row = rows[0]!
      const caller: Caller = {
        deskId: Number(row.deskId),
        userId: Number(row.userId),
        roles: row.roles as Caller["roles"],
        ...(row.makerId === null ? {} : { makerId: row.makerId })
      }
      return caller
    })
  const creds = yield* sql<{ id: number; alias: string; deskId: number }>`
    SELECT id, alias, desk_id AS "deskId" FROM exchange_credentials WHERE deleted_at IS NULL`
  const taker = yield* callerOf("demo-taker")
  const credentials: Record<string, number> = {}
  for (const c of creds) {
    const owner = Number(c.deskId) === taker.deskId ? "taker" : `desk${c.deskId}`
    credentials[`${owner}:${c.alias}`] = Number(c.id)
  }
  const callers: DemoCallers = {
    taker,
    viewer: yield* callerOf("demo-viewer"),
    maker1: yield* callerOf("demo-maker-1"),
    maker2: yield* callerOf("demo-maker-2"),
    maker3: yield* callerOf("demo-maker-3"),
    credentials
  }
  return { callers, venueAccounts: seeded.venueAccounts as ReadonlyArray<AccountRegistration> }
})

export const engineLayerFor = (venueAccounts: ReadonlyArray<AccountRegistration>) =>
  makeEngineLayer({ rfqTtlMs, encryptionKeys, venueAccounts })

export type EngineContext = Context.Context<Engine | Venues | Pricing | VenueLedger | SecretBox>

/**
 * Starts an engine over the database in context, in its own scope, so a test can stop it and start
 * another one on the same data (a restart).
 */
export const startEngine = (venueAccounts: ReadonlyArray<AccountRegistration>) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(engineLayerFor(venueAccounts), scope)
    const stop = Scope.close(scope, Exit.void)
    return {
      context: context as unknown as EngineContext,
      engine: Context.get(context, Engine) as EngineService,
      stop
    }
  })

/** Prices on tick at each leg's mark for a quote on `option`, as a maker would send them. */
export const markPrices = (
  engineCtx: EngineContext,
  option: "DBT" | "BULL",
  quoteCurrency: "BTC" | "ETH" | "USDC",
  names: ReadonlyArray<string>
) =>
  Effect.gen(function* () {
    const venues = Context.get(engineCtx, Venues)
    const pricing = Context.get(engineCtx, Pricing)
    return yield* Effect.forEach(names, (name) =>
      Effect.gen(function* () {
        const instrument = Option.getOrThrow(yield* venues.resolve(option, name, quoteCurrency))
        const mark = yield* pricing.mark(instrument)
        const ticks = BigDecimal.unsafeDivide(mark, instrument.tickSize)
        const rounded = BigDecimal.multiply(BigDecimal.round(ticks, { scale: 0 }), instrument.tickSize)
        const price = BigDecimal.lessThan(rounded, instrument.tickSize) ? instrument.tickSize : rounded
        return { instrumentName: name, price: BigDecimal.normalize(price) }
      })
    )
  })

/**
 * A decoded DBT quote on `rfqId` at each leg's mark (`markPrices`): 100 to sell unless `fields`
 * say otherwise (any other field of the request may be added there too).
 */
export const quoteAtMark = (
  engineCtx: EngineContext,
  rfqId: number,
  names: ReadonlyArray<string>,
  fields: Record<string, unknown> = {}
) =>
  Effect.flatMap(markPrices(engineCtx, "DBT", "BTC", names), (prices) =>
    decodeRequest(CreateQuoteRequest, {
      rfqId,
      direction: "sell",
      amount: 100,
      settlementOption: "DBT",
      legs: prices.map((p) => ({
        instrumentName: p.instrumentName,
        price: Number(p.price.value) / 10 ** p.price.scale
      })),
      ...fields
    })
  )

/**
 * An engine that shares ownership (as one host of several does, owning the RFQs `owns` accepts,
 * every one by default) on a fresh seeded PGlite, with in-memory events (or `events`) and active quotes; its whole context, and who
 * is who.
 */
export const sharedOwnerEngineWith = (
  events: Layer.Layer<Events> = EventsLive,
  owns: (rfqId: number) => boolean = () => true
) =>
  Effect.gen(function* () {
    const sql = Context.get(yield* Layer.build(pgliteTestLayer), SqlClient.SqlClient)
    const { callers, venueAccounts } = yield* Effect.provideService(seedAndResolve, SqlClient.SqlClient, sql)
    const context = yield* sharedOwnerEngineOn(sql, venueAccounts, events, owns)
    return { context, callers, sql, venueAccounts }
  })

/**
 * `sharedOwnerEngineWith`'s engine on a database already seeded: a second engine beside the first,
 * owning the RFQs `owns` accepts (every one by default).
 */
export const sharedOwnerEngineOn = (
  sql: SqlClient.SqlClient,
  venueAccounts: ReadonlyArray<AccountRegistration>,
  events: Layer.Layer<Events> = EventsLive,
  owns: (rfqId: number) => boolean = () => true
) =>
  Effect.gen(function* () {
    const services = engineServicesLayer(
      { rfqTtlMs, encryptionKeys, venueAccounts },
      {
        ownership: Layer.succeed(Ownership, { owns, shared: true }),
        events,
        activeQuotes: ActiveQuotesInMemory
      }
    )
    const context = yield* Layer.build(
      EngineLive({ rfqTtlMs }).pipe(
        Layer.provideMerge(services),
        Layer.provide(Layer.succeed(SqlClient.SqlClient, sql))
      )
    )
    return context
  })

export const sharedOwnerEngine = sharedOwnerEngineWith()

/**
 * A decoded create of the spread `legs` (buy the first, sell the second) for `amount`, settled on DBT to
 * the taker's `dbt-main` account, asking maker-1 and maker-2; `id` is the request id.
 */
export const spreadRfqRequest = (
  callers: DemoCallers,
  legs: readonly [string, string],
  id = 0,
  amount = 100
) =>
  decodeRequest(CreateRfqRequest, {
    id,
    baseCurrency: "BTC",
    amount,
    anonymous: false,
    settlementOptions: ["DBT"],
    settlementAccounts: { DBT: [{ credentialsId: callers.credentials["taker:dbt-main"], percentage: 100 }] },
    makers: { DBT: ["maker-1", "maker-2"] },
    legs: [
      { direction: "buy", instrumentName: legs[0], ratio: 1 },
      { direction: "sell", instrumentName: legs[1], ratio: 1 }
    ]
  })

import * as SqlClient from "@effect/sql/SqlClient"
import type { Fragment } from "@effect/sql/Statement"
import { Clock, Effect, Layer, Option, Queue, Schema, Scope } from "effect"
import { ClusterBus } from "../cluster/ClusterBus.js"
import {
  AccountStore,
  type AccountStoreService,
  type CredentialsRow,
  type NewCredentials,
  type ReadOptions
} from "../accounts/AccountStore.js"
import { apiError } from "../domain/Errors.js"
import { SettlementOption } from "../domain/Primitives.js"
import { StorageConstraints } from "./Migrations.js"
import { ReadCache } from "./ReadCache.js"
import { isUniqueViolation } from "./SqlErrors.js"

/** How long another process's change to credentials or makers may take to show (the engine's own show at once). */
export const REFERENCE_TTL_MILLIS = 5_000

/**
 * Desks' reference data over SQL. Deleted credentials are soft-deleted (quotes, trades and
 * allocations keep referring to them) and invisible to every read here; their alias can be reused.
 * SQL failures are defects, except the duplicate alias a desk can fix.
 */

/** Decodes rows of our own tables; a row that does not match is a defect (corrupt data or a bug). */
const decodeRows = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknown(Schema.Array(schema))
  return (rows: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<A>> => Effect.orDie(decode(rows))
}

// node-postgres reads bytea as a Buffer, PGlite as a Uint8Array: both are Uint8Arrays.
const Bytes = Schema.declare((u): u is Uint8Array => u instanceof Uint8Array)

const CredentialsDbRow = Schema.Struct({
  id: Schema.Number,
  deskId: Schema.Number,
  alias: Schema.String,
  exchange: SettlementOption,
  clientId: Schema.String,
  clientSecretSealed: Bytes,
  isExchangeDefault: Schema.Boolean
})
const decodeCredentials = decodeRows(CredentialsDbRow)

const MakerDbRow = Schema.Struct({ makerId: Schema.String, deskId: Schema.Number, name: Schema.String })
const decodeMakers = decodeRows(MakerDbRow)

const CounterpartyDbRow = Schema.Struct({
  id: Schema.Number,
  name: Schema.String,
  allowsBlockTrade: Schema.Boolean
})
const decodeCounterparties = decodeRows(CounterpartyDbRow)

const credentialsColumns = `c.id, c.desk_id AS "deskId", c.alias, c.exchange, c.client_id AS "clientId",
  c.client_secret_encrypted AS "clientSecretSealed", c.is_exchange_default AS "isExchangeDefault"`

const toCredentials = (row: typeof CredentialsDbRow.Type): CredentialsRow => ({
  ...row,
  // A copy detached from the driver's buffer pool.
  clientSecretSealed: new Uint8Array(row.clientSecretSealed)
})

export const makeSqlAccountStore: Effect.Effect<AccountStoreService, never, SqlClient.SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient

    // Credentials are read on every RFQ, quote and settlement and change rarely; makers likewise.
    // The store's own writes clear the caches at once, and, with several hosts, every other host's
    // too (`ClusterBus`, topic `accounts.changed`); other processes' writes (the admin command)
    // show within the TTL.
    const credentialsCache = new ReadCache<string, ReadonlyArray<CredentialsRow>>(
      REFERENCE_TTL_MILLIS,
      10_000
    )
    const makersCache = new ReadCache<string, ReadonlyArray<typeof MakerDbRow.Type>>(
      REFERENCE_TTL_MILLIS,
      10_000
    )
    const bus = yield* Effect.serviceOption(ClusterBus)
    const forget = () => {
      credentialsCache.clear()
      makersCache.clear()
    }
    // Built in a scope (`SqlAccountStoreLive`) with a bus: other hosts' writes clear these caches.
    const scope = yield* Effect.serviceOption(Scope.Scope)
    if (Option.isSome(bus) && Option.isSome(scope)) {
      const notices = yield* bus.value.subscribe(ACCOUNTS_CHANGED).pipe(Scope.extend(scope.value))
      yield* Queue.take(notices).pipe(
        Effect.tap(() => Effect.sync(forget)),
        Effect.forever,
        Effect.forkIn(scope.value)
      )
    }
    /** Clears this host's caches now and every other host's through the bus. */
    const changed = Effect.sync(forget).pipe(
      Effect.zipRight(Option.isSome(bus) ? bus.value.broadcast(ACCOUNTS_CHANGED, null) : Effect.void)
    )

    const selectCredentials = (where: Fragment) =>
      Effect.flatMap(
        sql`SELECT ${sql.literal(credentialsColumns)} FROM exchange_credentials c
          WHERE c.deleted_at IS NULL AND ${where} ORDER BY c.id`,
        decodeCredentials
      ).pipe(
        Effect.map((rows) => rows.map(toCredentials)),
        Effect.orDie
      )

    const cached = <E, R>(
      key: string,
      load: Effect.Effect<ReadonlyArray<CredentialsRow>, E, R>,
      options?: ReadOptions
    ) => (options?.fresh === true ? load : credentialsCache.get(key, load))

    const credentialsOfDesk = (deskId: number, options?: ReadOptions) =>
      cached(`desk:${deskId}`, selectCredentials(sql`c.desk_id = ${deskId}`), options)

    const credentials = (id: number, options?: ReadOptions) =>
      Effect.map(cached(`id:${id}`, selectCredentials(sql`c.id = ${id}`), options), (rows) =>
        Option.fromNullable(rows[0])
      )

    const credentialsByAlias = (deskId: number, alias: string) =>
      Effect.map(
        cached(
          `alias:${deskId}:${alias}`,
          selectCredentials(sql`c.desk_id = ${deskId} AND c.alias = ${alias}`)
        ),
        (rows) => Option.fromNullable(rows[0])
      )

    const insertCredentials = Effect.fn("AccountStore.insertCredentials")(function* (row: NewCredentials) {
      const now = yield* Clock.currentTimeMillis
      const write = Effect.gen(function* () {
        // At most one default per desk and exchange: a new default replaces the previous one.
        if (row.isExchangeDefault) {
          yield* sql`UPDATE exchange_credentials SET is_exchange_default = false
            WHERE desk_id = ${row.deskId} AND exchange = ${row.exchange} AND is_exchange_default
              AND deleted_at IS NULL`
        }
        const inserted = yield* sql<{ id: number }>`INSERT INTO exchange_credentials
            (desk_id, alias, exchange, client_id, client_secret_encrypted, is_exchange_default, created_at)
          VALUES (${row.deskId}, ${row.alias}, ${row.exchange}, ${row.clientId}, ${row.clientSecretSealed},
            ${row.isExchangeDefault}, ${now})
          RETURNING id`
        return Number(inserted[0]!.id)
      })
      return yield* sql.withTransaction(write).pipe(
        Effect.ensuring(changed),
        Effect.catchTag("SqlError", (error) =>
          isUniqueViolation(error, StorageConstraints.credentialsAliasPerDesk)
            ? Effect.fail(apiError("duplicateCredentialsAlias"))
            : Effect.die(error)
        )
      )
    })

    const deleteCredentials = Effect.fn("AccountStore.deleteCredentials")(function* (
      deskId: number,
      id: number
    ) {
      const now = yield* Clock.currentTimeMillis
      const rows = yield* sql`UPDATE exchange_credentials SET deleted_at = ${now}
        WHERE id = ${id} AND desk_id = ${deskId} AND deleted_at IS NULL
        RETURNING id`.pipe(Effect.orDie, Effect.ensuring(changed))
      return rows.length === 1
    })

    const selectMakers = (key: string, where: Fragment) =>
      makersCache.get(
        key,
        Effect.flatMap(
          sql`SELECT maker_id AS "makerId", desk_id AS "deskId", name FROM makers WHERE ${where} ORDER BY maker_id`,
          decodeMakers
        ).pipe(Effect.orDie)
      )

    const makers = selectMakers("all", sql`true`)

    const makerOfDesk = (deskId: number) =>
      Effect.map(selectMakers(`desk:${deskId}`, sql`desk_id = ${deskId}`), (rows) =>
        Option.fromNullable(rows[0])
      )

    // The desks this desk lists as OTC counterparties. Using a counterparty's credentials in a bulk
    // block trade needs that desk's consent: its own listing of this desk, allowing block trades.
    const counterparties = Effect.fn("AccountStore.counterparties")(function* (deskId: number) {
      return yield* Effect.flatMap(
        sql`SELECT d.id, d.name, coalesce(back.allows_block_trade, false) AS "allowsBlockTrade"
          FROM otc_counterparties o
          JOIN desks d ON d.id = o.counterparty_desk_id
          LEFT JOIN otc_counterparties back
            ON back.desk_id = o.counterparty_desk_id AND back.counterparty_desk_id = o.desk_id
          WHERE o.desk_id = ${deskId}
          ORDER BY d.id`,
        decodeCounterparties
      ).pipe(Effect.orDie)
    })

    // The port does not say which user claims; `block_trade_nonces.user_id` is required, so the
    // row records the desk's lowest user id (an audit hint only; uniqueness is per desk).
    const claimNonce = Effect.fn("AccountStore.claimNonce")(function* (deskId: number, nonce: string) {
      const now = yield* Clock.currentTimeMillis
      const rows = yield* sql<{
        readonly id: number | string | bigint
      }>`INSERT INTO block_trade_nonces (desk_id, nonce, user_id, created_at)
        SELECT ${deskId}, ${nonce}, min(u.id), ${now} FROM users u WHERE u.desk_id = ${deskId}
        ON CONFLICT (desk_id, nonce) DO NOTHING
        RETURNING id`.pipe(Effect.orDie)
      return rows.length === 1 ? Option.some(Number(rows[0]!.id)) : Option.none()
    })

    return {
      credentialsOfDesk,
      credentials,
      credentialsByAlias,
      insertCredentials,
      deleteCredentials,
      makers,
      makerOfDesk,
      counterparties,
      claimNonce,
      referenceDataChanged: changed,
      forgetReferenceData: Effect.sync(forget)
    } satisfies AccountStoreService
  }
)

/** The bus topic on which a host says reference data (credentials, makers) changed. */
export const ACCOUNTS_CHANGED = "accounts.changed"

/** `AccountStore` over the `SqlClient` in context (and the `ClusterBus`, when several hosts share it). */
export const SqlAccountStoreLive: Layer.Layer<AccountStore, never, SqlClient.SqlClient> = Layer.scoped(
  AccountStore,
  makeSqlAccountStore
)

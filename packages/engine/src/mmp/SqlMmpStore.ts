import * as SqlClient from "@effect/sql/SqlClient"
import { BigDecimal, Clock, Effect, Layer, Option } from "effect"
import type { BaseCurrency } from "../domain/Primitives.js"
import {
  countedAfter,
  fillBarred,
  frozenUntilOf,
  isFrozenAt,
  limitReached,
  MAX_INTERVAL_MS,
  type MmpConfig,
  type MmpConfigState,
  settledFigures,
  staleBeforeOfReset,
  staleBeforeOfTrip,
  type WindowFigures
} from "./MmpRules.js"
import { type Admission, MmpStore, type MmpStoreService, type PlannedFill } from "./MmpStore.js"

type WindowArgs = Parameters<MmpStoreService["window"]>

/**
 * `MmpStore` over the `SqlClient` (PostgreSQL or PGlite, migration `0005_mmp`). A fill is admitted
 * in one short transaction: the desk's config row locked (`FOR UPDATE`), the freeze checked, the
 * fill inserted and the window summed in one statement, the trip written when a limit is reached.
 * Nothing else runs inside it (no venue call, no mailbox), so it never waits on anything but another
 * fill of the same desk and currency; on PGlite, whose one session a transaction holds, it is four
 * statements long. Under READ COMMITTED each statement after the lock sees every fill committed
 * before the lock was granted. SQL failures are defects, as in the other stores.
 */

interface ConfigRow {
  readonly baseCurrency: string
  readonly intervalMs: number | string
  readonly frozenMs: number | string
  readonly amountLimit: string | null
  readonly deltaLimit: string | null
  readonly tradeCountLimit: number | null
  readonly frozenAt: number | string | null
  readonly frozenUntil: number | string | null
  readonly tripFillId: number | string | null
  readonly clearedThrough: number | string
  readonly staleBefore: number | string | null
}

const optionalNumber = (v: number | string | null): number | undefined => (v === null ? undefined : Number(v))
const optionalDecimal = (v: string | null) =>
  v === null ? undefined : BigDecimal.normalize(BigDecimal.unsafeFromString(v))
const decimalText = (d: BigDecimal.BigDecimal | undefined) =>
  d === undefined ? null : BigDecimal.format(BigDecimal.normalize(d))

const configOf = (row: ConfigRow): MmpConfigState => ({
  baseCurrency: row.baseCurrency as BaseCurrency,
  intervalMs: Number(row.intervalMs),
  frozenMs: Number(row.frozenMs),
  amountLimit: optionalDecimal(row.amountLimit),
  deltaLimit: optionalDecimal(row.deltaLimit),
  tradeCountLimit: optionalNumber(row.tradeCountLimit),
  frozenAt: optionalNumber(row.frozenAt),
  frozenUntil: optionalNumber(row.frozenUntil),
  tripFillId: optionalNumber(row.tripFillId),
  clearedThrough: Number(row.clearedThrough),
  staleBefore: optionalNumber(row.staleBefore)
})

const figuresOf = (row: { amount: string; delta: string; trades: number | string }): WindowFigures => ({
  amount: BigDecimal.normalize(BigDecimal.unsafeFromString(row.amount)),
  delta: BigDecimal.normalize(BigDecimal.unsafeFromString(row.delta)),
  trades: Number(row.trades)
})

export const makeSqlMmpStore: Effect.Effect<MmpStoreService, never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql) => {
    const columns = sql.literal(`base_currency AS "baseCurrency", interval_ms AS "intervalMs",
      frozen_ms AS "frozenMs", amount_limit::text AS "amountLimit", delta_limit::text AS "deltaLimit",
      trade_count_limit AS "tradeCountLimit", frozen_at AS "frozenAt", frozen_until AS "frozenUntil",
      trip_fill_id AS "tripFillId", cleared_through AS "clearedThrough", stale_before AS "staleBefore"`)

    const configs = (deskId: number) =>
      sql<ConfigRow>`SELECT ${columns} FROM mmp_configs WHERE desk_id = ${deskId} ORDER BY base_currency`.pipe(
        Effect.map((rows) => rows.map(configOf)),
        Effect.orDie
      )

    const putConfig = (deskId: number, c: MmpConfig, now: number) =>
      sql<ConfigRow>`INSERT INTO mmp_configs (desk_id, base_currency, interval_ms, frozen_ms, amount_limit,
          delta_limit, trade_count_limit, updated_at)
        VALUES (${deskId}, ${c.baseCurrency}, ${c.intervalMs}, ${c.frozenMs}, ${decimalText(c.amountLimit)}::numeric,
          ${decimalText(c.deltaLimit)}::numeric, ${c.tradeCountLimit ?? null}::integer, ${now})
        ON CONFLICT (desk_id, base_currency) DO UPDATE SET interval_ms = excluded.interval_ms,
          frozen_ms = excluded.frozen_ms, amount_limit = excluded.amount_limit,
          delta_limit = excluded.delta_limit, trade_count_limit = excluded.trade_count_limit,
          updated_at = excluded.updated_at
        RETURNING ${columns}`.pipe(
        Effect.map((rows) => configOf(rows[0]!)),
        Effect.orDie
      )

    const deleteConfig = (deskId: number, baseCurrency: BaseCurrency) =>
      sql<{ n: number }>`WITH gone AS (
          DELETE FROM mmp_configs WHERE desk_id = ${deskId} AND base_currency = ${baseCurrency} RETURNING 1),
        fills AS (DELETE FROM mmp_fills WHERE desk_id = ${deskId} AND base_currency = ${baseCurrency})
        SELECT count(*)::int AS n FROM gone`.pipe(
        Effect.map((rows) => Number(rows[0]?.n ?? 0) > 0),
        Effect.orDie
      )

    const lockConfig = (deskId: number, baseCurrency: BaseCurrency) =>
      Effect.map(
        sql<ConfigRow>`SELECT ${columns} FROM mmp_configs
          WHERE desk_id = ${deskId} AND base_currency = ${baseCurrency} FOR UPDATE`,
        (rows) => (rows[0] === undefined ? undefined : configOf(rows[0]))
      )

    const reset = (deskId: number, baseCurrency: BaseCurrency, now: number) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            const locked = yield* lockConfig(deskId, baseCurrency)
            if (locked === undefined) return Option.none()
            yield* sql`UPDATE mmp_configs SET frozen_at = NULL, frozen_until = NULL, trip_fill_id = NULL,
                stale_before = ${staleBeforeOfReset(locked, now) ?? null}::bigint, cleared_through = greatest(cleared_through, (SELECT coalesce(max(id), 0) FROM mmp_fills
                  WHERE desk_id = ${deskId} AND base_currency = ${baseCurrency})), updated_at = ${now}
              WHERE desk_id = ${deskId} AND base_currency = ${baseCurrency}`
            return Option.some({ wasFrozen: isFrozenAt(locked, now) })
          })
        )
        .pipe(Effect.orDie)

    /** Which fills a window counts; the same arguments as `MmpStoreService.window`. */
    const windowSql = (...[deskId, baseCurrency, intervalMs, after, now]: WindowArgs) =>
      // A fragment with parameters, not literal text: the statement's text is the same for every
      // fill, so it is prepared once per connection (`storage/PreparedNames.ts`). No `at <= now`:
      // a fill admitted before counts even if its instant is later (`MmpRules.ts#inWindow`).
      sql`desk_id = ${deskId} AND base_currency = ${baseCurrency}
        AND id > ${after} AND at > ${now - intervalMs} AND amount > 0`

    const window = (...args: WindowArgs) =>
      sql<{ amount: string; delta: string; trades: number }>`SELECT coalesce(sum(amount), 0)::text AS amount,
          coalesce(sum(delta), 0)::text AS delta, count(*)::int AS trades
        FROM mmp_fills WHERE ${windowSql(...args)}`.pipe(
        Effect.map((rows) => figuresOf(rows[0]!)),
        Effect.orDie
      )

    const admit = (fill: PlannedFill): Effect.Effect<Admission> =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            const state = yield* lockConfig(fill.deskId, fill.baseCurrency)
            if (state === undefined) return { _tag: "Unprotected" } as const
            // Frozen, or a quote the last trip should have cancelled (its notice may have been lost).
            if (fillBarred(state, fill.quotePutAt, fill.at)) return { _tag: "Frozen" } as const
            const thawed = state.frozenAt !== undefined
            const after = countedAfter(state, fill.at)
            const amount = decimalText(fill.amount)
            const delta = decimalText(fill.delta)
            // The sums see the table as it was before this statement's insert: the fill is added here.
            const rows = yield* sql<{ id: number; amount: string; delta: string; trades: number }>`WITH
                pruned AS (DELETE FROM mmp_fills WHERE desk_id = ${fill.deskId}
                  AND base_currency = ${fill.baseCurrency} AND at <= ${fill.at - MAX_INTERVAL_MS}),
                added AS (INSERT INTO mmp_fills (desk_id, base_currency, trade_id, rfq_id, at, planned_amount,
                    planned_delta, amount, delta)
                  VALUES (${fill.deskId}, ${fill.baseCurrency}, ${fill.tradeId}, ${fill.rfqId}, ${fill.at},
                    ${amount}::numeric, ${delta}::numeric, ${amount}::numeric, ${delta}::numeric)
                  RETURNING id)
              SELECT (SELECT id FROM added) AS id,
                (coalesce(sum(amount), 0) + ${amount}::numeric)::text AS amount,
                (coalesce(sum(delta), 0) + ${delta}::numeric)::text AS delta, (count(*) + 1)::int AS trades
              FROM mmp_fills WHERE ${windowSql(fill.deskId, fill.baseCurrency, state.intervalMs, after, fill.at)}`
            const fillId = Number(rows[0]!.id)
            const window = figuresOf(rows[0]!)
            const limit = limitReached(state, window)
            if (limit === undefined && !thawed) return { _tag: "Admitted", thawed } as const
            const frozenUntil = limit === undefined ? undefined : frozenUntilOf(state, fill.at)
            const staleBefore =
              limit === undefined
                ? state.staleBefore
                : staleBeforeOfTrip(fill.at, yield* Clock.currentTimeMillis, frozenUntil)
            yield* sql`UPDATE mmp_configs SET
                stale_before = ${staleBefore ?? null}::bigint,
                frozen_at = ${limit === undefined ? null : fill.at}::bigint,
                frozen_until = ${frozenUntil ?? null}::bigint,
                trip_fill_id = ${limit === undefined ? null : fillId}::bigint,
                cleared_through = ${after}, updated_at = ${fill.at}
              WHERE desk_id = ${fill.deskId} AND base_currency = ${fill.baseCurrency}`
            return {
              _tag: "Admitted",
              thawed,
              tripped: limit === undefined ? undefined : { limit, window, frozenUntil }
            } as const
          })
        )
        .pipe(Effect.orDie)

    const settle = (tradeId: number, filled: BigDecimal.BigDecimal) =>
      Effect.gen(function* () {
        const rows = yield* sql<{ plannedAmount: string; plannedDelta: string }>`SELECT
            planned_amount::text AS "plannedAmount", planned_delta::text AS "plannedDelta"
          FROM mmp_fills WHERE trade_id = ${tradeId}`
        const row = rows[0]
        if (row === undefined) return
        const counted = settledFigures(
          {
            amount: BigDecimal.unsafeFromString(row.plannedAmount),
            delta: BigDecimal.unsafeFromString(row.plannedDelta)
          },
          filled
        )
        yield* sql`UPDATE mmp_fills SET amount = ${decimalText(counted.amount)}::numeric,
            delta = ${decimalText(counted.delta)}::numeric, settled = true
          WHERE trade_id = ${tradeId}`
      }).pipe(Effect.orDie)

    const thaw = (deskId: number, baseCurrency: BaseCurrency, frozenAt: number, now: number) =>
      sql<{ deskId: number }>`UPDATE mmp_configs SET frozen_at = NULL, frozen_until = NULL,
          cleared_through = greatest(cleared_through, coalesce(trip_fill_id, 0)), trip_fill_id = NULL,
          updated_at = ${now}
        WHERE desk_id = ${deskId} AND base_currency = ${baseCurrency} AND frozen_at = ${frozenAt}
          AND frozen_until IS NOT NULL AND frozen_until <= ${now}
        RETURNING desk_id AS "deskId"`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    const timedFreezes = sql<{
      deskId: number | string
      baseCurrency: string
      frozenAt: number | string
      frozenUntil: number | string
    }>`SELECT desk_id AS "deskId", base_currency AS "baseCurrency", frozen_at AS "frozenAt",
        frozen_until AS "frozenUntil"
      FROM mmp_configs WHERE frozen_until IS NOT NULL AND frozen_at IS NOT NULL`.pipe(
      Effect.map((rows) =>
        rows.map((r) => ({
          deskId: Number(r.deskId),
          baseCurrency: r.baseCurrency as BaseCurrency,
          frozenAt: Number(r.frozenAt),
          frozenUntil: Number(r.frozenUntil)
        }))
      ),
      Effect.orDie
    )

    const service: MmpStoreService = {
      configs,
      putConfig,
      deleteConfig,
      reset,
      window,
      admit,
      settle,
      thaw,
      timedFreezes
    }
    return service
  }
)

export const SqlMmpStoreLive: Layer.Layer<MmpStore, never, SqlClient.SqlClient> = Layer.effect(
  MmpStore,
  makeSqlMmpStore
)

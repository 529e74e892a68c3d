import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import { makeCompiler } from "@effect/sql-pg/PgClient"
import { PGlite, type QueryOptions, type Results } from "@electric-sql/pglite"
import { Context, Effect, Layer, type Scope, Stream } from "effect"
import { attachDirectRun } from "./DirectSql.js"
import { PermitQueue } from "./PermitQueue.js"
import { preparedOf } from "./PglitePrepared.js"
import { DEFAULT_STATEMENT_DEADLINE_MS, statementDeadlineMs } from "./StatementDeadline.js"
import { pgliteParsers } from "./SqlTypes.js"

/**
 * An `@effect/sql` client over embedded PGlite.
 *
 * PGlite is one PostgreSQL session. Two fibers interleaving statements on it would see each
 * other's transactions, so every statement outside a transaction takes the single permit of a
 * semaphore for its duration, and a transaction holds that permit from BEGIN to COMMIT/ROLLBACK.
 * Statements inside a transaction run on the connection that owns the permit (found through
 * `SqlClient.TransactionConnection`), and nested `withTransaction` calls become savepoints, both
 * handled by `SqlClient.make`.
 *
 * A statement is not interruptible once sent: PGlite cannot cancel it, and releasing the permit
 * while it still runs would let the next transaction start before it ends. What has a deadline is
 * the wait for the permit (`queryTimeoutMs`, see `StatementDeadline.ts`): a statement stuck behind
 * a transaction that never ends fails after it rather than waiting forever.
 *
 * Ours, not a library's: @effect/sql has no PGlite client, and @electric-sql/pglite's own wrapper
 * gives neither the permit nor the deadline above.
 */
export interface PgliteClient extends SqlClient.SqlClient {
  readonly pglite: PGlite
}

export const PgliteClient = Context.GenericTag<PgliteClient>("rfq/storage/PgliteClient")

export interface PgliteClientOptions {
  /** A directory on disk, or `memory://` (also the default) for a throw-away database. */
  readonly dataDir?: string | undefined
  /** A tarball from `dumpDataDir` to start from; only for an empty data directory (PGlite refuses it otherwise). */
  readonly loadDataDir?: Blob | undefined
  /** The longest wait for the session (the one permit); 3000 ms when not given. */
  readonly queryTimeoutMs?: number | undefined
}

type Rows = ReadonlyArray<any>
type TransformRows = (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined

const statementError = (cause: unknown) => new SqlError({ cause, message: "Failed to execute statement" })

// Without parameters the statement goes through the simple protocol (`exec`), like node-postgres
// does, so multi-statement scripts (migrations) work; a script yields one row array per statement.
// With parameters, a text seen before runs as a named statement (`PglitePrepared.ts`).
const runRaw = (db: PGlite, sql: string, params: ReadonlyArray<unknown>, options: QueryOptions) =>
  Effect.tryPromise({
    try: (): Promise<Results | Array<Results>> =>
      params.length === 0 ? db.exec(sql, options) : preparedOf(db).query(sql, params, options),
    catch: statementError
  })

const rowsOf = (result: Results | Array<Results>): Rows => {
  if (!Array.isArray(result)) return result.rows
  if (result.length === 1) return result[0]!.rows
  return result.map((r) => r.rows)
}

const makeConnection = (
  db: PGlite,
  guard: <A>(effect: Effect.Effect<A, SqlError>) => Effect.Effect<A, SqlError>
): Connection => {
  const raw = (sql: string, params: ReadonlyArray<unknown>, options: QueryOptions = {}) =>
    guard(Effect.uninterruptible(runRaw(db, sql, params, options)))
  const execute = (sql: string, params: ReadonlyArray<unknown>, transformRows: TransformRows) =>
    Effect.map(raw(sql, params), (result) => {
      const rows = rowsOf(result)
      return transformRows ? transformRows(rows) : rows
    })
  return {
    execute,
    executeRaw: raw,
    executeValues: (sql, params) => Effect.map(raw(sql, params, { rowMode: "array" }), rowsOf),
    executeUnprepared: execute,
    executeStream: (sql, params, transformRows) =>
      Stream.fromIterableEffect(execute(sql, params, transformRows))
  }
}

const openPglite = (options: PgliteClientOptions) => {
  const dataDir = options.dataDir ?? "memory://"
  return Effect.tryPromise({
    try: () =>
      PGlite.create(dataDir, {
        parsers: pgliteParsers,
        ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {})
      }),
    catch: (cause) => new SqlError({ cause, message: `PgliteClient: failed to open ${dataDir}` })
  })
}

interface ClientOptions {
  readonly spanAttributes?: Record<string, unknown>
  readonly queryTimeoutMs?: number | undefined
}

const makeClient = (
  db: PGlite,
  connectionLock: PermitQueue,
  options: ClientOptions
): Effect.Effect<PgliteClient, never, Reactivity.Reactivity> => {
  const waitMs = statementDeadlineMs(options.queryTimeoutMs ?? DEFAULT_STATEMENT_DEADLINE_MS)
  const shared = makeConnection(db, (effect) =>
    Effect.flatMap(waitMs, (ms) => connectionLock.withPermit(ms)(effect))
  )
  const owned = makeConnection(db, (effect) => effect)
  return SqlClient.make({
    acquirer: Effect.succeed(shared),
    transactionAcquirer: Effect.as(
      Effect.acquireRelease(
        Effect.flatMap(waitMs, (ms) => connectionLock.take(ms)),
        () => Effect.sync(() => connectionLock.release())
      ),
      owned
    ),
    compiler: makeCompiler(undefined, false),
    spanAttributes: [
      ...Object.entries(options.spanAttributes ?? {}),
      ["db.system.name", "postgresql"],
      ["db.namespace", db.dataDir ?? "memory://"]
    ]
  }).pipe(
    // The hot writes' statements skip `Statement` (`DirectSql.ts`), on the same connection.
    Effect.map((client) => Object.assign(attachDirectRun(client, shared), { pglite: db }))
  )
}

/** Wraps a PGlite instance owned by the caller (it is not closed by this client). */
export const fromPglite = (
  db: PGlite,
  options: ClientOptions = {}
): Effect.Effect<PgliteClient, never, Reactivity.Reactivity> =>
  Effect.suspend(() => makeClient(db, new PermitQueue(), options))

/** Opens PGlite; closing the scope waits for the statement or transaction in flight, then closes it. */
export const make = (
  options: PgliteClientOptions
): Effect.Effect<PgliteClient, SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function* () {
    const connectionLock = new PermitQueue()
    // Closing waits for the statement or transaction in flight, however long it takes.
    const db = yield* Effect.acquireRelease(openPglite(options), (db) =>
      connectionLock
        .withPermit(undefined)(Effect.promise(() => db.close()))
        .pipe(Effect.orDie)
    )
    return yield* makeClient(db, connectionLock, { queryTimeoutMs: options.queryTimeoutMs })
  })

export const layer = (
  options: PgliteClientOptions
): Layer.Layer<PgliteClient | SqlClient.SqlClient, SqlError> =>
  Layer.scopedContext(
    Effect.map(make(options), (client) =>
      Context.make(PgliteClient, client).pipe(Context.add(SqlClient.SqlClient, client))
    )
  ).pipe(Layer.provide(Reactivity.layer))

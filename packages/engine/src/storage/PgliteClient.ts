import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import { makeCompiler } from "@effect/sql-pg/PgClient"
import type { PGlite, Results } from "@electric-sql/pglite"
import { Context, Effect, Layer, type Scope, Stream } from "effect"
import { attachDirectRun } from "./DirectSql.js"
import { PermitQueue } from "./PermitQueue.js"
import {
  callerThreadSession,
  openCallerThreadSession,
  type PgliteSession,
  type SessionQueryOptions
} from "./PgliteSession.js"
import { openWorkerSession } from "./PgliteWorker.js"
import { DEFAULT_STATEMENT_DEADLINE_MS, statementDeadlineMs } from "./StatementDeadline.js"

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
 * The session runs on the caller's thread or on a thread of its own (`thread`, see
 * `PgliteSession.ts`); the permit, the deadline and everything above are the same on both.
 *
 * Ours, not a library's: @effect/sql has no PGlite client, and @electric-sql/pglite's own wrapper
 * gives neither the permit nor the deadline above.
 */
export interface PgliteClient extends SqlClient.SqlClient {
  readonly session: PgliteSession
}

export const PgliteClient = Context.GenericTag<PgliteClient>("rfq/storage/PgliteClient")

export interface PgliteClientOptions {
  /** A directory on disk, or `memory://` (also the default) for a throw-away database. */
  readonly dataDir?: string | undefined
  /** A tarball from `dumpDataDir` to start from; only for an empty data directory (PGlite refuses it otherwise). */
  readonly loadDataDir?: Blob | undefined
  /** The longest wait for the session (the one permit); 3000 ms when not given. */
  readonly queryTimeoutMs?: number | undefined
  /**
   * Where the database runs: `"own"`, a worker thread (`PgliteWorker.ts`), or `"caller"`, the
   * thread that opens it. By default its own thread for a directory on disk (a host's data), the
   * caller's for `memory://` (tests, tools).
   */
  readonly thread?: "own" | "caller" | undefined
}

type Rows = ReadonlyArray<any>
type TransformRows = (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined

const statementError = (cause: unknown) => new SqlError({ cause, message: "Failed to execute statement" })

type Sent = Promise<Results | Array<Results>>

// Without parameters the statement goes through the simple protocol (`exec`), like node-postgres
// does, so multi-statement scripts (migrations) work; a script yields one row array per statement.
// With parameters, a text seen before runs as a named statement (`PglitePrepared.ts`).
const send = (
  db: PgliteSession,
  sql: string,
  params: ReadonlyArray<unknown>,
  options: SessionQueryOptions
): Sent => (params.length === 0 ? db.exec(sql, options) : db.query(sql, params, options))

const answerOf = (sent: Sent) => Effect.tryPromise({ try: () => sent, catch: statementError })

/** Sends the statement when the effect runs (never when it is built), then waits for its answer. */
const sendAndAnswer = (start: () => Sent) => Effect.suspend(() => answerOf(start()))

/** How a connection runs a statement: `start` sends it and gives its answer. */
type Runner = (start: () => Sent) => Effect.Effect<Results | Array<Results>, SqlError>

const rowsOf = (result: Results | Array<Results>): Rows => {
  if (!Array.isArray(result)) return result.rows
  if (result.length === 1) return result[0]!.rows
  return result.map((r) => r.rows)
}

const makeConnection = (db: PgliteSession, run: Runner): Connection => {
  const raw = (sql: string, params: ReadonlyArray<unknown>, options: SessionQueryOptions = {}) =>
    run(() => send(db, sql, params, options))
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
  const thread = options.thread ?? (dataDir.startsWith("memory://") ? "caller" : "own")
  return Effect.tryPromise({
    try: (): Promise<PgliteSession> =>
      thread === "own"
        ? openWorkerSession({ dataDir, loadDataDir: options.loadDataDir })
        : openCallerThreadSession(dataDir, options.loadDataDir),
    catch: (cause) => new SqlError({ cause, message: `PgliteClient: failed to open ${dataDir}` })
  })
}

interface ClientOptions {
  readonly spanAttributes?: Record<string, unknown>
  readonly queryTimeoutMs?: number | undefined
}

const makeClient = (
  db: PgliteSession,
  connectionLock: PermitQueue,
  options: ClientOptions
): Effect.Effect<PgliteClient, never, Reactivity.Reactivity> => {
  const waitMs = statementDeadlineMs(options.queryTimeoutMs ?? DEFAULT_STATEMENT_DEADLINE_MS)
  // Outside a transaction a statement needs the permit, so that it never runs inside another
  // fiber's transaction. Once sent it cannot be called back: it runs uninterruptibly to its answer.
  const shared = makeConnection(
    db,
    db.ordered
      ? // The session runs statements in the order they were sent (its own thread): the permit
        // is needed only to send, and statements from several fibers are in flight together.
        (start) =>
          Effect.uninterruptibleMask((restore) =>
            Effect.flatMap(waitMs, (ms) => restore(connectionLock.take(ms))).pipe(
              Effect.flatMap(() => {
                let sent: Sent
                try {
                  sent = start()
                } finally {
                  connectionLock.release()
                }
                return answerOf(sent)
              })
            )
          )
      : // The caller's thread: the permit is held until the answer.
        (start) =>
          Effect.flatMap(waitMs, (ms) =>
            connectionLock.withPermit(ms)(Effect.uninterruptible(sendAndAnswer(start)))
          )
  )
  // A transaction's statements: the transaction holds the permit from BEGIN to its end.
  const owned = makeConnection(db, (start) => Effect.uninterruptible(sendAndAnswer(start)))
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
      ["db.namespace", db.dataDir]
    ]
  }).pipe(
    // The hot writes' statements skip `Statement` (`DirectSql.ts`), on the same connection.
    Effect.map((client) => Object.assign(attachDirectRun(client, shared), { session: db }))
  )
}

/** Wraps a PGlite instance owned by the caller, on the caller's thread (it is not closed by this client). */
export const fromPglite = (
  db: PGlite,
  options: ClientOptions = {}
): Effect.Effect<PgliteClient, never, Reactivity.Reactivity> =>
  Effect.suspend(() => makeClient(callerThreadSession(db), new PermitQueue(), options))

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

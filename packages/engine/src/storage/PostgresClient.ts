import { randomBytes } from "node:crypto"
import { createRequire } from "node:module"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import { makeCompiler } from "@effect/sql-pg/PgClient"
import { Effect, Layer, type Scope, Stream } from "effect"
import { attachDirectRun } from "./DirectSql.js"
import { GuardedPool, type Lease, type PgPool, type PgQuery, type PgResult } from "./GuardedPool.js"
import { PreparedNames } from "./PreparedNames.js"
import { DEFAULT_STATEMENT_DEADLINE_MS, deadlineError, statementDeadlineMs } from "./StatementDeadline.js"
import { isUniqueViolation } from "./SqlErrors.js"
import { pgTypeParsers } from "./SqlTypes.js"

export interface PostgresClientOptions {
  /** `postgres://user:password@host:port/database` */
  readonly url: string
  /**
   * A schema to work in: it becomes the only entry of `search_path` on every pooled connection
   * and is created when missing. Tests use one per file to isolate themselves.
   */
  readonly schema?: string | undefined
  readonly maxConnections?: number | undefined
  /** The deadline of every statement (see `StatementDeadline.ts`); 3000 ms when not given. */
  readonly queryTimeoutMs?: number | undefined
  /**
   * This process is the one engine on this database and schema (the host): at start, it ends the
   * sessions a previous process left (see `endStaleSessions`). Tools that run beside the host (the
   * admin command) must not set it.
   */
  readonly exclusive?: boolean | undefined
}

const schemaName = /^[a-z_][a-z0-9_]{0,62}$/

/** Accepts only plain lower-case identifiers, so the name needs no quoting anywhere. */
export const isValidSchemaName = (name: string): boolean => schemaName.test(name)

// libpq's `options` startup parameter sets search_path per connection, before any statement runs,
// so even the pool's first connection and the migrator see the schema.
const urlWithSearchPath = (url: string, schema: string): string => {
  const parsed = new URL(url)
  const existing = parsed.searchParams.get("options")
  parsed.searchParams.set("options", `${existing ? `${existing} ` : ""}-c search_path=${schema}`)
  return parsed.toString()
}

const ensureSchema = (schema: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // Checked first: CREATE SCHEMA IF NOT EXISTS still needs CREATE on the database.
    const found = yield* sql`SELECT 1 FROM pg_namespace WHERE nspname = ${schema}`
    if (found.length > 0) return
    // Hosts starting together on a new schema race here: IF NOT EXISTS is not atomic in
    // PostgreSQL (the loser hits the catalog's unique index). The schema exists then; go on.
    yield* sql
      .unsafe(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
      .pipe(
        Effect.catchTag("SqlError", (error) =>
          isUniqueViolation(error, "pg_namespace_nspname_index") ? Effect.void : Effect.fail(error)
        )
      )
  })

// node-postgres ships no type declarations; `GuardedPool` declares the parts it uses.
const pg = createRequire(import.meta.url)("pg") as { Pool: new (config: Record<string, unknown>) => PgPool }

type Rows = ReadonlyArray<any>
type TransformRows = (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined

// A script of several statements answers one result per statement.
const rowsOf = (result: PgResult | Array<PgResult>): Rows =>
  Array.isArray(result) ? result.map((r) => r.rows ?? []) : (result.rows ?? [])

/**
 * A call into the guarded pool as an Effect, given what is left of the deadline: the deadline is
 * the pool's timer, so it holds in uninterruptible regions; an interruption abandons the call. With
 * the request's budget spent nothing is sent (so nothing is left in doubt).
 */
const guardedCall = <A>(
  defaultMs: number,
  stage: "connect" | "statement",
  start: (deadlineMs: number, callback: (error: SqlError | undefined, value?: A) => void) => () => void
): Effect.Effect<A, SqlError> =>
  Effect.flatMap(statementDeadlineMs(defaultMs), (deadlineMs) =>
    deadlineMs <= 0
      ? Effect.fail(deadlineError(0, stage))
      : Effect.async<A, SqlError>((resume) =>
          Effect.sync(
            start(deadlineMs, (error, value) =>
              resume(error === undefined ? Effect.succeed(value!) : Effect.fail(error))
            )
          )
        )
  )

/** One statement through the guarded pool, or on a reserved client. */
const runQuery = (
  guarded: GuardedPool,
  lease: Lease | undefined,
  defaultMs: number,
  query: PgQuery
): Effect.Effect<PgResult | Array<PgResult>, SqlError> =>
  guardedCall<PgResult | Array<PgResult>>(defaultMs, "statement", (deadlineMs, done) =>
    lease === undefined ? guarded.run(query, deadlineMs, done) : guarded.runOn(lease, query, deadlineMs, done)
  )

const makeConnection = (
  guarded: GuardedPool,
  defaultMs: number,
  names: PreparedNames,
  lease?: Lease
): Connection => {
  // A text sent again and again is sent by name: each connection parses it once (`PreparedNames`).
  const run = (sql: string, params: ReadonlyArray<unknown>, rowMode?: "array") => {
    const name = params.length > 0 ? names.nameOf(sql) : undefined
    const query: PgQuery = {
      text: sql,
      values: params,
      ...(name === undefined ? {} : { name }),
      ...(rowMode === undefined ? {} : { rowMode })
    }
    return runQuery(guarded, lease, defaultMs, query)
  }
  const execute = (sql: string, params: ReadonlyArray<unknown>, transformRows: TransformRows) =>
    Effect.map(run(sql, params), (result) => {
      const rows = rowsOf(result)
      return transformRows ? transformRows(rows) : rows
    })
  return {
    execute,
    executeRaw: (sql, params) => run(sql, params),
    executeValues: (sql, params) => Effect.map(run(sql, params, "array"), rowsOf),
    executeUnprepared: execute,
    // Nothing streams large results here: a stream reads the whole result first, like PGlite's.
    executeStream: (sql, params, transformRows) =>
      Stream.fromIterableEffect(execute(sql, params, transformRows))
  }
}

/** A reserved, fenced client for a transaction; released (or, if abandoned, already destroyed) with the scope. */
const reserve = (
  guarded: GuardedPool,
  defaultMs: number,
  names: PreparedNames
): Effect.Effect<Connection, SqlError, Scope.Scope> =>
  Effect.acquireRelease(
    guardedCall<Lease>(defaultMs, "connect", (deadlineMs, done) => guarded.reserve(deadlineMs, done)),
    (lease) => Effect.sync(() => lease.finish())
  ).pipe(Effect.map((lease) => makeConnection(guarded, defaultMs, names, lease)))

// The innermost error (the driver's: refused, unknown role, the deadline) is what an operator reads.
const driverCause = (error: unknown): unknown => {
  let e = error
  for (let depth = 0; depth < 8; depth++) {
    const next = typeof e === "object" && e !== null ? (e as { cause?: unknown }).cause : undefined
    if (next === undefined || next === null) return e
    e = next
  }
  return e
}

// An exclusive client's sessions are named `rfq <instance> <schema>`; PostgreSQL keeps 63 bytes of
// a name, so the schema is cut to 50 characters (the instance is 8).
const exclusiveName = (instance: string, schema: string | undefined) =>
  `rfq ${instance} ${(schema ?? "-").slice(0, 50)}`

/**
 * Ends the sessions of a previous process of the same service (same database, user and schema,
 * another instance) and waits until they are gone. A process that died while the database stalled
 * may have left a statement in flight that would still commit when the database wakes, after this
 * process has read the state it starts from; ended, it has committed or rolled back for good.
 */
const endStaleSessions = (
  sql: SqlClient.SqlClient,
  instance: string,
  schema: string | undefined,
  defaultMs: number
) =>
  Effect.gen(function* () {
    const others = exclusiveName("%", schema).replace(/_/g, "\\_")
    const mine = exclusiveName(instance, schema)
    const stale = sql`application_name LIKE ${others} AND application_name <> ${mine}
      AND usename = session_user AND datname = current_database() AND pid <> pg_backend_pid()`
    const ended = yield* sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE ${stale}
      AND pg_terminate_backend(pid)`
    if (ended.length === 0) return
    yield* Effect.logWarning("ended the database sessions of a previous process").pipe(
      Effect.annotateLogs({ sessions: ended.length })
    )
    const until = Date.now() + 5 * defaultMs
    while (Date.now() < until) {
      const left = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE ${stale}`
      if (left[0]?.n === 0) return
      yield* Effect.sleep("20 millis")
    }
    return yield* new SqlError({ message: "the sessions of a previous process did not end" })
  })

/**
 * An `@effect/sql` client over node-postgres through `GuardedPool`: every statement has a deadline,
 * a stalled connection is destroyed rather than reused, and an abandoned statement's outcome is
 * settled before anything else runs. The type parsing is the PGlite client's (`SqlTypes.ts`).
 */
export const make = (
  options: PostgresClientOptions
): Effect.Effect<SqlClient.SqlClient, SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function* () {
    const defaultMs = options.queryTimeoutMs ?? DEFAULT_STATEMENT_DEADLINE_MS
    const schema = options.schema
    const instance = randomBytes(4).toString("hex")
    const applicationName = options.exclusive === true ? exclusiveName(instance, schema) : "rfq-service"
    const url = schema === undefined ? options.url : urlWithSearchPath(options.url, schema)
    const pool = yield* Effect.acquireRelease(
      Effect.sync(
        () =>
          new pg.Pool({
            connectionString: url,
            types: pgTypeParsers,
            application_name: applicationName,
            max: options.maxConnections ?? 10,
            // Waiting for a pooled client or a new connection is bounded like a statement.
            connectionTimeoutMillis: defaultMs,
            idleTimeoutMillis: 30_000,
            // A peer that vanished without a reset is found by TCP keepalive even on idle clients.
            keepAlive: true,
            keepAliveInitialDelayMillis: 10_000
          })
      ),
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
    )
    const guarded = new GuardedPool(pool)
    const names = new PreparedNames()
    const pooled = makeConnection(guarded, defaultMs, names)
    const made = yield* SqlClient.make({
      acquirer: Effect.succeed(pooled),
      transactionAcquirer: reserve(guarded, defaultMs, names),
      compiler: makeCompiler(),
      spanAttributes: [["db.system.name", "postgresql"]]
    })
    // The hot writes' statements skip `Statement` (`DirectSql.ts`), on the same connection.
    const client = attachDirectRun(made, pooled)
    // The server answers before the client is handed out: a wrong URL fails the start, not a request.
    yield* Effect.asVoid(client`SELECT 1`).pipe(
      Effect.mapError(
        (error) => new SqlError({ cause: driverCause(error), message: "PostgresClient: failed to connect" })
      )
    )
    if (options.exclusive === true) yield* endStaleSessions(client, instance, schema, defaultMs)
    return client
  })

/** PostgreSQL through `GuardedPool`, with the same type parsing as the PGlite client. */
export const layer = (options: PostgresClientOptions): Layer.Layer<SqlClient.SqlClient, SqlError> => {
  const schema = options.schema
  if (schema !== undefined && !isValidSchemaName(schema)) {
    return Layer.fail(
      new SqlError({ message: `invalid schema name ${JSON.stringify(schema)}: use [a-z_][a-z0-9_]*` })
    )
  }
  const client = Layer.scoped(SqlClient.SqlClient, make(options)).pipe(Layer.provide(Reactivity.layer))
  return schema === undefined
    ? client
    : Layer.tap(client, (context) => Effect.provide(ensureSchema(schema), context))
}

import { createRequire } from "node:module"

/** The part of `pg` the bench uses (`pg` ships no types and `@types/pg` is not installed). */
export interface PgQueryResult<Row> {
  readonly rows: Array<Row>
}
export interface PgClientLike {
  query<Row = Record<string, unknown>>(
    text: string,
    values?: ReadonlyArray<unknown>
  ): Promise<PgQueryResult<Row>>
}
export interface PgPoolClient extends PgClientLike {
  release(error?: Error): void
}
export interface PgPool extends PgClientLike {
  connect(): Promise<PgPoolClient>
  end(): Promise<void>
}
interface PgClient extends PgClientLike {
  connect(): Promise<void>
  end(): Promise<void>
}
interface PgModule {
  Pool: new (options: {
    connectionString: string
    max?: number
    connectionTimeoutMillis?: number
    application_name?: string
  }) => PgPool
  Client: new (options: { connectionString: string; connectionTimeoutMillis?: number }) => PgClient
}

export const pg = createRequire(import.meta.url)("pg") as PgModule

/** The server the bench uses: `BENCH_DATABASE_URL`, else the tests' `TEST_DATABASE_URL`, else the README's local one. */
export const benchDatabaseUrl = (): string =>
  process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

/** Runs `body` with one short-lived connection. */
export const withPgClient = async <A>(
  url: string,
  body: (client: PgClientLike) => Promise<A>
): Promise<A> => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 })
  await client.connect()
  try {
    return await body(client)
  } finally {
    await client.end()
  }
}

/** The server's version string when it answers, undefined when it does not. */
export const postgresVersion = async (url: string): Promise<string | undefined> => {
  try {
    return await withPgClient(url, async (client) => {
      const { rows } = await client.query<{ server_version: string }>("SHOW server_version")
      return rows[0]?.server_version
    })
  } catch {
    return undefined
  }
}

let schemas = 0
/** A schema name of its own for one host or baseline, so runs never see each other's rows. */
export const freshSchemaName = (prefix: string): string =>
  `${prefix}_${process.pid}_${Date.now().toString(36)}_${schemas++}`

export const dropSchema = (url: string, schema: string): Promise<void> =>
  withPgClient(url, async (client) => {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  })

/** Rows inserted, updated and deleted in one schema so far (the statistics lag by up to a second). */
export const rowsWritten = (url: string, schema: string): Promise<number> =>
  withPgClient(url, async (client) => {
    await client.query("SELECT pg_stat_clear_snapshot()")
    const { rows } = await client.query<{ total: string | null }>(
      "SELECT sum(n_tup_ins + n_tup_upd + n_tup_del)::text AS total FROM pg_stat_user_tables WHERE schemaname = $1",
      [schema]
    )
    return Number(rows[0]?.total ?? 0)
  })

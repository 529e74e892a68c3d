import * as path from "node:path"
import { PGlite } from "@electric-sql/pglite"
import { createRequire } from "node:module"
import { type Backend, DEFAULT_PG_URL } from "./HostProcess.js"

/**
 * Reads a host's database directly, behind its back: after a crash (PGlite, once the host is
 * gone: PGlite has no lock and two processes on one directory lose writes) or beside a running
 * host (PostgreSQL). Queries should cast numerics to text so both drivers answer alike.
 */
/** The few parts of node-postgres used here (the package ships no type declarations). */
interface PgClient {
  connect(): Promise<void>
  query(text: string, params?: Array<unknown>): Promise<{ rows: Array<unknown> }>
  end(): Promise<void>
}
const pg = createRequire(import.meta.url)("pg") as {
  Client: new (config: { connectionString: string; options?: string }) => PgClient
}

export interface DatabaseReader {
  readonly query: <R = Record<string, unknown>>(
    text: string,
    params?: ReadonlyArray<unknown>
  ) => Promise<Array<R>>
  readonly close: () => Promise<void>
}

export interface Place {
  readonly dataDir: string
  readonly schema: string
}

export const pgUrl = (): string => process.env.RELIABILITY_DATABASE_URL ?? DEFAULT_PG_URL

export const openDatabase = async (backend: Backend, place: Place): Promise<DatabaseReader> => {
  if (backend === "pglite") {
    const db = await PGlite.create(path.join(place.dataDir, "pglite"))
    return {
      query: async <R>(text: string, params: ReadonlyArray<unknown> = []) =>
        (await db.query<R>(text, [...params])).rows,
      close: () => db.close()
    }
  }
  const client = new pg.Client({ connectionString: pgUrl(), options: `-c search_path=${place.schema}` })
  await client.connect()
  return {
    query: async <R>(text: string, params: ReadonlyArray<unknown> = []) =>
      (await client.query(text, [...params])).rows as Array<R>,
    close: () => client.end()
  }
}

/** Drops a PostgreSQL test schema (best effort: a leftover schema only costs disk). */
export const dropSchema = async (schema: string): Promise<void> => {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) return
  const client = new pg.Client({ connectionString: pgUrl() })
  try {
    await client.connect()
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  } catch {
    // PostgreSQL may be the thing under test (outage); the schema stays behind.
  } finally {
    await client.end().catch(() => undefined)
  }
}

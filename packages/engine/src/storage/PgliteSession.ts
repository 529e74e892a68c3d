import { PGlite, type Results } from "@electric-sql/pglite"
import { preparedOf } from "./PglitePrepared.js"
import { pgliteParsers } from "./SqlTypes.js"

/**
 * The one PostgreSQL session of an embedded PGlite, as `PgliteClient` uses it: statements with
 * parameters (named once seen twice, `PglitePrepared.ts`), scripts without, closing, and a dump
 * of the data directory. Two places run it:
 *
 * - on the caller's thread (`callerThreadSession`): PGlite's WebAssembly backend runs each
 *   statement on the thread that sent it;
 * - on a thread of its own (`PgliteWorker.ts`): the backend runs beside the caller, which only
 *   posts the statement and reads the answer, so the caller's event loop serves requests while a
 *   statement runs (issue 15).
 *
 * Both give the same rows, types and errors: a failed statement rejects with an error carrying
 * pg-protocol's fields (SQLSTATE in `code`, the violated constraint in `constraint`).
 */
export interface PgliteSession {
  /** The directory it persists to, or `memory://`. */
  readonly dataDir: string
  /**
   * Whether statements run in the order they are sent, each after the previous one's end, even
   * when sent before it ended: true on a thread of its own, which takes them from one queue.
   */
  readonly ordered: boolean
  /** Whether the session was closed (by `close`, or because its thread stopped). */
  readonly closed: boolean
  /** One statement with parameters; `rowMode: "array"` gives each row as an array. */
  readonly query: (
    text: string,
    params: ReadonlyArray<unknown>,
    options: SessionQueryOptions
  ) => Promise<Results>
  /** A script through the simple protocol: one result per statement. */
  readonly exec: (text: string, options: SessionQueryOptions) => Promise<Array<Results>>
  /** Waits for the statement in flight, then closes the database. */
  readonly close: () => Promise<void>
  /** The data directory as a tarball (gzip), which `loadDataDir` can start from. */
  readonly dumpDataDir: () => Promise<Blob>
}

/** What a statement's options may say; plain data, so it can cross to another thread. */
export interface SessionQueryOptions {
  readonly rowMode?: "array" | "object"
}

/** The session of `db`, run on the calling thread. */
export const callerThreadSession = (db: PGlite): PgliteSession => ({
  get dataDir() {
    return db.dataDir ?? "memory://"
  },
  ordered: false,
  get closed() {
    return db.closed
  },
  query: (text, params, options) => preparedOf(db).query(text, params, options),
  exec: (text, options) => db.exec(text, options),
  close: () => db.close(),
  dumpDataDir: () => db.dumpDataDir("gzip")
})

/** Opens PGlite on the calling thread with the service's type parsers (both placements open it here). */
export const openCallerThreadSession = async (
  dataDir: string,
  loadDataDir: Blob | undefined
): Promise<PgliteSession> =>
  callerThreadSession(
    await PGlite.create(dataDir, {
      parsers: pgliteParsers,
      ...(loadDataDir === undefined ? {} : { loadDataDir })
    })
  )

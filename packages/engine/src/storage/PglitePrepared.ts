import { type PGlite, parse, protocol, type QueryOptions, type Results } from "@electric-sql/pglite"
import { PreparedNames } from "./PreparedNames.js"

/**
 * Named statements on a PGlite session (issue 15), as `PreparedNames` gives PostgreSQL's
 * connections: a text the service sends again and again (a step, a booking, a cached read) is
 * parsed, analysed and planned once and later only bound and executed.
 *
 * PGlite's own `query` runs a statement unnamed, in six calls into its WebAssembly backend (parse,
 * describe, bind, describe, execute, sync): a machine step's statement costs about 450 µs of the
 * host's one thread there, of which about 225 µs are the parse and plan and 130 µs the calls.
 * Here a named statement runs as one message of the wire protocol (bind, describe, execute, sync)
 * in one call: about 125 µs (measured on a two-core AMD EPYC VM with a statement of a step's
 * shape). The answer is read by PGlite's own result parser with the session's parsers, so rows,
 * types and errors (pg-protocol's `DatabaseError`, SQLSTATE in `code`) are what `query` gives.
 *
 * - Which texts are named: `PreparedNames`' rule (the second time a text is seen, at most 100).
 * - The names belong to the session, not to a client: one instance per PGlite (`preparedOf`).
 * - A named statement outlives the transaction it was prepared in (PostgreSQL's rule; rolled back
 *   or not), so what is recorded here stays true. Should it vanish anyway (`DEALLOCATE`, SQLSTATE
 *   26000) it is prepared again; should its result's shape change under it (a table altered,
 *   SQLSTATE 0A000) it is closed and the text runs unnamed from then on, the statement run again
 *   unnamed at once outside a transaction; inside one the refusal has aborted it, as it would on
 *   PostgreSQL, and reaches the caller.
 * - Each call runs inside PGlite's own query lock, so nothing using the same instance directly
 *   interleaves with it.
 */
export class PglitePrepared {
  private readonly names = new PreparedNames()
  /** Parameter types of the statements prepared in this session, by name. */
  private readonly prepared = new Map<string, ReadonlyArray<number>>()
  /** Texts whose named statement was closed: they run unnamed. */
  private readonly unnamed = new Set<string>()

  constructor(private readonly db: PGlite) {}

  /** `db.query(text, params, options)`, through a named statement once the text is known. */
  async query(text: string, params: ReadonlyArray<unknown>, options: QueryOptions): Promise<Results> {
    const name = this.unnamed.has(text) ? undefined : this.names.nameOf(text)
    if (name !== undefined) {
      const result = await this.db._runExclusiveQuery(() => this.run(name, text, params, options, true))
      if (result !== UNNAMED) return result
    }
    // Outside the lock: PGlite's `query` takes it itself.
    return this.db.query(text, params as Array<unknown>, options)
  }

  private async run(
    name: string,
    text: string,
    params: ReadonlyArray<unknown>,
    options: QueryOptions,
    retry: boolean
  ): Promise<Results | typeof UNNAMED> {
    const { serialize } = protocol
    let types = this.prepared.get(name)
    if (types === undefined) {
      const described = await this.db.execProtocol(
        concat(serialize.parse({ name, text }), serialize.describe({ type: "S", name }), serialize.sync())
      )
      types = parse.parseDescribeStatementResults(described.messages)
      this.prepared.set(name, types)
    }
    const values = params.map((value, i) => {
      if (value === null || value === undefined) return null
      const serializer = options.serializers?.[types[i]!] ?? this.db.serializers[types[i]!]
      return serializer ? serializer(value) : String(value)
    })
    try {
      const { messages } = await this.db.execProtocol(
        concat(
          serialize.bind({ statement: name, values }),
          serialize.describe({ type: "P" }),
          serialize.execute({}),
          serialize.sync()
        )
      )
      return parse.parseResults(messages, this.db.parsers, options)[0]!
    } catch (error) {
      const code = (error as { code?: unknown }).code
      if (retry && code === "26000") {
        this.prepared.delete(name)
        return this.run(name, text, params, options, false)
      }
      if (retry && code === "0A000" && RESULT_CHANGED.test((error as Error).message)) {
        this.prepared.delete(name)
        this.unnamed.add(text)
        await this.db
          .execProtocol(concat(serialize.close({ type: "S", name }), serialize.sync()))
          .catch(() => undefined)
        // In a transaction the refusal aborted it, as on PostgreSQL: the caller hears of it.
        if (this.db.isInTransaction()) throw error
        return UNNAMED
      }
      throw error
    }
  }
}

/** PostgreSQL's refusal of a prepared statement whose result's columns changed (SQLSTATE 0A000). */
const RESULT_CHANGED = /cached plan must not change result type/

/** The statement's named form was closed: run it unnamed. */
const UNNAMED: unique symbol = Symbol("unnamed")

const concat = (...parts: ReadonlyArray<Uint8Array>): Uint8Array => Buffer.concat(parts)

const sessions = new WeakMap<PGlite, PglitePrepared>()

/** The named statements of `db`'s session (one set per PGlite instance, whichever client uses it). */
export const preparedOf = (db: PGlite): PglitePrepared => {
  let prepared = sessions.get(db)
  if (prepared === undefined) sessions.set(db, (prepared = new PglitePrepared(db)))
  return prepared
}

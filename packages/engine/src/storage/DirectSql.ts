import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect } from "effect"
import { waitSpan } from "../services/WaitProbe.js"

/**
 * The statements every write sends (a machine step, a new RFQ, the ledger's booking) run as text
 * and parameters straight on the client's connection, without @effect/sql's `Statement` (issue 15):
 * a `Statement` is compiled from its fragments on every execution and runs in a span and a scope of
 * its own, about 90 Effect operations and 30–40 µs of CPU per statement before the driver sees
 * it. Here the caller builds its text once per shape (`StatementShapes`), and a run is a context
 * lookup and the connection's `execute`: the same connection `Statement` would use (the pooled one
 * of our PostgreSQL or PGlite client, or the transaction's inside `withTransaction`), so the
 * statement deadline, the fence, the PGlite session's permit and PostgreSQL's prepared statements
 * (`PreparedNames`) work exactly as for any other statement. Under a wait profile a run is a
 * `sql.execute` span, as a `Statement` is, so the profile still counts statements.
 *
 * A client that is not ours (no runner attached) runs the text through `sql.unsafe`.
 */
export type DirectRun = <A extends object = Record<string, unknown>>(
  text: string,
  params: ReadonlyArray<unknown>
) => Effect.Effect<ReadonlyArray<A>, SqlError>

const DirectRunId: unique symbol = Symbol.for("rfq/storage/DirectRun")

interface WithDirectRun {
  readonly [DirectRunId]: DirectRun
}

/** Attaches to one of our clients its direct runner over `pooled`, its connection outside a transaction. */
export const attachDirectRun = <C extends SqlClient.SqlClient>(client: C, pooled: Connection): C => {
  const run: DirectRun = <A extends object>(text: string, params: ReadonlyArray<unknown>) =>
    waitSpan("sql.execute")(
      Effect.withFiberRuntime<ReadonlyArray<A>, SqlError>((fiber) => {
        const transaction = Context.getOption(fiber.currentContext, SqlClient.TransactionConnection)
        const connection = transaction._tag === "Some" ? transaction.value[0] : pooled
        return connection.execute(text, params, undefined) as Effect.Effect<ReadonlyArray<A>, SqlError>
      })
    )
  return Object.assign(client, { [DirectRunId]: run } satisfies WithDirectRun)
}

/** The direct runner of `sql` (see above); `sql.unsafe` for a client without one. */
export const directRun = (sql: SqlClient.SqlClient): DirectRun => {
  const attached = (sql as Partial<WithDirectRun>)[DirectRunId]
  if (attached !== undefined) return attached
  return <A extends object>(text: string, params: ReadonlyArray<unknown>) =>
    sql.unsafe<A>(text, params as Array<unknown>)
}

/**
 * Texts built once per shape. A statement made of parts (each its own text, numbered `$1`, `$2`…
 * from its own first parameter) is identified by a key that determines its whole text; its text is
 * assembled, parts renumbered one after the other, the first time the key is seen. Keys are few
 * (a step's writes, a number of legs or allocations), and the memory is bounded: past `capacity`
 * keys it starts again, as `PreparedNames` bounds the names.
 */
export class StatementShapes {
  private readonly texts = new Map<string, string>()

  constructor(private readonly capacity = 500) {}

  /** The text for `key`, built by `build` the first time. */
  text(key: string, build: () => string): string {
    const known = this.texts.get(key)
    if (known !== undefined) return known
    const text = build()
    if (this.texts.size >= this.capacity) this.texts.clear()
    this.texts.set(key, text)
    return text
  }
}

/**
 * `text` with its placeholders `$n` moved to `$n+offset` (a part placed after `offset` parameters).
 * Every `$n` is renumbered, inside a string literal or comment too: a part's text must hold `$n`
 * only as a placeholder (values go in parameters, never in the text).
 */
export const shiftPlaceholders = (text: string, offset: number): string =>
  offset === 0 ? text : text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`)

/** `$from, $from+1, … ` for `count` parameters: a VALUES row or an IN list. */
export const placeholders = (from: number, count: number): string => {
  const out: Array<string> = []
  for (let i = 0; i < count; i++) out.push(`$${from + i}`)
  return out.join(", ")
}

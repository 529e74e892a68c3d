import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

/**
 * Ids from a table's identity sequence, a block at a time (migration `0004_id_blocks`): the
 * sequence's increment is the block size, so one `nextval` reserves the ids `[first, first +
 * increment)` for this engine alone, and they are handed out from memory until the block is used
 * up. Engines sharing a database therefore never hand out the same id; a take costs a round trip
 * only once per block. What a process does not use of its block is skipped for good (a restart
 * starts a new block): ids are unique and grow, but have gaps.
 *
 * The block size is read from the sequence, not assumed, so the schema is the one place it is set.
 * SQL failures are defects, as everywhere in the RFQ store (a 503 when the database is unreachable).
 */

/** An id source per table, sharing one catalog query. */
export const makeIdBlocks = <const Table extends string>(
  sql: SqlClient.SqlClient,
  tables: ReadonlyArray<Table>
): Effect.Effect<Record<Table, Effect.Effect<number>>, SqlError> =>
  Effect.flatMap(
    sql<{ tableName: string; sequence: string; size: number }>`
      SELECT t.name AS "tableName", s.seqrelid::regclass::text AS sequence, s.seqincrement AS size
      FROM jsonb_array_elements_text(${JSON.stringify(tables)}::jsonb) AS t (name)
      JOIN pg_sequence s ON s.seqrelid = pg_get_serial_sequence(t.name, 'id')::regclass`,
    (rows) => {
      const sources = {} as Record<Table, Effect.Effect<number>>
      for (const table of tables) {
        const row = rows.find((r) => r.tableName === table)
        if (row === undefined) return Effect.dieMessage(`no identity sequence for ${table}.id`)
        sources[table] = idSource(sql, row.sequence, Number(row.size))
      }
      return Effect.succeed(sources)
    }
  )

const idSource = (sql: SqlClient.SqlClient, sequence: string, size: number): Effect.Effect<number> => {
  let next = 0
  let end = 0
  const fetchBlock = Effect.map(
    sql<{ first: number }>`SELECT nextval(${sequence}::regclass) AS first`,
    ([row]) => {
      const first = Number(row!.first)
      next = first + 1
      end = first + size
      return first
    }
  )
  // One refill at a time: fibers that find the block used up meanwhile wait for the new one
  // rather than each reserving a block.
  const lock = Effect.unsafeMakeSemaphore(1)
  const refill = lock.withPermits(1)(
    Effect.suspend(() => (next < end ? Effect.succeed(next++) : Effect.orDie(fetchBlock)))
  )
  return Effect.suspend(() => (next < end ? Effect.succeed(next++) : refill))
}

/**
 * One step of the memory scenario, engine only (embedded as `packages/engine/examples/embed.ts`
 * does it, no HTTP): start the engine on the given database (it restores every open RFQ into
 * memory), read the heap and RSS after full garbage collections (`--expose-gc`), optionally create
 * RFQs through `Engine.createRfq` (reading again after each checkpoint), and optionally clone the
 * first RFQ's rows in SQL up to a total for the next step's engine to restore. The RFQ time-to-live
 * is a week, so none expires while the scenario runs.
 */
import { performance } from "node:perf_hooks"
import * as SqlClient from "@effect/sql/SqlClient"
import {
  CreateRfqRequest,
  decodeRequest,
  Engine,
  makeDatabaseLayer,
  makeEngineLayer,
  SecretBoxLive,
  seedDemoData
} from "@rfq/engine"
import { Effect, Layer } from "effect"
import { demoRfq } from "../Api.js"
import { childConfig, runChild, tell } from "../ChildIo.js"

export interface EngineMemoryConfig {
  readonly database:
    | { readonly kind: "pglite"; readonly dataDir: string }
    | { readonly kind: "postgres"; readonly url: string; readonly schema: string }
  /** Same key in every step, so the demo credentials sealed by the first step stay readable. */
  readonly encryptionKeyHex: string
  /** Create RFQs through the engine up to each of these open counts, reading after each. */
  readonly createTo: ReadonlyArray<number>
  readonly concurrency: number
  /** Then copy the first RFQ's rows in SQL until this many RFQs are open. */
  readonly cloneTo?: number
}

export interface MemoryReading {
  readonly openRfqs: number
  readonly heapUsed: number
  readonly rss: number
  /** RFQs per second of the step that led here: created, or restored at start. */
  readonly perSecond: number
}

export interface EngineMemoryResult {
  readonly type: "result"
  /** Right after the engine started and restored what the database holds. */
  readonly restored: MemoryReading
  readonly created: ReadonlyArray<MemoryReading>
}

const WEEK_MS = 7 * 24 * 3600 * 1000

const settle = async (): Promise<void> => {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error("run with --expose-gc")
  // Several passes with pauses: finalizers and weak references let go over more than one cycle.
  for (let i = 0; i < 4; i++) {
    gc()
    await new Promise((r) => setTimeout(r, 50))
  }
}

const reading = (openRfqs: number, perSecond: number): Effect.Effect<MemoryReading> =>
  Effect.promise(async () => {
    await settle()
    const m = process.memoryUsage()
    return { openRfqs, heapUsed: m.heapUsed, rss: m.rss, perSecond }
  })

/** The columns of `table` with the RFQ key replaced by `g.n` and identity columns left to their default. */
const cloneColumns = (sql: SqlClient.SqlClient, table: string, key: string) =>
  Effect.gen(function* () {
    const columns = yield* sql<{ name: string; identity: string }>`
      SELECT column_name AS name, is_identity AS identity FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = ${table} ORDER BY ordinal_position`
    const kept = columns.filter((c) => c.name === key || c.identity !== "YES")
    return {
      names: kept.map((c) => `"${c.name}"`).join(", "),
      values: kept.map((c) => (c.name === key ? "g.n" : `t."${c.name}"`)).join(", ")
    }
  })

/** Copies RFQ `template`'s rows (the RFQ, its legs, makers and event log) to ids from..to. */
const cloneRfq = (template: number, from: number, to: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const tables: Array<[string, string]> = [
      ["rfqs", "id"],
      ["rfq_legs", "rfq_id"],
      ["rfq_makers", "rfq_id"],
      ["rfq_events", "rfq_id"]
    ]
    const shapes = yield* Effect.forEach(tables, ([table, key]) => cloneColumns(sql, table, key))
    // Each statement stays well inside the engine's statement deadline (3 s): 20,000 RFQs a
    // statement took longer than that on a two-core VM (rfq_events' append-only trigger runs per row).
    const BATCH = 2_000
    for (let start = from; start <= to; start += BATCH) {
      const end = Math.min(to, start + BATCH - 1)
      yield* sql.withTransaction(
        Effect.forEach(
          tables,
          ([table, key], i) =>
            sql.unsafe(
              `INSERT INTO ${table} (${shapes[i]!.names}) SELECT ${shapes[i]!.values} FROM ${table} t, generate_series(${start}, ${end}) AS g(n) WHERE t.${key} = ${template}`
            ),
          { discard: true }
        )
      )
    }
    yield* sql.unsafe(`SELECT setval(pg_get_serial_sequence('rfqs', 'id'), (SELECT max(id) FROM rfqs))`)
  })

runChild(async () => {
  const config = childConfig<EngineMemoryConfig>()
  const keys = new Map([[1, new Uint8Array(Buffer.from(config.encryptionKeyHex, "hex"))]])
  const database = makeDatabaseLayer(config.database)
  const engineLayer = Layer.unwrapEffect(
    Effect.gen(function* () {
      yield* seedDemoData({ hashSecret: (s) => Effect.succeed(`bench-only:${s}`) }).pipe(
        Effect.provide(SecretBoxLive(keys))
      )
      return makeEngineLayer({ rfqTtlMs: WEEK_MS, encryptionKeys: keys })
    })
  ).pipe(Layer.provideMerge(database))

  const started = performance.now()
  const program = Effect.gen(function* () {
    const engine = yield* Engine
    const restoredCount = engine.liveCount()
    const restored = yield* reading(restoredCount, (restoredCount / (performance.now() - started)) * 1000)
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ userId: number; deskId: number; roles: Array<"trader" | "viewer"> }>`
      SELECT u.id AS "userId", u.desk_id AS "deskId", u.roles
      FROM api_clients c JOIN users u ON u.id = c.user_id WHERE c.client_id = 'demo-taker'`
    const taker = { deskId: row!.deskId, userId: row!.userId, roles: row!.roles }
    const request = yield* decodeRequest(CreateRfqRequest, demoRfq)
    const created: Array<MemoryReading> = []
    for (const target of config.createTo) {
      const toCreate = target - engine.liveCount()
      const began = performance.now()
      yield* Effect.forEach(Array.from({ length: toCreate }), () => engine.createRfq(taker, request), {
        concurrency: config.concurrency,
        discard: true
      })
      const open = engine.liveCount()
      if (open !== target)
        return yield* Effect.die(new Error(`expected ${target} open RFQs, the engine holds ${open}`))
      created.push(yield* reading(open, (toCreate / (performance.now() - began)) * 1000))
    }
    if (config.cloneTo !== undefined) {
      const [range] = yield* sql<{ first: number; last: number }>`
        SELECT min(id)::int AS first, max(id)::int AS last FROM rfqs WHERE status = 'open'`
      const open = engine.liveCount()
      if (range === undefined || range.first === null) return yield* Effect.die(new Error("no RFQ to clone"))
      yield* cloneRfq(range.first, range.last + 1, range.last + (config.cloneTo - open))
    }
    return { restored, created }
  })
  const { restored, created } = await Effect.runPromise(program.pipe(Effect.provide(engineLayer)))
  await tell<EngineMemoryResult>({ type: "result", restored, created })
})

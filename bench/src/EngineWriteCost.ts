/**
 * The engine's CPU per write, alone (no HTTP, no host): create RFQ, create quote, update quote and
 * accept (with settlement on the simulated venue and its SQL ledger), each measured as process CPU
 * time (`process.cpuUsage`, user + system, all threads: the pg driver's socket work and the garbage
 * collector's helper threads count) ÷ operations, with a few concurrent callers. Issue 15's
 * lifecycle and WS-quoting scenarios pay this per step on top of the host's request pipeline. On
 * PostgreSQL it also prints PostgreSQL's CPU per operation (every `postgres` process on the machine,
 * from /proc, 10 ms ticks: run it on an otherwise idle server).
 *
 *   node --conditions=source --import tsx bench/src/EngineWriteCost.ts [--rounds=300] [--clients=4]
 *     [--updates=2] [--repeat=3] [--pglite] [--ops[=20]]
 *   (without --conditions=source the engine comes from packages/engine/dist: run `npx tsc -b` first;
 *   add --cpu-prof --cpu-prof-dir=/tmp/x to profile; the profile covers start-up too)
 *
 * PostgreSQL from `BENCH_DATABASE_URL`, else `TEST_DATABASE_URL`, else the tests' server, in a
 * fresh schema dropped afterwards; `--pglite` runs on an in-memory PGlite instead. Each phase runs
 * every operation of its kind for all rounds' RFQs (create all, quote all, update all, accept all),
 * `--repeat` times after one warm-up pass; the best (lowest CPU) pass per phase is printed, with
 * the median. `--ops` adds one pass, untimed, under op supervision (`OpCounter.ts`): the Effect
 * runtime's operations per call of each kind, by kind and at the busiest sites (20, or `--ops=N`).
 * Not part of `npm run bench`: a tool for work on the engine's hot paths.
 */
import { randomBytes } from "node:crypto"
import { performance } from "node:perf_hooks"
import * as SqlClient from "@effect/sql/SqlClient"
import {
  type Caller,
  CreateQuoteRequest,
  CreateRfqRequest,
  decodeRequest,
  Engine,
  type EngineService,
  LegPricesRequest,
  makeDatabaseLayer,
  makeEngineLayer,
  SecretBoxLive,
  seedDemoData,
  UpdateQuoteRequest,
  withRequestBudget
} from "@rfq/engine"
import { Effect, Layer } from "effect"
import { demoRfq } from "./Api.js"
import { counted, OpCounts, OpTally } from "./OpCounter.js"
import { cpuSpent, readCpu } from "./ProcessCpu.js"

const arg = (name: string, fallback: number): number => {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`))
  return found === undefined ? fallback : Number(found.slice(name.length + 3))
}
const rounds = arg("rounds", 300)
const clients = arg("clients", 4)
const updates = arg("updates", 2)
const repeat = arg("repeat", 3)
const onPglite = process.argv.includes("--pglite")
const opsFlag = process.argv.find((a) => a === "--ops" || a.startsWith("--ops="))
const opSites = opsFlag === undefined ? 0 : opsFlag === "--ops" ? 20 : Number(opsFlag.slice(6))
const url =
  process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
const schema = `bench_write_cost_${randomBytes(4).toString("hex")}`
const keys = new Map([[1, new Uint8Array(randomBytes(32))]])

type Phase = "create" | "quote" | "update" | "accept"

interface Reading {
  readonly cpuUs: number
  readonly sysUs: number
  readonly wallMs: number
  readonly ops: number
  /** PostgreSQL's CPU (every `postgres` process on this machine) over the phase, µs; undefined on PGlite. */
  readonly pgUs: number | undefined
}

const readPostgresCpu = () => (onPglite ? undefined : readCpu({ pg: { command: "postgres" } }).pg)

/** Set for the counted pass: each phase's operations are counted apart. */
let tally: OpTally | undefined
const phaseCounts = new Map<string, OpCounts>()
let phaseNo = 0
const phaseNames: ReadonlyArray<Phase> = ["create", "quote", "update", "accept"]

/** Runs `ops` operations, `clients` at a time, and reads the process's CPU around them. */
const measure = <A>(items: ReadonlyArray<A>, op: (item: A) => Effect.Effect<unknown, unknown>) =>
  Effect.gen(function* () {
    if (tally !== undefined) {
      tally.current = new OpCounts()
      phaseCounts.set(phaseNames[phaseNo++ % 4]!, tally.current)
    }
    const cpu = process.cpuUsage()
    const pgBefore = readPostgresCpu()
    const started = performance.now()
    yield* Effect.forEach(items, (item) => withRequestBudget(op(item)), {
      concurrency: clients,
      discard: true
    })
    const used = process.cpuUsage(cpu)
    if (tally !== undefined) tally.current = new OpCounts()
    const pgMs = cpuSpent(pgBefore, readPostgresCpu())
    return {
      cpuUs: used.user + used.system,
      sysUs: used.system,
      wallMs: performance.now() - started,
      ops: items.length,
      pgUs: pgMs === undefined ? undefined : pgMs * 1000
    } satisfies Reading
  })

const callerOf = (sql: SqlClient.SqlClient, clientId: string) =>
  Effect.map(
    sql<{ userId: number; deskId: number; roles: Array<"trader" | "viewer">; makerId: string | null }>`
      SELECT u.id AS "userId", u.desk_id AS "deskId", u.roles, m.maker_id AS "makerId"
      FROM api_clients c JOIN users u ON u.id = c.user_id LEFT JOIN makers m ON m.desk_id = u.desk_id
      WHERE c.client_id = ${clientId}`,
    ([row]): Caller => ({
      deskId: Number(row!.deskId),
      userId: Number(row!.userId),
      roles: row!.roles,
      ...(row!.makerId === null ? {} : { makerId: row!.makerId })
    })
  )

/** One pass: every phase over `rounds` fresh RFQs. */
const pass = (engine: EngineService, taker: Caller, makers: ReadonlyArray<Caller>) =>
  Effect.gen(function* () {
    const createReq = yield* decodeRequest(CreateRfqRequest, { id: 0, ...demoRfq })
    const slots = Array.from({ length: rounds }, (_, i) => i)
    const rfqIds: Array<number> = []
    const create = yield* measure(slots, () =>
      Effect.map(engine.createRfq(taker, createReq), ({ rfqId }) => rfqIds.push(rfqId))
    )
    // Leg prices at the first RFQ's mark (untimed), as the lifecycle's clients price them.
    const first = (yield* engine.getRfq(makers[0]!, rfqIds[0]!)) as {
      markPrice: number
      legs: ReadonlyArray<{ instrumentName: string; direction: "buy" | "sell"; ratio: number }>
    }
    const priced = yield* engine.legPrices(
      makers[0]!,
      yield* decodeRequest(LegPricesRequest, {
        rfqId: rfqIds[0],
        price: Math.round(first.markPrice * 10_000) / 10_000,
        legs: first.legs.map(({ instrumentName, direction, ratio }) => ({ instrumentName, direction, ratio }))
      })
    )
    const legs = priced.legs.map(({ instrumentName, price }) => ({ instrumentName, price }))
    const quoteReqs: Array<{ maker: Caller; req: CreateQuoteRequest }> = []
    for (const rfqId of rfqIds)
      for (const maker of makers)
        quoteReqs.push({
          maker,
          req: yield* decodeRequest(CreateQuoteRequest, {
            rfqId,
            direction: "sell",
            amount: 50,
            settlementOption: "DBT",
            legs
          })
        })
    const quoteIds: Array<{ maker: Caller; id: number }> = []
    const quote = yield* measure(quoteReqs, ({ maker, req }) =>
      Effect.map(engine.createQuote(maker, req), ({ rfqQuoteId }) => quoteIds.push({ maker, id: rfqQuoteId }))
    )
    // Updates alternate between two prices a tick apart (as the WS-quoting clients do).
    // In whole ticks: 0.6759 + 0.0001 in floats is 0.6759999999999999, off the tick, refused.
    const alternate = legs.map((l, i) =>
      i === 0 ? { ...l, price: (Math.round(l.price * 10_000) + 1) / 10_000 } : l
    )
    const updateReqs: Array<{ maker: Caller; req: UpdateQuoteRequest }> = []
    for (let u = 0; u < updates; u++)
      for (const { maker, id } of quoteIds)
        updateReqs.push({
          maker,
          req: yield* decodeRequest(UpdateQuoteRequest, {
            rfqQuoteId: id,
            amount: 50,
            settlementOption: "DBT",
            legs: u % 2 === 0 ? alternate : legs
          })
        })
    const update = yield* measure(updateReqs, ({ maker, req }) => engine.updateQuote(maker, req))
    // The first quote of each RFQ (maker 1's) is accepted.
    const firstQuotes = new Map<number, number>()
    for (const { maker, id } of quoteIds) if (maker === makers[0]) firstQuotes.set(id, id)
    const accept = yield* measure([...firstQuotes.keys()], (id) => engine.trade(taker, id))
    return { create, quote, update, accept } satisfies Record<Phase, Reading>
  })

const program = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const engine = yield* Engine
  const taker = yield* callerOf(sql, "demo-taker")
  const makers = yield* Effect.forEach(["demo-maker-1", "demo-maker-2", "demo-maker-3"], (c) =>
    callerOf(sql, c)
  )
  yield* pass(engine, taker, makers) // warm-up (JIT, caches, prepared statements)
  const passes: Array<Record<Phase, Reading>> = []
  for (let i = 0; i < repeat; i++) passes.push(yield* pass(engine, taker, makers))
  const phases: ReadonlyArray<Phase> = ["create", "quote", "update", "accept"]
  console.log(
    `engine CPU per operation (${onPglite ? "PGlite" : "PostgreSQL"}, ${rounds} RFQs a pass, ${clients} callers, best / median of ${repeat} passes)`
  )
  let lifecycleBest = 0
  for (const phase of phases) {
    const perOp = passes.map((p) => p[phase].cpuUs / p[phase].ops).sort((a, b) => a - b)
    const sys = passes.map((p) => p[phase].sysUs / p[phase].ops).sort((a, b) => a - b)
    const wall = passes.map((p) => (p[phase].wallMs * 1000) / p[phase].ops).sort((a, b) => a - b)
    const pg = passes
      .map((p) => p[phase].pgUs)
      .filter((x): x is number => x !== undefined)
      .map((x) => x / passes[0]![phase].ops)
      .sort((a, b) => a - b)
    const best = perOp[0]!
    lifecycleBest += phase === "quote" ? 3 * best : phase === "update" ? 0 : best
    console.log(
      `  ${phase.padEnd(7)} ${best.toFixed(0).padStart(6)} µs CPU (median ${perOp[Math.floor(perOp.length / 2)]!.toFixed(0)}, system ${sys[0]!.toFixed(0)}), wall ${wall[0]!.toFixed(0)} µs/op, ${passes[0]![phase].ops} ops${pg.length === 0 ? "" : `; PostgreSQL ${pg[0]!.toFixed(0)} µs (median ${pg[Math.floor(pg.length / 2)]!.toFixed(0)})`}`
    )
  }
  console.log(`  lifecycle (create + 3 quotes + accept) ${lifecycleBest.toFixed(0)} µs CPU`)
  if (opSites > 0) {
    tally = new OpTally()
    yield* counted(tally, pass(engine, taker, makers))
    for (const phase of phases) {
      const counts = phaseCounts.get(phase)!
      const ops = phase === "quote" ? rounds * 3 : phase === "update" ? rounds * 3 * updates : rounds
      console.log(`${phase}: ${counts.report(ops, opSites).join("\n")}`)
    }
  }
})

const database = onPglite
  ? makeDatabaseLayer({ kind: "pglite", dataDir: "memory://" })
  : makeDatabaseLayer({ kind: "postgres", url, schema })
const engineLayer = Layer.unwrapEffect(
  Effect.gen(function* () {
    yield* seedDemoData({ hashSecret: (s) => Effect.succeed(`bench-only:${s}`) }).pipe(
      Effect.provide(SecretBoxLive(keys))
    )
    return makeEngineLayer({ rfqTtlMs: 24 * 3600 * 1000, encryptionKeys: keys })
  })
).pipe(Layer.provideMerge(database))

const dropSchema = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
).pipe(Effect.provide(makeDatabaseLayer({ kind: "postgres", url })), Effect.orDie)

await Effect.runPromise(
  program.pipe(Effect.provide(engineLayer), Effect.ensuring(onPglite ? Effect.void : dropSchema))
)

import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { BenchContext } from "../BenchContext.js"
import type { EngineMemoryConfig, EngineMemoryResult, MemoryReading } from "../children/engineMemory.js"
import { dropSchema, freshSchemaName } from "../Postgres.js"
import { childScript, spawnTs } from "../Processes.js"
import { check, formatNumber, type ScenarioResult, type TargetCheck } from "../Report.js"

export interface MemorySizes {
  /** Open RFQs to measure at (10k and 100k in the full run). */
  readonly checkpoints: ReadonlyArray<number>
  /** RFQs created one by one through the engine before the checkpoints (the cross-check). */
  readonly direct: number
  readonly concurrency: number
  readonly targets: boolean
}

const KB = 1024
const MiB = 2 ** 20

const label = (n: number) => (n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n))

/**
 * Scenario 5: heap and RSS per open RFQ in the engine alone. Creating 100k RFQs one by one through
 * the engine takes longer than a bench run can afford, so the engine creates the first `1 + direct`
 * itself (their cost per RFQ is reported as the cross-check), then each checkpoint's RFQs are
 * copies of the first one's rows made in SQL, and a fresh engine process restores them all into
 * memory at start, exactly as after a restart. Per RFQ = (reading at N − reading of a fresh engine
 * holding the `1 + direct` RFQs) / (N − 1 − direct), heap and RSS read after full collections.
 * On PostgreSQL when a server answers, so the process holds the engine and a driver only;
 * otherwise on a file-backed PGlite, whose WebAssembly memory then counts in RSS.
 */
export const memory = async (ctx: BenchContext, sizes: MemorySizes): Promise<ScenarioResult> => {
  const schema = freshSchemaName("bench_memory")
  const dataDir =
    ctx.postgresUrl === undefined ? fs.mkdtempSync(path.join(os.tmpdir(), "rfq-bench-memory-")) : undefined
  const database: EngineMemoryConfig["database"] =
    ctx.postgresUrl === undefined
      ? { kind: "pglite", dataDir: dataDir! }
      : { kind: "postgres", url: ctx.postgresUrl, schema }
  const encryptionKeyHex = randomBytes(32).toString("hex")
  const step = async (createTo: ReadonlyArray<number>, cloneTo?: number): Promise<EngineMemoryResult> => {
    const config: EngineMemoryConfig = {
      database,
      encryptionKeyHex,
      createTo,
      concurrency: sizes.concurrency,
      ...(cloneTo === undefined ? {} : { cloneTo })
    }
    const child = spawnTs(childScript("engineMemory.ts"), [JSON.stringify(config)], {
      nodeArgs: ["--expose-gc", "--max-old-space-size=8192"]
    })
    try {
      return await child.next<EngineMemoryResult>("result", 1_800_000)
    } finally {
      await child.stop()
    }
  }

  const figures: Record<string, number | string> = { database: database.kind }
  const targets: Array<TargetCheck> = []
  const notes: Array<string> = []
  try {
    const first = 1 + sizes.direct
    const checkpoints = sizes.checkpoints.filter((n) => n > first)
    const created = await step([1, first])
    const [warm, direct] = created.created as [MemoryReading, MemoryReading]
    const directHeap = (direct.heapUsed - warm.heapUsed) / sizes.direct
    const directRss = (direct.rss - warm.rss) / sizes.direct
    ctx.log(
      `  ${sizes.direct} RFQs created through the engine: ${formatNumber(directHeap / KB)} KB heap, ` +
        `${formatNumber(directRss / KB)} KB RSS per RFQ (${formatNumber(direct.perSecond)} creates/s)`
    )
    Object.assign(figures, {
      directRfqs: sizes.direct,
      directHeapKbPerRfq: directHeap / KB,
      directRssKbPerRfq: directRss / KB,
      directCreatesPerSecond: direct.perSecond
    })
    notes.push(`${sizes.direct} created through the engine: ${formatNumber(directHeap / KB)} KB heap per RFQ`)

    // A fresh engine holding the first RFQs is the base the checkpoints are measured against.
    let previous = await step([], checkpoints[0])
    const base = previous.restored
    if (base.openRfqs !== first)
      throw new Error(`the engine restored ${base.openRfqs} RFQs, expected ${first}`)
    for (let i = 0; i < checkpoints.length; i++) {
      const n = checkpoints[i]!
      previous = await step([], checkpoints[i + 1])
      const at = previous.restored
      if (at.openRfqs !== n) throw new Error(`the engine restored ${at.openRfqs} RFQs, expected ${n}`)
      const heapPerRfq = (at.heapUsed - base.heapUsed) / (n - first)
      const rssPerRfq = (at.rss - base.rss) / (n - first)
      ctx.log(
        `  ${label(n)} open RFQs: heap ${formatNumber(at.heapUsed / MiB)} MiB (${formatNumber(heapPerRfq / KB)} KB/RFQ), ` +
          `RSS ${formatNumber(at.rss / MiB)} MiB (${formatNumber(rssPerRfq / KB)} KB/RFQ); restored at ${formatNumber(at.perSecond)} RFQs/s`
      )
      Object.assign(figures, {
        [`heapKbPerRfqAt${label(n)}`]: heapPerRfq / KB,
        [`rssKbPerRfqAt${label(n)}`]: rssPerRfq / KB,
        [`heapMiBAt${label(n)}`]: at.heapUsed / MiB,
        [`rssMiBAt${label(n)}`]: at.rss / MiB
      })
      notes.push(
        `${label(n)} open: ${formatNumber(heapPerRfq / KB)} KB heap, ${formatNumber(rssPerRfq / KB)} KB RSS per RFQ`
      )
      if (sizes.targets) {
        // Issue 15: keep the heap per open RFQ at 3 KB or less; RSS moves from run to run (the
        // allocator's pages), so it keeps the looser 10 KB of issue 8.
        targets.push(check(`heap per open RFQ at ${label(n)}`, heapPerRfq / KB, "<=", 3, " KB"))
        targets.push(check(`RSS per open RFQ at ${label(n)}`, rssPerRfq / KB, "<=", 10, " KB"))
      }
    }
    figures.baseHeapMiB = base.heapUsed / MiB
    figures.baseRssMiB = base.rss / MiB
    if (database.kind === "pglite")
      notes.push("on PGlite (no PostgreSQL answered): RSS includes PGlite's WebAssembly memory")
  } finally {
    if (database.kind === "postgres") await dropSchema(database.url, schema).catch(() => undefined)
    if (dataDir !== undefined) fs.rmSync(dataDir, { recursive: true, force: true })
  }
  return { id: "memory", title: "Memory per open RFQ (engine only)", figures, targets, notes }
}

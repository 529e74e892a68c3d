import { describe, expect, it } from "vitest"
import { runCrashDurability } from "../../src/reliability/CrashDurability.js"
import { formatFigures } from "../../src/reliability/Figures.js"
import { crashFigures } from "../../src/reliability/Items.js"

/**
 * The short version of the crash run: SIGKILLs at random moments (two on PGlite, one on
 * PostgreSQL; the seed is printed), then every acknowledged write checked against the database.
 */
describe.each([
  ["pglite", 2],
  ["postgres", 1]
] as const)("crash durability on %s (short)", (backend, kills) => {
  it("loses no acknowledged write, executes no block trade twice, leaves no invalid state", async () => {
    const f = await runCrashDurability({
      backend,
      kills,
      clients: 3,
      uptimeMs: [2000, 4000],
      log: (line) => process.stdout.write(`    ${line}\n`)
    })
    process.stdout.write(formatFigures(crashFigures(f)))
    expect(f.acknowledged.rfqs).toBeGreaterThan(0)
    expect({
      lost: f.lost,
      doubled: f.doubled,
      unknown: f.unknownBlockTrades,
      invalid: f.invalid,
      serverErrors: f.serverErrors
    }).toEqual({
      lost: 0,
      doubled: 0,
      unknown: 0,
      invalid: 0,
      serverErrors: 0
    })
  }, 240_000)
})

import { describe, expect, it } from "vitest"
import { formatFigures } from "../../src/reliability/Figures.js"
import { revocationItem } from "../../src/reliability/Revocation.js"

/**
 * The short version of reliability item 10 (issue 12, class 1): a refresh-token replay and an
 * `npm run admin -- client deactivate` reach open WebSocket sessions, on real host processes
 * (PGlite and PostgreSQL). Every figure must meet its target.
 */
describe("reliability: revocation reaches open sessions (short)", () => {
  it("replayed families and deactivated clients end their sessions within 5 s; nothing succeeds after", async () => {
    const figures = await revocationItem.run({
      scale: "short",
      log: (line) => process.stdout.write(`    ${line}\n`)
    })
    process.stdout.write(formatFigures(figures))
    expect(figures.filter((f) => !f.ok).map((f) => `${f.name}: ${f.value} ${f.note ?? ""}`)).toEqual([])
  }, 400_000)
})

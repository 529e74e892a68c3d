import { describe, expect, it } from "vitest"
import { databaseStallItem } from "../../src/reliability/DatabaseStall.js"
import { formatFigures } from "../../src/reliability/Figures.js"

/**
 * The short version of item 9: a real host on PostgreSQL behind a stalling proxy (the machine's
 * PostgreSQL itself is never touched), load and one request on every path during a 6 s stall.
 * Every figure must meet its target: 503 within the bound on every path, `/readyz` 503 within 2 s,
 * recovery, nothing acknowledged lost, no write half there, memory equal to storage.
 */
describe("database stall (short)", () => {
  it("every path answers 503 in time while the database hangs, and the service recovers consistent", async () => {
    const figures = await databaseStallItem.run({
      scale: "short",
      log: (line) => process.stdout.write(`    ${line}\n`)
    })
    process.stdout.write(formatFigures(figures))
    expect(figures.filter((f) => !f.ok).map((f) => `${f.name}: ${f.value} ${f.note ?? ""}`)).toEqual([])
  }, 180_000)
})

import { describe, expect, it } from "vitest"
import { formatFigures } from "../../src/reliability/Figures.js"
import { hostileStringsItem } from "../../src/reliability/HostileStrings.js"

/**
 * The short version of reliability item 12 (issue 12, class 3) on both backends: hostile text in
 * every string field of every operation, REST and JSON-RPC, is refused naming the field, never
 * answered 5xx / -32603, never stored; text a client may mean is stored exactly.
 */
describe("hostile strings (short)", () => {
  it("every string field refuses unstorable and control text by name, on PGlite and PostgreSQL", async () => {
    const figures = await hostileStringsItem.run({
      scale: "short",
      log: (line) => process.stdout.write(`    ${line}\n`)
    })
    process.stdout.write(formatFigures(figures))
    expect(figures.length).toBeGreaterThan(5)
    expect(
      figures.filter((f) => !f.ok).map((f) => `${f.item} ${f.name}: ${f.value} ${f.note ?? ""}`)
    ).toEqual([])
  }, 300_000)
})

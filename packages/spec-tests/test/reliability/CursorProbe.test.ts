import { describe, expect, it } from "vitest"
import { cursorProbeItem } from "../../src/reliability/CursorProbe.js"
import { formatFigures } from "../../src/reliability/Figures.js"

/**
 * The short version of reliability item 14 (issue 12, classes 6 and 10) on both backends: cursors
 * a maker could not have received answer exactly like ids that name nothing, over REST and
 * JSON-RPC, before and after a restart; paging returns every item once and ends with cursor 0.
 */
describe("cursor probing (short)", () => {
  it("no cursor tells existing from missing ids; last pages say cursor 0", async () => {
    const figures = await cursorProbeItem.run({
      scale: "short",
      log: (line) => process.stdout.write(`    ${line}\n`)
    })
    process.stdout.write(formatFigures(figures))
    expect(figures.length).toBeGreaterThan(4)
    expect(
      figures.filter((f) => !f.ok).map((f) => `${f.item} ${f.name}: ${f.value} ${f.note ?? ""}`)
    ).toEqual([])
  }, 300_000)
})

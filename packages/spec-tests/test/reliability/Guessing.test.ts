import { describe, expect, it } from "vitest"
import { formatFigures } from "../../src/reliability/Figures.js"
import { guessingItem } from "../../src/reliability/Guessing.js"

/**
 * The short version of reliability item 11 (issue 12, class 2): wrong client secrets over both
 * token endpoints and several WebSocket sockets, from one address and from many, against a real
 * host process. Every figure must meet its target.
 */
describe("reliability: secret guessing across REST and WS (short)", () => {
  it("no secret is verified past the limits; valid logins elsewhere go through", async () => {
    const figures = await guessingItem.run({
      scale: "short",
      log: (line) => process.stdout.write(`    ${line}\n`)
    })
    process.stdout.write(formatFigures(figures))
    expect(figures.filter((f) => !f.ok).map((f) => `${f.name}: ${f.value} ${f.note ?? ""}`)).toEqual([])
  }, 300_000)
})

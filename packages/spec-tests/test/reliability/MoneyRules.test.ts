import { describe, expect, it } from "vitest"
import { formatFigures } from "../../src/reliability/Figures.js"
import { moneyRulesItem } from "../../src/reliability/MoneyRules.js"

/**
 * The short version of reliability item 13 (issue 12, classes 4, 5 and 8) against a real host:
 * random splits, hedges and partial quotes over REST and JSON-RPC judged by the contract's
 * arithmetic, trades that settle every account in full, the venue ledger booked with the maker's
 * sides, and no settlement option without makers.
 */
describe("money rules (short)", () => {
  it("no quote settles an account below minimum; hedges, ledger sides and makers per option hold", async () => {
    const figures = await moneyRulesItem.run({
      scale: "short",
      seed: 20_261_120,
      log: (line) => process.stdout.write(`    ${line}\n`)
    })
    process.stdout.write(formatFigures(figures))
    // Something was traded and booked, or the zeros would say nothing.
    const counted = figures.find((f) => f.name.startsWith("quotes accepted /"))
    expect(String(counted?.value)).not.toMatch(/^0 \//)
    expect(
      figures.filter((f) => !f.ok).map((f) => `${f.item} ${f.name}: ${f.value} ${f.note ?? ""}`)
    ).toEqual([])
  }, 300_000)
})

import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { EmbeddedEngine, program } from "../../examples/embed.js"

describe("docs/engine.md example", () => {
  it("runs an RFQ from creation to a filled trade with the engine alone", async () => {
    const result = await Effect.runPromise(program.pipe(Effect.provide(EmbeddedEngine)))
    expect(result.status).toBe("filled")
    expect(result.trade.rfqId).toBe(result.rfqId)
    expect(result.trade.trades.length).toBe(1)
  }, 120_000)
})

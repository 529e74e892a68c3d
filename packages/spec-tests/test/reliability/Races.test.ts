import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { openDatabase, type Place } from "../../src/reliability/DatabaseReader.js"
import { checkDurability } from "../../src/reliability/DurabilityCheck.js"
import { hostEnv, makeTempDir, randomSchema, startHost } from "../../src/reliability/HostProcess.js"
import { raceFigures } from "../../src/reliability/Items.js"

describe("races (short)", () => {
  it("accept against expiry: filled or expired, never both, nothing executed twice", async () => {
    const place: Place = { dataDir: makeTempDir("rfq-races-"), schema: randomSchema("races") }
    const host = await startHost(hostEnv("pglite", place, { RFQ_TTL_SECONDS: "3" }))
    try {
      const f = await raceFigures(host.url, ["accept vs expiry"], "short", (l) =>
        process.stdout.write(`    ${l}\n`)
      )
      expect(f.violations).toBe(0)
      expect(f.rounds["accept vs expiry"] ?? 0).toBeGreaterThan(0)
      await host.stop("SIGTERM")
      const db = await openDatabase("pglite", place)
      try {
        const checked = await checkDurability(db, f.acknowledged)
        expect(checked.problems).toEqual([])
      } finally {
        await db.close()
      }
    } finally {
      await host.stop("SIGKILL")
      fs.rmSync(place.dataDir, { recursive: true, force: true })
    }
  }, 180_000)
})

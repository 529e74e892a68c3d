import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { openDatabase, type Place } from "../../src/reliability/DatabaseReader.js"
import { checkDurability } from "../../src/reliability/DurabilityCheck.js"
import { hostEnv, makeTempDir, randomSchema, startHost } from "../../src/reliability/HostProcess.js"
import { raceFigures, SCALE } from "../../src/reliability/Items.js"
import { MAX_ATTEMPTS_PER_ROUND, runUntilDecided } from "../../src/reliability/Races.js"

describe("rounds until the count is decided", () => {
  const tick = () => new Promise((r) => setTimeout(r, Math.random() * 3))

  it("void rounds are replaced; exactly the requested number is decided, never more", async () => {
    let concurrent = 0
    let peak = 0
    const r = await runUntilDecided(100, 20, async (n) => {
      concurrent++
      peak = Math.max(peak, concurrent)
      await tick()
      concurrent--
      return n % 4 === 0 ? "void" : "decided"
    })
    expect(r.decided).toBe(100)
    expect(r.voids).toBeGreaterThanOrEqual(25)
    expect(r.attempts).toBe(r.decided + r.voids)
    expect(peak).toBeLessThanOrEqual(20)
  })

  it("stops at the attempt cap and reports the shortfall; a thrown attempt is void", async () => {
    const r = await runUntilDecided(10, 20, async (n) => {
      await tick()
      if (n % 2 === 1) throw new Error("setup failed")
      return n % 3 === 0 ? "decided" : "void"
    })
    expect(r.attempts).toBe(10 * MAX_ATTEMPTS_PER_ROUND)
    expect(r.decided).toBeLessThan(10)
    expect(r.decided + r.voids).toBe(r.attempts)
  })
})

describe("races (short)", () => {
  it("accept against expiry: filled or expired, never both, nothing executed twice", async () => {
    const place: Place = { dataDir: makeTempDir("rfq-races-"), schema: randomSchema("races") }
    const host = await startHost(hostEnv("pglite", place, { RFQ_TTL_SECONDS: "3" }))
    try {
      const f = await raceFigures(host.url, ["accept vs expiry"], "short", (l) =>
        process.stdout.write(`    ${l}\n`)
      )
      expect(f.violations).toBe(0)
      // Void rounds (the 3 s RFQ expired before its quote) are replaced, not counted.
      expect(f.rounds["accept vs expiry"]).toBe(SCALE.raceRounds.short)
      expect(f.shortfall).toBe(0)
      process.stdout.write(`    void rounds replaced: ${f.voidRounds}\n`)
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

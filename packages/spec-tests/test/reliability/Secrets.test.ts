import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { dropSchema, type Place } from "../../src/reliability/DatabaseReader.js"
import { hostEnv, makeTempDir, randomSchema, startHost } from "../../src/reliability/HostProcess.js"
import { runRotationCheck } from "../../src/reliability/RotationCheck.js"
import {
  dumpOf,
  exhaustiveBitFlips,
  knownSecrets,
  searchDump,
  type SecretsFigures,
  storeMarkedSecret,
  tamperCiphertexts
} from "../../src/reliability/SecretsAtRest.js"

describe("secrets at rest (short)", () => {
  it("SecretBox refuses every single-bit flip of a sealed value", () => {
    const flips = exhaustiveBitFlips()
    expect(flips.cases).toBeGreaterThan(300)
    expect(flips.accepted).toBe(0)
  })

  it("key rotation re-encrypts every secret under the new version without loss, all or nothing", async () => {
    const f = await runRotationCheck()
    expect(f.rows).toBeGreaterThan(5)
    expect(f).toEqual({
      rows: f.rows,
      lostOrChanged: 0,
      notOnNewVersion: 0,
      readableWithOldKeyOnly: 0,
      secondRunRotated: 0,
      partialWritesOnTamper: 0
    })
  }, 60_000)

  it("PostgreSQL: no plaintext secret in pg_dump; tampered ciphertexts are refused by the API", async () => {
    const place: Place = { dataDir: makeTempDir("rfq-secrets-"), schema: randomSchema("secrets") }
    const host = await startHost(hostEnv("postgres", place))
    try {
      const secrets = [...(await knownSecrets(host.url)), (await storeMarkedSecret(host.url)).secret]
      const figures: SecretsFigures = {
        plaintextsInDump: 0,
        searched: 0,
        tamperedAccepted: 0,
        tamperCases: 0,
        problems: []
      }
      await tamperCiphertexts(host, place, figures)
      expect(figures.tamperCases).toBeGreaterThan(10)
      expect(figures.tamperedAccepted).toBe(0)
      expect(figures.problems).toEqual([])
      expect(searchDump(dumpOf("postgres", place), secrets)).toEqual([])
      // The search would find a secret that is there.
      expect(searchDump(Buffer.from(`x${secrets[0]}y`), secrets)).toEqual([secrets[0]])
    } finally {
      await host.stop("SIGKILL")
      await dropSchema(place.schema)
      fs.rmSync(place.dataDir, { recursive: true, force: true })
    }
  }, 180_000)
})

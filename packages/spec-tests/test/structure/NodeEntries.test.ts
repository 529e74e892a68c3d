import { existsSync } from "node:fs"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"
import { repositoryRoot, runtimeClosure } from "./Sources.js"

/**
 * The commands that run a source file with plain Node (package scripts, not Vitest) load no module
 * that imports Vitest: outside a Vitest run, `vitest` throws as it loads ("Vitest failed to access
 * its internal state"). `npm run test:reliability` did, from 2026-11-25 until this test, through a
 * scenario helper that the multi-host items reached (`RpcSession.ts` then held `expectRpcError`).
 */
const ENTRIES = [
  "packages/spec-tests/src/reliability/main.ts",
  "packages/spec-tests/src/cli.ts",
  "packages/host/src/main.ts",
  "packages/host/src/admin.ts",
  "packages/host/src/cluster-main.ts",
  "bench/src/main.ts",
  "bench/src/EngineWriteCost.ts"
]

const testRunners = new Set(["vitest", "@effect/vitest"])

describe("entries run with plain Node", () => {
  for (const entry of ENTRIES) {
    it(`${entry} loads no Vitest`, () => {
      const closure = runtimeClosure(join(repositoryRoot, entry))
      const offenders = [...closure]
        .filter(([file, bare]) => existsSync(file) && bare.some((b) => testRunners.has(b)))
        .map(([file]) => relative(repositoryRoot, file))
      expect(offenders).toEqual([])
    })
  }

  it("would see one: a scenario module that imports Vitest is in the closure of a file importing it", () => {
    const closure = runtimeClosure(join(repositoryRoot, "packages/spec-tests/src/scenarios/Mmp.ts"))
    const withVitest = [...closure].filter(([, bare]) => bare.some((b) => testRunners.has(b)))
    expect(withVitest.map(([file]) => relative(repositoryRoot, file))).toContain(
      "packages/spec-tests/src/RpcExpect.ts"
    )
  })
})

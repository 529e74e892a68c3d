import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"
import { expect, it } from "vitest"

/**
 * The client runs in the browser: bundled for the browser platform with the package's own entry
 * (the `source` condition, as a front-end build of this workspace resolves it), nothing of Node
 * may be pulled in: esbuild fails on a Node built-in for `platform: "browser"`, and the output must
 * not name `node:` modules or Node globals.
 */
const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../src")
const REPO = path.resolve(SRC, "../../..")

it("bundles for the browser, and no bundled source of this repository uses Node", async () => {
  const result = await build({
    entryPoints: [path.join(SRC, "index.ts")],
    bundle: true,
    write: false,
    metafile: true,
    absWorkingDir: REPO,
    platform: "browser",
    format: "esm",
    conditions: ["source"],
    logLevel: "silent"
  })
  expect(result.errors).toEqual([])
  expect(result.outputFiles[0]!.text).toContain("RfqClient = class")
  // Libraries (effect) guard their Node paths; the repository's own sources must have none.
  const ours = Object.keys(result.metafile.inputs).filter((file) => !file.includes("node_modules/"))
  expect(ours).toContain("packages/client/src/RfqSession.ts")
  for (const file of ours) {
    const source = fs.readFileSync(path.join(REPO, file), "utf8")
    expect(source, file).not.toMatch(/from\s+["']node:|\bprocess\.|\bBuffer\./)
  }
})

it("no source file imports a node: module", () => {
  for (const file of fs.readdirSync(SRC)) {
    expect(fs.readFileSync(path.join(SRC, file), "utf8"), file).not.toMatch(/from\s+["']node:/)
  }
})

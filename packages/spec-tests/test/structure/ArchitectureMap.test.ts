import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { repositoryRoot } from "./Sources.js"

/**
 * docs/architecture.md is a map from rules to files: every `path` it names must exist, and every
 * `path#name` must hold `name` (declared or exported there), so the map cannot go stale unseen.
 */
const map = readFileSync(join(repositoryRoot, "docs/architecture.md"), "utf8")
const references = [...map.matchAll(/`((?:packages|bench|docs)\/[^`#\s]+)(?:#([A-Za-z_$][\w$]*))?`/g)].map(
  (m) => ({ path: m[1]!, name: m[2] })
)

const declares = (text: string, name: string): boolean =>
  new RegExp(
    `(?:const|let|function|class|interface|type|enum)\\s+${name.replace(/\$/g, "\\$")}\\b|export\\s*\\{[^}]*\\b${name}\\b`
  ).test(text)

describe("docs/architecture.md", () => {
  it("names enough of the tree to be a map", () => {
    expect(references.length).toBeGreaterThan(80)
  })

  it("names only paths that exist", () => {
    const missing = references.filter((r) => !existsSync(join(repositoryRoot, r.path))).map((r) => r.path)
    expect(missing).toEqual([])
  })

  it("finds each named function, type or constant in the file it names", () => {
    const wrong = references
      .filter((r) => r.name !== undefined && existsSync(join(repositoryRoot, r.path)))
      .filter((r) => !declares(readFileSync(join(repositoryRoot, r.path), "utf8"), r.name!))
      .map((r) => `${r.path}#${r.name}`)
    expect(wrong).toEqual([])
  })
})

import { existsSync } from "node:fs"
import { relative } from "node:path"
import { describe, expect, it } from "vitest"
import { relativeImports, repositoryRoot, sourceFiles } from "./Sources.js"

/** No source module imports, directly or through others, a module that imports it back. */
const cyclesOf = (graph: ReadonlyMap<string, ReadonlyArray<string>>): Array<string> => {
  const state = new Map<string, "open" | "done">()
  const stack: Array<string> = []
  const found = new Set<string>()
  const visit = (file: string) => {
    state.set(file, "open")
    stack.push(file)
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === "open") {
        found.add(
          stack
            .slice(stack.indexOf(next))
            .concat(next)
            .map((f) => relative(repositoryRoot, f))
            .join(" → ")
        )
      } else if (!state.has(next)) visit(next)
    }
    stack.pop()
    state.set(file, "done")
  }
  for (const file of graph.keys()) if (!state.has(file)) visit(file)
  return [...found]
}

describe("import graph", () => {
  const files = sourceFiles()
  const graph = new Map(files.map((f) => [f, relativeImports(f).filter((t) => existsSync(t))]))

  it("reads the whole tree", () => {
    expect(files.length).toBeGreaterThan(150)
    expect([...graph.values()].some((deps) => deps.length > 0)).toBe(true)
  })

  it("has no cycle", () => {
    expect(cyclesOf(graph)).toEqual([])
  })

  it("would see one", () => {
    const a = "/x/a.ts"
    const b = "/x/b.ts"
    expect(
      cyclesOf(
        new Map([
          [a, [b]],
          [b, [a]]
        ])
      ).length
    ).toBe(1)
  })
})

import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

export const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..")

/** Every TypeScript source file of every package (`packages/<name>/src/**`) and of the bench. */
export const sourceFiles = (): Array<string> => {
  const roots = [
    ...readdirSync(join(repositoryRoot, "packages")).map((p) => join(repositoryRoot, "packages", p, "src")),
    join(repositoryRoot, "bench/src")
  ]
  const files: Array<string> = []
  const walk = (dir: string) => {
    let entries: Array<import("node:fs").Dirent>
    try {
      entries = readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const e of entries) {
      const path = join(dir, e.name)
      if (e.isDirectory()) walk(path)
      else if (path.endsWith(".ts")) files.push(path)
    }
  }
  for (const root of roots) walk(root)
  return files
}

/** The files a source file imports or re-exports by a relative path (type-only imports included). */
export const relativeImports = (file: string): Array<string> => {
  const text = readFileSync(file, "utf8")
  const out: Array<string> = []
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;"']*?from\s+["'](\.[^"']+)["']/g)) {
    out.push(resolve(dirname(file), m[1]!.replace(/\.js$/, ".ts")))
  }
  for (const m of text.matchAll(/import\(\s*["'](\.[^"']+)["']\s*\)/g)) {
    out.push(resolve(dirname(file), m[1]!.replace(/\.js$/, ".ts")))
  }
  return out
}

/** The statements of a file that load a module when it runs: `import type` / `export type` left out. */
const runtimeSpecifiers = (file: string): Array<string> => {
  const text = readFileSync(file, "utf8")
  const out: Array<string> = []
  for (const m of text.matchAll(
    /(?:^|\n)\s*(?:import|export)(?!\s+type\b)\b[^;"']*?from\s+["']([^"']+)["']/g
  ))
    out.push(m[1]!)
  for (const m of text.matchAll(/(?:^|\n)\s*import\s+["']([^"']+)["']/g)) out.push(m[1]!)
  for (const m of text.matchAll(/import\(\s*["']([^"']+)["']\s*\)/g)) out.push(m[1]!)
  return out
}

/**
 * Every source file `entry` loads when it runs, by relative path (type-only imports left out), with
 * the bare package names each of them imports.
 */
export const runtimeClosure = (entry: string): Map<string, Array<string>> => {
  const packagesOf = new Map<string, Array<string>>()
  const queue = [resolve(entry)]
  while (queue.length > 0) {
    const file = queue.shift()!
    if (packagesOf.has(file)) continue
    const bare: Array<string> = []
    packagesOf.set(file, bare)
    for (const spec of runtimeSpecifiers(file)) {
      if (spec.startsWith(".")) queue.push(resolve(dirname(file), spec.replace(/\.js$/, ".ts")))
      else bare.push(spec)
    }
  }
  return packagesOf
}

import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { PGlite } from "@electric-sql/pglite"

/**
 * A fresh embedded data directory without running initdb each time, for harnesses that start many
 * embedded hosts or engines (the test suites, the bench). PGlite's first open of an empty directory
 * runs initdb: 4–5 s of CPU on a two-core machine, more than the rest of a host's start. Here the
 * directory PGlite leaves after that first open (initdb and nothing else: no migration, no row of
 * ours) is made once per machine and PGlite build, kept in the system's temporary directory, and
 * copied into each new data directory. The host or engine then starts on it exactly as on a
 * directory PGlite made itself a moment before: migrations, keys and demo data are still its own
 * first start's work.
 *
 * `npm start` never uses this: a user's first start runs initdb itself.
 */

/** The PGlite build's version (its package exports no `package.json`: found from its entry, up). */
export const pgliteVersion = (): string => {
  const require = createRequire(import.meta.url)
  let dir = path.dirname(require.resolve("@electric-sql/pglite"))
  while (path.basename(dir) !== "pglite" && path.dirname(dir) !== dir) dir = path.dirname(dir)
  return require(path.join(dir, "package.json")).version as string
}

let template: Promise<string> | undefined

/** The initialised directory, made on first use (atomically: concurrent makers keep one). */
const initialisedTemplate = (): Promise<string> => {
  template ??= (async () => {
    const uid = typeof process.getuid === "function" ? process.getuid() : 0
    const final = path.join(os.tmpdir(), `rfq-pglite-initdb-${pgliteVersion()}-${uid}`)
    if (fs.existsSync(path.join(final, "PG_VERSION"))) return final
    const building = fs.mkdtempSync(path.join(os.tmpdir(), "rfq-pglite-initdb-building-"))
    const db = await PGlite.create(building)
    await db.close()
    try {
      fs.renameSync(building, final)
    } catch (error) {
      // Another process put its template there first: keep that one.
      fs.rmSync(building, { recursive: true, force: true })
      if (!fs.existsSync(path.join(final, "PG_VERSION"))) throw error
    }
    return final
  })()
  template.catch(() => {
    template = undefined
  })
  return template
}

/**
 * Fills `pgliteDir` (a host's `<DATA_DIR>/pglite`, or any PGlite data directory) with a freshly
 * initialised, empty cluster. Does nothing when the directory already holds one or anything else:
 * an existing database is never touched.
 */
export const seedPgliteDataDir = async (pgliteDir: string): Promise<void> => {
  if (fs.existsSync(pgliteDir) && fs.readdirSync(pgliteDir).length > 0) return
  const source = await initialisedTemplate()
  fs.cpSync(source, pgliteDir, { recursive: true })
}

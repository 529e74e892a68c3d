import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

/**
 * Builds the console when its `dist/` is missing or older than what it is built from, and does
 * nothing otherwise. `npm start` runs it first (root `prestart`), so a fresh clone serves
 * `/console` after `npm ci && npm start` and later starts cost only this check (a few ms); the
 * browser test runs it too. `npm run build` always builds.
 */

export const CONSOLE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const REPO_ROOT = path.resolve(CONSOLE_DIR, "../..")
export const CONSOLE_DIST = path.join(CONSOLE_DIR, "dist")

/** What the bundle is made of: the console, the client and the engine (its `api` imports domain rules). */
const INPUTS = [
  path.join(CONSOLE_DIR, "src"),
  path.join(CONSOLE_DIR, "index.html"),
  path.join(CONSOLE_DIR, "vite.config.ts"),
  path.join(REPO_ROOT, "packages/client/src"),
  path.join(REPO_ROOT, "packages/engine/src")
]

const newestMtime = (target: string): number => {
  if (!fs.existsSync(target)) return 0
  const stat = fs.statSync(target)
  if (!stat.isDirectory()) return stat.mtimeMs
  let newest = stat.mtimeMs
  for (const entry of fs.readdirSync(target)) newest = Math.max(newest, newestMtime(path.join(target, entry)))
  return newest
}

export const consoleIsFresh = (): boolean => {
  const built = path.join(CONSOLE_DIST, "index.html")
  if (!fs.existsSync(built)) return false
  const builtAt = fs.statSync(built).mtimeMs
  return INPUTS.every((input) => newestMtime(input) <= builtAt)
}

/** Runs Vite's build in this process with the console's own config. */
export const buildConsole = async (): Promise<void> => {
  const { build } = await import("vite")
  await build({ configFile: path.join(CONSOLE_DIR, "vite.config.ts"), logLevel: "warn" })
}

/** Answers whether it built. */
export const ensureConsoleBuilt = async (): Promise<boolean> => {
  if (consoleIsFresh()) return false
  await buildConsole()
  return true
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const started = Date.now()
  ensureConsoleBuilt().then(
    (built) => {
      if (built) process.stdout.write(`console built into ${CONSOLE_DIST} in ${Date.now() - started} ms\n`)
    },
    (error: unknown) => {
      // The service runs without its console: say why, and let `npm start` go on.
      process.stderr.write(`could not build the console (/console will answer 503): ${String(error)}\n`)
    }
  )
}

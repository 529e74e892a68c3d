import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { apiError } from "@rfq/engine"
import { Effect } from "effect"
import { errorResponse } from "./ErrorTable.js"
import { type Route, type RouteResponse, route } from "./Router.js"

/**
 * `GET /console…`: the browser console (`packages/console`, a Vite build in its `dist/`).
 *
 * The built files are read into memory the first time the console is asked for, and a request's
 * path is only ever looked up in that map: no path a client sends reaches the file system, so no
 * `..`, encoded slash or symlink can leave the folder. Until the folder has an `index.html` every
 * request looks again (so a build made after the host started is picked up) and answers 503 with
 * the command that builds it; once loaded, a rebuild needs a restart.
 *
 * Only text files are served (HTML, scripts, styles, source maps, SVG): a route answers a string,
 * and the console ships no binary asset. Hashed files under `assets/` are cached for a year
 * (their name changes with their content); everything else is revalidated on every load. A path
 * with no file extension that names no file is the single-page app's: it gets `index.html`.
 */

/** `packages/console/dist`, found from this file in `packages/host/src` or `packages/host/dist`. */
export const defaultConsoleDir = (): string =>
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../console/dist")

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml; charset=utf-8",
  ".txt": "text/plain; charset=utf-8"
}

/** What the page may load: only this origin (its WebSocket included), no frames, no plugins. */
const PAGE_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

const IMMUTABLE = "public, max-age=31536000, immutable"
const REVALIDATE = "no-cache"
/** Deepest path served (`/console/a/b/c`): the router has no wildcard, so each depth is a route. */
export const CONSOLE_MAX_DEPTH = 3
/** Neither hidden files nor anything that is not a plain file name. */
const SAFE_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/

interface ConsoleFile {
  readonly text: string
  readonly headers: Readonly<Record<string, string>>
}

/** Every servable file under `dir`, keyed by its `/`-separated path relative to `dir`. */
const readConsoleFiles = (dir: string): Map<string, ConsoleFile> | undefined => {
  if (!fs.existsSync(path.join(dir, "index.html"))) return undefined
  const files = new Map<string, ConsoleFile>()
  const walk = (relative: ReadonlyArray<string>) => {
    for (const entry of fs.readdirSync(path.join(dir, ...relative), { withFileTypes: true })) {
      if (!SAFE_SEGMENT.test(entry.name)) continue
      const parts = [...relative, entry.name]
      if (entry.isDirectory()) {
        if (parts.length < CONSOLE_MAX_DEPTH) walk(parts)
        continue
      }
      const type = entry.isFile() ? CONTENT_TYPES[path.extname(entry.name).toLowerCase()] : undefined
      if (type === undefined) continue
      const key = parts.join("/")
      const headers: Record<string, string> = {
        "content-type": type,
        "cache-control": key.startsWith("assets/") ? IMMUTABLE : REVALIDATE,
        "x-content-type-options": "nosniff"
      }
      if (type.startsWith("text/html")) {
        headers["content-security-policy"] = PAGE_POLICY
        headers["referrer-policy"] = "no-referrer"
      }
      files.set(key, { text: fs.readFileSync(path.join(dir, ...parts), "utf8"), headers })
    }
  }
  walk([])
  return files
}

const notBuilt: RouteResponse = {
  status: 503,
  body: null,
  text: "The console is not built. Run `npm run build` (or `npm run build -w @rfq/console`), then reload.\n",
  headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" }
}

/** The service's own 404 (`{code: 404, message: "not found"}`), as for any unknown path. */
const notFound: RouteResponse = errorResponse(apiError("notFound"))

/** The answer for the path segments after `/console` (empty: the page itself). */
export const consoleAnswer = (
  files: ReadonlyMap<string, ConsoleFile>,
  segments: ReadonlyArray<string>
): RouteResponse => {
  const page = files.get("index.html")!
  const asPage = { status: 200, body: null, text: page.text, headers: page.headers }
  if (segments.length === 0) return asPage
  if (!segments.every((s) => SAFE_SEGMENT.test(s))) return notFound
  const file = files.get(segments.join("/"))
  if (file !== undefined) return { status: 200, body: null, text: file.text, headers: file.headers }
  // A missing script or style must fail as such, not load the page in its place.
  return segments[segments.length - 1]!.includes(".") ? notFound : asPage
}

export const consoleRoutes = (dir: string = defaultConsoleDir()): ReadonlyArray<Route<never>> => {
  let files: Map<string, ConsoleFile> | undefined
  const answer = (segments: ReadonlyArray<string>) =>
    Effect.sync((): RouteResponse => {
      files ??= readConsoleFiles(dir)
      return files === undefined ? notBuilt : consoleAnswer(files, segments)
    })
  const names = ["a", "b", "c"].slice(0, CONSOLE_MAX_DEPTH)
  const deeper = names.map((_, depth) => {
    const params = names.slice(0, depth + 1)
    return route("GET", `/console/${params.map((p) => `{${p}}`).join("/")}`, (request) =>
      answer(params.map((p) => request.params[p] ?? ""))
    )
  })
  return [route("GET", "/console", () => answer([])), route("GET", "/console/", () => answer([])), ...deeper]
}

import { spawn } from "node:child_process"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/**
 * `npm run spec-tests -- --url http://host:port [vitest options]`: the black-box suite against a
 * running deployment (which must have the demo data, `DEMO=1`). Without `--url`, the whole suite
 * runs against hosts it starts itself (embedded and PostgreSQL). Exits with Vitest's code.
 */

const usage = `usage: npm run spec-tests -- [--url http://HOST:PORT] [vitest options, e.g. -t "quotes"]
  --url   the service's root address (the one serving /healthz and /v1); without it the suite
          starts its own hosts on embedded PGlite and PostgreSQL`

const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const repoRoot = path.resolve(packageRoot, "../..")

const parse = (argv: ReadonlyArray<string>) => {
  let url: string | undefined
  const rest: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === "--help" || arg === "-h") return { help: true as const }
    if (arg === "--url") url = argv[++i]
    else if (arg.startsWith("--url=")) url = arg.slice("--url=".length)
    else rest.push(arg)
  }
  return { help: false as const, url, rest }
}

const normalise = (url: string): string | undefined => {
  try {
    const parsed = new URL(url)
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return undefined
    return `${parsed.origin}${parsed.pathname.replace(/\/+$/, "").replace(/\/v1$/, "")}`
  } catch {
    return undefined
  }
}

const main = () => {
  const args = parse(process.argv.slice(2))
  if (args.help) {
    process.stdout.write(`${usage}\n`)
    return
  }
  const url = args.url === undefined ? undefined : normalise(args.url)
  if (args.url !== undefined && url === undefined) {
    process.stderr.write(`not an http(s) URL: ${args.url}\n${usage}\n`)
    process.exitCode = 2
    return
  }
  const vitest = path.join(
    path.dirname(createRequire(import.meta.url).resolve("vitest/package.json")),
    "vitest.mjs"
  )
  const files = url === undefined ? [] : [path.join(packageRoot, "test/spec.test.ts")]
  const child = spawn(process.execPath, [vitest, "run", "--project", "spec-tests", ...files, ...args.rest], {
    cwd: repoRoot,
    stdio: "inherit",
    env: { ...process.env, SPEC_URL: url ?? "" }
  })
  child.on("exit", (code, signal) => {
    process.exitCode = code ?? (signal === null ? 1 : 128)
  })
}

main()

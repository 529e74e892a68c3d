/**
 * `npm run bench` (full, a few minutes) and `npm run bench -- --quick` (under a minute of load).
 * Options: `--only=rest-read,lifecycle,fan-out,ws-quoting,memory,multihost,client`, `--profile[=dir]` (run the
 * hosts under `--cpu-prof` and print where their time went while loaded), `--waits[=dir]` (run the
 * lifecycle's hosts with a wait profile and print where each step's wall time went), `--strict`
 * (exit 1 when a target fails). Every run is written to `bench/results/`; a full run of every scenario also
 * replaces the table in `bench/README.md`.
 */
import * as os from "node:os"
import * as path from "node:path"
import { type Mode, runBench, SCENARIOS, type ScenarioId } from "./Bench.js"
import { benchDatabaseUrl } from "./Postgres.js"
import { targetLine } from "./Report.js"
import { updateReadme, writeRun } from "./Results.js"

const args = process.argv.slice(2)
const flag = (name: string) => args.find((a) => a === `--${name}` || a.startsWith(`--${name}=`))
const value = (name: string) => flag(name)?.split("=")[1]

const unknown = args.filter((a) => !/^--(quick|strict|only|profile|waits)(=.*)?$/.test(a))
if (unknown.length > 0) {
  process.stderr.write(`unknown option(s): ${unknown.join(" ")}\n`)
  process.exit(2)
}
const mode: Mode = flag("quick") ? "quick" : "full"
const only = value("only")
  ?.split(",")
  .map((s) => s.trim()) as Array<ScenarioId> | undefined
const bad = only?.filter((id) => !SCENARIOS.includes(id))
if (bad !== undefined && bad.length > 0) {
  process.stderr.write(`unknown scenario(s): ${bad.join(", ")}; known: ${SCENARIOS.join(", ")}\n`)
  process.exit(2)
}
const profileDir =
  flag("profile") === undefined
    ? undefined
    : (value("profile") ?? path.join(os.tmpdir(), "rfq-bench-profiles"))

const waitsDir =
  flag("waits") === undefined
    ? undefined
    : path.resolve(value("waits") ?? path.join(os.tmpdir(), "rfq-bench-waits"))

const record = await runBench({
  mode,
  log: (line) => process.stdout.write(`${line}\n`),
  postgresUrl: benchDatabaseUrl(),
  ...(only === undefined ? {} : { only }),
  ...(profileDir === undefined ? {} : { profileDir }),
  ...(waitsDir === undefined ? {} : { waitsDir })
})
const file = writeRun(record)
const targets = record.scenarios.flatMap((s) => s.targets)
process.stdout.write(`\nSummary (${mode})\n`)
for (const s of record.scenarios)
  if (s.skipped !== undefined) process.stdout.write(`SKIP  ${s.title}: ${s.skipped}\n`)
for (const t of targets) process.stdout.write(`${targetLine(t)}\n`)
process.stdout.write(`results: ${path.relative(process.cwd(), file)}\n`)
if (mode === "full" && only === undefined) {
  updateReadme(record)
  process.stdout.write("bench/README.md: table updated\n")
}
if (flag("strict") && targets.some((t) => !t.pass)) process.exitCode = 1

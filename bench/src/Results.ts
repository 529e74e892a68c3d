import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { HostProfile } from "./BenchContext.js"
import { BENCH_ROOT, REPO_ROOT } from "./Processes.js"
import { formatNumber, type ScenarioResult } from "./Report.js"
import type { HostWaits } from "./WaitAccount.js"

export interface Machine {
  readonly cpu: string
  readonly cores: number
  readonly memoryGiB: number
  readonly os: string
  readonly node: string
  readonly postgres: string
  /** 1-minute load average when the run started: on a shared machine, the context of every figure. */
  readonly loadAverage: number
}

export interface RunRecord {
  readonly startedAt: string
  readonly finishedAt: string
  readonly mode: "full" | "quick" | "smoke"
  readonly commit: string
  readonly machine: Machine
  readonly scenarios: ReadonlyArray<ScenarioResult>
  readonly profiles: ReadonlyArray<HostProfile>
  /** `--waits`: where the lifecycle's wall time went in each of its hosts. */
  readonly waits?: ReadonlyArray<HostWaits>
}

export const describeMachine = (postgres: string | undefined): Machine => ({
  cpu: os.cpus()[0]?.model.trim() ?? "unknown",
  cores: os.cpus().length,
  memoryGiB: Math.round(os.totalmem() / 2 ** 30),
  os: `${os.type()} ${os.release()}`,
  node: process.version,
  postgres: postgres ?? "not available",
  loadAverage: os.loadavg()[0]!
})

export const gitCommit = (): string => {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: REPO_ROOT, encoding: "utf8" }).trim()
  } catch {
    return "unknown"
  }
}

const writeName = (record: RunRecord) => `${record.startedAt.replace(/:/g, "-").replace(/\.\d+Z$/, "Z")}.json`

export const RESULTS_DIR = path.join(BENCH_ROOT, "results")

/** `bench/results/<date>T<time>Z.json`: one file per run, so several runs a day all stay. */
export const writeRun = (record: RunRecord, dir = RESULTS_DIR): string => {
  fs.mkdirSync(dir, { recursive: true })
  const file = path.join(dir, writeName(record))
  fs.writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`)
  return file
}

const START = "<!-- bench:latest:start -->"
const END = "<!-- bench:latest:end -->"

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ")

export const markdownTable = (record: RunRecord): string => {
  const m = record.machine
  const lines = [
    `Latest full run: ${record.startedAt.slice(0, 16).replace("T", " ")} UTC, commit \`${record.commit}\`, ` +
      `on ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}, Node ${m.node}, PostgreSQL ${m.postgres}; ` +
      `1-minute load average at start ${m.loadAverage.toFixed(1)}. Results file: \`bench/results/${path.basename(writeName(record))}\`.`,
    "",
    "| Scenario | Figures (service vs baseline, same run) | Target | Result |",
    "| --- | --- | --- | --- |"
  ]
  for (const s of record.scenarios) {
    const figures = s.skipped === undefined ? s.notes.join("; ") : `skipped: ${s.skipped}`
    const target =
      s.targets.length === 0
        ? "none"
        : s.targets.map((t) => `${t.name} ${t.comparison} ${formatNumber(t.threshold)}${t.unit}`).join("; ")
    const result =
      s.targets.length === 0
        ? "—"
        : s.targets.map((t) => `${t.pass ? "PASS" : "FAIL"} (${formatNumber(t.value)}${t.unit})`).join("; ")
    lines.push(`| ${cell(s.title)} | ${cell(figures)} | ${cell(target)} | ${cell(result)} |`)
  }
  return lines.join("\n")
}

/** Replaces the table between the markers in bench/README.md with this run's. */
export const updateReadme = (record: RunRecord, readme = path.join(BENCH_ROOT, "README.md")): void => {
  const text = fs.readFileSync(readme, "utf8")
  const start = text.indexOf(START)
  const end = text.indexOf(END)
  if (start < 0 || end < start) throw new Error(`${readme} has no ${START} … ${END} section`)
  fs.writeFileSync(
    readme,
    `${text.slice(0, start + START.length)}\n${markdownTable(record)}\n${text.slice(end)}`
  )
}

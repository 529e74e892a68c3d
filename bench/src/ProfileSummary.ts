/**
 * Reads a V8 `.cpuprofile` (written by `node --cpu-prof`) and answers where the time went: self
 * time per function and per package or source area, and inclusive time of the host's and engine's
 * own functions. `npm run bench -- --profile` writes the host's profiles; run this file on one:
 * `node --import tsx bench/src/ProfileSummary.ts <file.cpuprofile> [top]`.
 */
import * as fs from "node:fs"

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly children?: ReadonlyArray<number>
}
export interface CpuProfile {
  readonly startTime: number
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

export interface ProfileShare {
  readonly name: string
  readonly percent: number
}

export interface ProfileSummary {
  readonly totalMs: number
  /** Share of samples outside idle and garbage collection markers. */
  readonly busyPercent: number
  readonly gcPercent: number
  readonly selfByFunction: ReadonlyArray<ProfileShare>
  readonly selfByArea: ReadonlyArray<ProfileShare>
  /** Inclusive time of functions in the project's own sources (packages/*). */
  readonly inclusiveOwn: ReadonlyArray<ProfileShare>
}

/** node_modules/<pkg>, packages/<pkg>/src/<dir>, node: internals, or "(native)". */
const areaOf = (url: string, functionName: string): string => {
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)"
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (modules !== null) return modules[1]!
  const own = /packages\/([^/]+)\/src\/(?:([^/]+)\/)?/.exec(url)
  if (own !== null) return `@rfq/${own[1]}${own[2] === undefined ? "" : `/${own[2]}`}`
  if (url.startsWith("node:")) return "node internals"
  return url.replace(/^file:\/\//, "")
}

const label = (node: ProfileNode): string => {
  const { functionName, url, lineNumber } = node.callFrame
  const file = url
    .replace(/^file:\/\//, "")
    .replace(/^.*node_modules\//, "")
    .replace(/^.*\/packages\//, "packages/")
  return `${functionName || "(anonymous)"} ${file === "" ? "" : `${file}:${lineNumber + 1}`}`.trim()
}

/**
 * `windows` keeps only the samples taken inside them, in microseconds of the monotonic clock that
 * V8 stamps profiles with and `process.hrtime` reads (the same clock in every process of the
 * machine), so the host's start-up (PGlite's initdb, module loading) stays out of the picture.
 */
export const summarizeProfile = (
  profile: CpuProfile,
  top = 15,
  windows?: ReadonlyArray<readonly [number, number]>
): ProfileSummary => {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const selfTime = new Map<number, number>()
  let total = 0
  let at = profile.startTime
  profile.samples.forEach((id, i) => {
    const dt = Math.max(0, profile.timeDeltas[i] ?? 0)
    at += profile.timeDeltas[i] ?? 0
    if (windows !== undefined && !windows.some(([from, to]) => at >= from && at <= to)) return
    selfTime.set(id, (selfTime.get(id) ?? 0) + dt)
    total += dt
  })
  const idle = [...selfTime]
    .filter(([id]) => byId.get(id)?.callFrame.functionName === "(idle)")
    .reduce((s, [, t]) => s + t, 0)
  const gc = [...selfTime]
    .filter(([id]) => byId.get(id)?.callFrame.functionName === "(garbage collector)")
    .reduce((s, [, t]) => s + t, 0)
  const busy = total - idle
  const share = (map: Map<string, number>): Array<ProfileShare> =>
    [...map]
      .map(([name, t]) => ({ name, percent: (100 * t) / busy }))
      .sort((a, b) => b.percent - a.percent)
      .slice(0, top)

  const byFunction = new Map<string, number>()
  const byArea = new Map<string, number>()
  const inclusive = new Map<string, number>()
  for (const [id, t] of selfTime) {
    const node = byId.get(id)!
    if (node.callFrame.functionName === "(idle)") continue
    byFunction.set(label(node), (byFunction.get(label(node)) ?? 0) + t)
    const area = areaOf(node.callFrame.url, node.callFrame.functionName)
    byArea.set(area, (byArea.get(area) ?? 0) + t)
    // Inclusive: each own function on the stack counted once per sample.
    const seen = new Set<string>()
    for (let frameId: number | undefined = id; frameId !== undefined; frameId = parent.get(frameId)) {
      const frame = byId.get(frameId)!
      if (!/\/packages\//.test(frame.callFrame.url)) continue
      const name = label(frame)
      if (seen.has(name)) continue
      seen.add(name)
      inclusive.set(name, (inclusive.get(name) ?? 0) + t)
    }
  }
  return {
    totalMs: total / 1000,
    busyPercent: total === 0 ? 0 : (100 * busy) / total,
    gcPercent: busy === 0 ? 0 : (100 * gc) / busy,
    selfByFunction: share(byFunction),
    selfByArea: share(byArea),
    inclusiveOwn: share(inclusive)
  }
}

export const formatProfile = (summary: ProfileSummary): string => {
  const list = (title: string, rows: ReadonlyArray<ProfileShare>) =>
    [title, ...rows.map((r) => `  ${r.percent.toFixed(1).padStart(5)}%  ${r.name}`)].join("\n")
  return [
    `profile: ${summary.totalMs.toFixed(0)} ms sampled, busy ${summary.busyPercent.toFixed(1)}%, GC ${summary.gcPercent.toFixed(1)}% of busy`,
    list("self time by area (% of busy):", summary.selfByArea),
    list("self time by function (% of busy):", summary.selfByFunction),
    list("inclusive time of the project's own functions (% of busy):", summary.inclusiveOwn)
  ].join("\n")
}

/**
 * The profiles in a directory of one process's profiles, by thread: V8 names each
 * `CPU.<date>.<time>.<pid>.<thread>.<sequence>.cpuprofile`, the main thread being thread 0 (a
 * host on PGlite has its database on another thread; a host run from source has tsx's loader on
 * one). The main thread first.
 */
export const threadProfiles = (dir: string): Array<{ readonly thread: number; readonly file: string }> =>
  fs
    .readdirSync(dir)
    .flatMap((f) => {
      const found = /\.(\d+)\.\d+\.cpuprofile$/.exec(f)
      return found === null ? [] : [{ thread: Number(found[1]), file: `${dir}/${f}` }]
    })
    .sort((a, b) => a.thread - b.thread)

export const nowMicros = (): number => Number(process.hrtime.bigint() / 1000n)

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = process.argv[2]
  if (file === undefined) {
    process.stderr.write("usage: ProfileSummary.ts <file.cpuprofile> [top]\n")
    process.exit(2)
  }
  const profile = JSON.parse(fs.readFileSync(file, "utf8")) as CpuProfile
  process.stdout.write(`${formatProfile(summarizeProfile(profile, Number(process.argv[3] ?? 20)))}\n`)
}

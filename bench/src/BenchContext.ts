import * as fs from "node:fs"
import * as path from "node:path"
import { type BenchHost, type DatabaseChoice, type StartHostOptions, startHost } from "./BenchHost.js"
import {
  type CpuProfile,
  formatProfile,
  threadProfiles,
  nowMicros,
  type ProfileSummary,
  summarizeProfile
} from "./ProfileSummary.js"
import type { Log } from "./Report.js"

export interface HostProfile {
  readonly host: string
  readonly file: string
  readonly summary: ProfileSummary
}

/**
 * What every scenario gets: a log, the PostgreSQL URL when a server answers, and hosts started on
 * demand. `sharedHost` is one host reused by the read, fan-out and quoting scenarios: embedded
 * PGlite (the out-of-the-box configuration) in the full run, PostgreSQL in the quick run (it
 * starts in a third of the time). The lifecycle starts fresh hosts of its own unless told to
 * share.
 */
export class BenchContext {
  private shared: Promise<BenchHost> | undefined
  private readonly started: Array<BenchHost> = []
  private readonly profiling = new Map<
    BenchHost,
    { label: string; dir: string; windows: Array<[number, number]> }
  >()
  readonly profiles: Array<HostProfile> = []

  constructor(
    readonly log: Log,
    readonly postgresUrl: string | undefined,
    /** When set, hosts run with `--cpu-prof` and write their profiles here. */
    readonly profileDir?: string,
    /** The shared host's database (PGlite when PostgreSQL is wanted but does not answer). */
    private readonly sharedDatabase: "pglite" | "postgres" = "pglite"
  ) {}

  get sharedHostKind(): "pglite" | "postgres" {
    return this.sharedDatabase === "postgres" && this.postgresUrl !== undefined ? "postgres" : "pglite"
  }

  /** Starts a host (profiled when asked); `options` adds variables or a shared schema. */
  async startHost(
    database: DatabaseChoice,
    label: string,
    options: Pick<StartHostOptions, "env" | "schema"> = {}
  ): Promise<BenchHost> {
    const started = Date.now()
    // One directory per host: V8 writes one profile per thread (PGlite's own thread, tsx's loader
    // when run from source); each is summarised, the main thread's first (`threadProfiles`).
    const dir =
      this.profileDir === undefined ? undefined : path.resolve(this.profileDir, `host-${label}-${Date.now()}`)
    if (dir !== undefined) fs.mkdirSync(dir, { recursive: true })
    const extra = (process.env.BENCH_HOST_NODE_FLAGS ?? "").split(" ").filter((f) => f !== "")
    const nodeArgs = [...extra, ...(dir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${dir}`])]
    const host = await startHost({ ...options, database, nodeArgs })
    this.started.push(host)
    if (dir !== undefined)
      this.profiling.set(host, { label: `${label} (${database.kind})`, dir, windows: [] })
    this.log(`  host (${label}, ${database.kind}) listening on ${host.url} after ${Date.now() - started} ms`)
    return host
  }

  sharedHost(): Promise<BenchHost> {
    this.shared ??= this.startHost(
      this.sharedHostKind === "postgres" ? { kind: "postgres", url: this.postgresUrl! } : { kind: "pglite" },
      "shared"
    )
    return this.shared
  }

  /** Runs `body` and, when profiling, marks its time as a window of load on `host`. */
  async measured<A>(host: BenchHost, body: () => Promise<A>): Promise<A> {
    const from = nowMicros()
    try {
      return await body()
    } finally {
      this.profiling.get(host)?.windows.push([from, nowMicros()])
    }
  }

  async stopHost(host: BenchHost): Promise<void> {
    const index = this.started.indexOf(host)
    if (index >= 0) this.started.splice(index, 1)
    await host.stop()
    this.readProfile(host)
  }

  private readProfile(host: BenchHost): void {
    const profiling = this.profiling.get(host)
    if (profiling === undefined || profiling.windows.length === 0) return
    const threads = threadProfiles(profiling.dir)
    if (threads.length === 0) {
      this.log(`  no CPU profile was written for the ${profiling.label} host`)
      return
    }
    for (const { thread, file } of threads) {
      const profile = JSON.parse(fs.readFileSync(file, "utf8")) as CpuProfile
      const summary = summarizeProfile(profile, 15, profiling.windows)
      const label = thread === 0 ? profiling.label : `${profiling.label}, thread ${thread}`
      this.profiles.push({ host: label, file, summary })
      this.log(`\nCPU profile of the ${label} host under load (${file}):`)
      this.log(formatProfile(summary))
    }
  }

  async close(): Promise<void> {
    const hosts = this.started.splice(0)
    this.shared = undefined
    await Promise.all(hosts.map((h) => h.stop()))
    for (const host of hosts) this.readProfile(host)
  }
}

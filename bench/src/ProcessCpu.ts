import * as fs from "node:fs"

/**
 * CPU time of processes on this machine, from `/proc` (Linux; elsewhere every figure is
 * undefined): a process by its id, or every process of one command name (`postgres`, whose
 * backends come and go; `nats-server`; `redis-server`). Read before and after a measured run, the
 * difference divided by the operations done is CPU per operation, the figure that stays readable
 * when the cores are shared and throughput is noisy.
 */

/**
 * User and system (kernel) CPU time of process `pid` so far, in ms (100 ticks a second); undefined
 * if unreadable.
 */
const cpuTimesOfPid = (pid: number | undefined): { user: number; system: number } | undefined => {
  if (pid === undefined) return undefined
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    // Fields after the command name (which may hold spaces): utime is the 14th field, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 }
  } catch {
    return undefined
  }
}

/** User plus system CPU time of process `pid` so far, in ms; undefined if unreadable. */
export const cpuMsOfPid = (pid: number | undefined): number | undefined => {
  const times = cpuTimesOfPid(pid)
  return times === undefined ? undefined : times.user + times.system
}

/** System (kernel) CPU time of process `pid` so far, in ms: its `stime`; undefined if unreadable. */
export const systemMsOfPid = (pid: number | undefined): number | undefined => cpuTimesOfPid(pid)?.system

/** The ids of the running processes whose command name (`/proc/<pid>/comm`) is `name`. */
const pidsNamed = (name: string): Array<number> => {
  let entries: Array<string>
  try {
    entries = fs.readdirSync("/proc")
  } catch {
    return []
  }
  const pids: Array<number> = []
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, "utf8").trim() === name) pids.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return pids
}

/** What a CPU reading covers: some processes by id, or every process of a command name. */
export type CpuGroup = { readonly pids: ReadonlyArray<number | undefined> } | { readonly command: string }

/** A group's reading: CPU time so far, in ms, of each of its processes that could be read, by id. */
export type CpuReading = ReadonlyMap<number, number>

/** Each group's CPU time so far, per process; a group none of whose processes could be read is undefined. */
export const readCpu = <K extends string>(
  groups: Readonly<Record<K, CpuGroup>>
): Record<K, CpuReading | undefined> => {
  const out = {} as Record<K, CpuReading | undefined>
  for (const key of Object.keys(groups) as Array<K>) {
    const group = groups[key]
    const pids = "pids" in group ? group.pids : pidsNamed(group.command)
    const reading = new Map<number, number>()
    for (const pid of pids) {
      const ms = cpuMsOfPid(pid)
      if (pid !== undefined && ms !== undefined) reading.set(pid, ms)
    }
    out[key] = reading.size === 0 ? undefined : reading
  }
  return out
}

/**
 * The CPU a group spent between two readings, in ms, process by process: a process in both
 * readings counts its growth; one that started in between (absent before, or its id reused: less
 * CPU than before) counts all it has; one that ended in between counts nothing (its last part is
 * lost, a small undercount). Summing the group before and after instead would take away, from the
 * others' work, all the CPU of every process that ended meanwhile (a PostgreSQL backend of a pool
 * just closed), and report too little or nothing.
 */
export const cpuSpent = (
  before: CpuReading | undefined,
  after: CpuReading | undefined
): number | undefined => {
  if (before === undefined || after === undefined) return undefined
  let spent = 0
  for (const [pid, ms] of after) {
    const was = before.get(pid)
    spent += was === undefined || ms < was ? ms : ms - was
  }
  return spent
}

/** CPU ms per operation of each group between two readings (`cpuSpent`). */
export const cpuPerOperation = <K extends string>(
  before: Record<K, CpuReading | undefined>,
  after: Record<K, CpuReading | undefined>,
  operations: number
): Record<K, number | undefined> => {
  const out = {} as Record<K, number | undefined>
  for (const key of Object.keys(after) as Array<K>) {
    const spent = cpuSpent(before[key], after[key])
    out[key] = spent === undefined || operations <= 0 ? undefined : spent / operations
  }
  return out
}

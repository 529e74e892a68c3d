import * as fs from "node:fs"

/**
 * CPU time of processes on this machine, from `/proc` (Linux; elsewhere every figure is
 * undefined): a process by its id, or every process of one command name (`postgres`, whose
 * backends come and go; `nats-server`; `redis-server`). Read before and after a measured run, the
 * difference divided by the operations done is CPU per operation, the figure that stays readable
 * when the cores are shared and throughput is noisy.
 */

/** User plus system CPU time of process `pid` so far, in ms (100 ticks a second); undefined if unreadable. */
export const cpuMsOfPid = (pid: number | undefined): number | undefined => {
  if (pid === undefined) return undefined
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    // Fields after the command name (which may hold spaces): utime is the 14th field, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return undefined
  }
}

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

/** Each group's CPU time so far, in ms; a group none of whose processes could be read is undefined. */
export const readCpu = <K extends string>(
  groups: Readonly<Record<K, CpuGroup>>
): Record<K, number | undefined> => {
  const out = {} as Record<K, number | undefined>
  for (const key of Object.keys(groups) as Array<K>) {
    const group = groups[key]
    const pids = "pids" in group ? group.pids : pidsNamed(group.command)
    let sum: number | undefined
    for (const pid of pids) {
      const ms = cpuMsOfPid(pid)
      if (ms !== undefined) sum = (sum ?? 0) + ms
    }
    out[key] = sum
  }
  return out
}

/**
 * CPU ms per operation of each group between two readings. A process of a named command that
 * started or ended between them is counted for the part either reading saw (PostgreSQL backends of
 * the measured hosts' pools live for the whole run).
 */
export const cpuPerOperation = <K extends string>(
  before: Record<K, number | undefined>,
  after: Record<K, number | undefined>,
  operations: number
): Record<K, number | undefined> => {
  const out = {} as Record<K, number | undefined>
  for (const key of Object.keys(after) as Array<K>) {
    const a = after[key]
    const b = before[key]
    out[key] =
      a === undefined || b === undefined || operations <= 0 ? undefined : Math.max(0, a - b) / operations
  }
  return out
}

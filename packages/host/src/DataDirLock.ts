import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Data, Effect, type Scope } from "effect"

/**
 * One process per embedded data directory. PGlite takes no lock of its own, and two processes on
 * one directory silently lose acknowledged writes, so the host holds `DATA_DIR/.lock` for its whole
 * life. The file is created atomically with its content (written to a private file, then hard-linked
 * into place, which fails if the lock exists) and names its holder: pid, host name, boot id and the
 * kernel's start time of the process. A lock whose holder is gone (SIGKILL, crash, reboot, or a pid
 * reused by an unrelated process) is stale and taken over; a holder on another host cannot be checked
 * and is respected.
 */
export interface LockHolder {
  readonly pid: number
  readonly hostname: string
  readonly bootId: string | null
  readonly startTicks: string | null
  readonly acquiredAt: string
  readonly token: string
}

export class DataDirLocked extends Data.TaggedError("DataDirLocked")<{
  readonly dir: string
  readonly holder: LockHolder
  readonly message: string
}> {}

export class DataDirLockFailed extends Data.TaggedError("DataDirLockFailed")<{
  readonly dir: string
  readonly message: string
}> {}

export const LOCK_FILE = ".lock"
const BREAKER_FILE = ".lock.breaking"
// Breaking a stale lock takes milliseconds; a breaker file older than this was left by a crash.
const STALE_BREAKER_MS = 10_000
// A lock file with unreadable content younger than this may still be in the middle of a rename.
const UNREADABLE_GRACE_MS = 2_000
const MAX_ATTEMPTS = 20

const readOptional = (file: string): string | null => {
  try {
    return fs.readFileSync(file, "utf8")
  } catch {
    return null
  }
}

const bootId = (): string | null => readOptional("/proc/sys/kernel/random/boot_id")?.trim() ?? null

/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. */
export const processStartTicks = (pid: number): string | null => {
  const stat = readOptional(`/proc/${pid}/stat`)
  if (stat === null) return null
  // The command name (field 2) may contain spaces and parentheses: count fields after the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return fields[19] ?? null
}

const errorCode = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined

const parseHolder = (text: string): LockHolder | null => {
  try {
    const value: unknown = JSON.parse(text)
    if (typeof value !== "object" || value === null) return null
    const v = value as Record<string, unknown>
    if (typeof v.pid !== "number" || !Number.isInteger(v.pid) || v.pid <= 0) return null
    if (typeof v.hostname !== "string" || typeof v.token !== "string") return null
    return {
      pid: v.pid,
      hostname: v.hostname,
      bootId: typeof v.bootId === "string" ? v.bootId : null,
      startTicks: typeof v.startTicks === "string" ? v.startTicks : null,
      acquiredAt: typeof v.acquiredAt === "string" ? v.acquiredAt : "",
      token: v.token
    }
  } catch {
    return null
  }
}

type Liveness = "alive" | "dead" | "unknowable"

export const holderLiveness = (holder: LockHolder): Liveness => {
  if (holder.hostname !== os.hostname()) return "unknowable"
  const currentBoot = bootId()
  if (holder.bootId !== null && currentBoot !== null && holder.bootId !== currentBoot) return "dead"
  // Locks taken by this very process are tracked in memory; a file naming our pid is a leftover
  // of an earlier process that had the same pid (common in containers, where the host is pid 1).
  if (holder.pid === process.pid) return "dead"
  try {
    process.kill(holder.pid, 0)
  } catch (error) {
    if (errorCode(error) === "ESRCH") return "dead"
    // EPERM: the pid exists but belongs to another user; fall through to the start-time check.
  }
  const ticks = processStartTicks(holder.pid)
  if (holder.startTicks !== null && ticks !== null && ticks !== holder.startTicks) return "dead"
  return "alive"
}

const heldHere = new Map<string, string>()

const lockedError = (dir: string, holder: LockHolder): DataDirLocked => {
  const where = holder.hostname === os.hostname() ? "" : ` on host ${holder.hostname}`
  const hint =
    holder.hostname === os.hostname()
      ? ""
      : `; if no process uses it, delete ${path.join(dir, LOCK_FILE)} and start again`
  return new DataDirLocked({
    dir,
    holder,
    message: `data directory ${dir} is locked by another process (pid ${holder.pid}${where})${hint}`
  })
}

/** Creates `file` holding `content`, failing with EEXIST if it exists, never leaving it half-written. */
const createExclusive = (file: string, content: string): void => {
  const scratch = `${file}.${process.pid}.${randomBytes(6).toString("hex")}`
  fs.writeFileSync(scratch, content, { flag: "wx", mode: 0o644 })
  try {
    fs.linkSync(scratch, file)
  } finally {
    fs.rmSync(scratch, { force: true })
  }
}

const removeIfUnchanged = (dir: string, expected: string): void => {
  const lockPath = path.join(dir, LOCK_FILE)
  const breaker = path.join(dir, BREAKER_FILE)
  try {
    createExclusive(breaker, String(process.pid))
  } catch (error) {
    if (errorCode(error) !== "EEXIST") throw error
    const age = Date.now() - (fs.statSync(breaker, { throwIfNoEntry: false })?.mtimeMs ?? Date.now())
    if (age > STALE_BREAKER_MS) fs.rmSync(breaker, { force: true })
    return
  }
  try {
    // Another process may have broken the stale lock and taken a fresh one meanwhile: only the exact
    // stale content is removed.
    if (readOptional(lockPath) === expected) fs.rmSync(lockPath, { force: true })
  } finally {
    fs.rmSync(breaker, { force: true })
  }
}

const sleep = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

/**
 * Takes the lock synchronously; returns the token that `releaseSync` needs. Exposed for tests and
 * for callers outside Effect; the host uses `acquireDataDirLock`.
 */
export const acquireSync = (dir: string): { readonly token: string } | DataDirLocked => {
  const resolved = path.resolve(dir)
  fs.mkdirSync(resolved, { recursive: true })
  const lockPath = path.join(resolved, LOCK_FILE)
  const mine: LockHolder = {
    pid: process.pid,
    hostname: os.hostname(),
    bootId: bootId(),
    startTicks: processStartTicks(process.pid),
    acquiredAt: new Date().toISOString(),
    token: randomBytes(16).toString("hex")
  }
  const ownToken = heldHere.get(resolved)
  if (ownToken !== undefined) return lockedError(resolved, { ...mine, token: ownToken })
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    try {
      createExclusive(lockPath, `${JSON.stringify(mine)}\n`)
      heldHere.set(resolved, mine.token)
      return { token: mine.token }
    } catch (error) {
      if (errorCode(error) !== "EEXIST") throw error
    }
    const text = readOptional(lockPath)
    if (text === null) continue
    const holder = parseHolder(text)
    if (holder === null) {
      const age = Date.now() - (fs.statSync(lockPath, { throwIfNoEntry: false })?.mtimeMs ?? 0)
      if (age > UNREADABLE_GRACE_MS) removeIfUnchanged(resolved, text)
      else sleep(100)
      continue
    }
    if (holderLiveness(holder) !== "dead") return lockedError(resolved, holder)
    removeIfUnchanged(resolved, text)
    sleep(10 * attempt)
  }
  throw new Error(`could not take the lock ${lockPath} after ${MAX_ATTEMPTS} attempts`)
}

/** Removes the lock if it is still the one `token` took. */
export const releaseSync = (dir: string, token: string): void => {
  const resolved = path.resolve(dir)
  const lockPath = path.join(resolved, LOCK_FILE)
  const text = readOptional(lockPath)
  if (text !== null && parseHolder(text)?.token === token) fs.rmSync(lockPath, { force: true })
  if (heldHere.get(resolved) === token) heldHere.delete(resolved)
}

/** Holds the data directory's lock for the lifetime of the surrounding scope. */
export const acquireDataDirLock = (
  dir: string
): Effect.Effect<void, DataDirLocked | DataDirLockFailed, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.try({
      try: () => acquireSync(dir),
      catch: (error) =>
        new DataDirLockFailed({
          dir: path.resolve(dir),
          message: `cannot lock data directory ${path.resolve(dir)}: ${error instanceof Error ? error.message : String(error)}`
        })
    }).pipe(
      Effect.flatMap((result) =>
        result instanceof DataDirLocked ? Effect.fail(result) : Effect.succeed(result)
      )
    ),
    ({ token }) => Effect.sync(() => releaseSync(dir, token))
  ).pipe(Effect.asVoid)

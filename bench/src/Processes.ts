import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const BENCH_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
export const REPO_ROOT = path.resolve(BENCH_ROOT, "..")

/** A message a child sends over the IPC channel: `{type, ...}`. */
export interface ChildMessage {
  readonly type: string
}

export interface Child {
  readonly process: ChildProcess
  /** Resolves with the next message of `type`; rejects when the child exits first or the time is up. */
  readonly next: <M extends ChildMessage = ChildMessage>(type: string, timeoutMs?: number) => Promise<M>
  readonly send: <M extends ChildMessage>(message: M) => void
  readonly output: () => string
  /** Asks the child to end (SIGTERM), then kills it after a grace period; resolves on exit. */
  readonly stop: (graceMs?: number) => Promise<number | null>
}

export interface SpawnOptions {
  readonly env?: Readonly<Record<string, string>>
  /** Extra flags for node itself (`--expose-gc`, `--cpu-prof`, ...). */
  readonly nodeArgs?: ReadonlyArray<string>
  /** Keep only the last this many characters of output (default 64 KiB). */
  readonly keepOutput?: number
  /** Run `script` (compiled JavaScript) with plain node: no source condition, no tsx. */
  readonly compiled?: boolean
}

/**
 * Starts a TypeScript script in its own Node process the way `npm start` runs the host (source
 * condition, tsx), so load always comes from a process other than the one measured. Children talk
 * back over Node's IPC channel; their stdout and stderr are kept for error messages.
 */
export const spawnTs = (script: string, args: ReadonlyArray<string>, options: SpawnOptions = {}): Child => {
  const child = spawn(
    process.execPath,
    options.compiled === true
      ? [...(options.nodeArgs ?? []), script, ...args]
      : [...(options.nodeArgs ?? []), "--conditions=source", "--import", "tsx", script, ...args],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, ...options.env },
      stdio: ["ignore", "pipe", "pipe", "ipc"]
    }
  )
  const keep = options.keepOutput ?? 65_536
  let output = ""
  const collect = (chunk: string) => {
    output = (output + chunk).slice(-keep)
  }
  child.stdout!.setEncoding("utf8").on("data", collect)
  child.stderr!.setEncoding("utf8").on("data", collect)

  const inbox: Array<ChildMessage> = []
  const waiters = new Set<() => void>()
  let exitCode: number | null | undefined
  const exited = new Promise<number | null>((resolve) => {
    child.on("exit", (code, signal) => {
      exitCode = code ?? (signal === null ? null : -1)
      for (const wake of waiters) wake()
      resolve(exitCode)
    })
  })
  child.on("message", (message) => {
    inbox.push(message as ChildMessage)
    for (const wake of waiters) wake()
  })

  const next = <M extends ChildMessage>(type: string, timeoutMs = 120_000) =>
    new Promise<M>((resolve, reject) => {
      const check = () => {
        const index = inbox.findIndex((m) => m.type === type || m.type === "error")
        if (index >= 0) {
          const [message] = inbox.splice(index, 1)
          done()
          if (message!.type === "error") {
            reject(
              new Error(
                `${path.basename(script)}: ${String((message as { message?: unknown }).message)}\n${output}`
              )
            )
          } else resolve(message as M)
        } else if (exitCode !== undefined) {
          done()
          reject(new Error(`${path.basename(script)} exited (${exitCode}) before "${type}"\n${output}`))
        }
      }
      const timer = setTimeout(() => {
        done()
        reject(new Error(`${path.basename(script)}: no "${type}" within ${timeoutMs} ms\n${output}`))
      }, timeoutMs)
      const done = () => {
        clearTimeout(timer)
        waiters.delete(check)
      }
      waiters.add(check)
      check()
    })

  const stop = async (graceMs = 15_000) => {
    if (exitCode !== undefined) return exitCode
    child.kill("SIGTERM")
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs)
    try {
      return await exited
    } finally {
      clearTimeout(timer)
    }
  }

  return {
    process: child,
    next,
    send: (message) => {
      if (child.connected) child.send(message)
    },
    output: () => output,
    stop
  }
}

export const childScript = (name: string): string => path.join(BENCH_ROOT, "src", "children", name)

/**
 * Runs a load child with its JSON configuration and resolves with its `result` message (rejects
 * on its `error`, its exit, or after `budgetMs`); the child is stopped either way.
 */
export const childResult = async <R extends ChildMessage>(
  script: string,
  config: unknown,
  budgetMs: number
): Promise<R> => {
  const child = spawnTs(childScript(script), [JSON.stringify(config)])
  try {
    return await child.next<R>("result", budgetMs)
  } finally {
    await child.stop()
  }
}

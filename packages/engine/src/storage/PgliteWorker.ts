import { Worker } from "node:worker_threads"
import type { PgliteSession } from "./PgliteSession.js"
import {
  PgliteWorkerError,
  type WorkerReply,
  type WorkerRequest,
  type WorkerStart
} from "./PgliteWorkerProtocol.js"

/**
 * A PGlite session on a thread of its own (issue 15). PGlite's backend is PostgreSQL compiled to
 * WebAssembly: on the caller's thread a statement blocks its event loop for as long as it runs
 * (about 0.4 ms for a machine step on a two-core AMD EPYC VM, half of a quote update's CPU), and
 * everything else the host does waits. Here the caller posts the statement and goes on; the worker
 * (`PgliteWorkerMain.ts`) runs it on another core and posts the rows back.
 *
 * The thread is referenced only while a request is in flight, so an idle session never keeps the
 * process alive. If the thread stops (a crash in the backend), every request in flight and every
 * later one fails as a terminated connection, which the host answers as a database that is not
 * reachable (503).
 */

/** Where the worker's entry is: beside this file, as TypeScript when run from source. */
const workerEntry = (): URL =>
  import.meta.url.endsWith(".ts")
    ? new URL("./pgliteWorkerSource.mjs", import.meta.url)
    : new URL("./PgliteWorkerMain.js", import.meta.url)

/** The flags kept for the worker, and which of them take a value (`--flag value` or `--flag=value`). */
const KEPT_FLAGS = new Set([
  "--conditions",
  "-C",
  "--enable-source-maps",
  "--cpu-prof",
  "--cpu-prof-dir",
  "--cpu-prof-interval"
])
const VALUED_FLAGS = new Set(["--conditions", "-C", "--cpu-prof-dir", "--cpu-prof-interval"])

export const workerFlags = (argv: ReadonlyArray<string>): Array<string> => {
  const kept: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!
    const name = flag.split("=", 1)[0]!
    if (!KEPT_FLAGS.has(name)) continue
    kept.push(flag)
    if (!flag.includes("=") && VALUED_FLAGS.has(name) && i + 1 < argv.length) kept.push(argv[++i]!)
  }
  return kept
}

interface Pending {
  readonly resolve: (value: unknown) => void
  readonly reject: (error: Error) => void
}

/** A session on its own thread; `stopThread` ends the thread as a crash would (for tests). */
export interface WorkerSession extends PgliteSession {
  readonly stopThread: () => Promise<void>
}

export interface WorkerSessionOptions {
  readonly dataDir: string
  readonly loadDataDir?: Blob | undefined
}

/** Starts the thread and opens the database on it; fails as PGlite's open would. */
export const openWorkerSession = async (options: WorkerSessionOptions): Promise<WorkerSession> => {
  const loadDataDir = options.loadDataDir === undefined ? undefined : await options.loadDataDir.arrayBuffer()
  const start: WorkerStart = { dataDir: options.dataDir, loadDataDir }
  const worker = new Worker(workerEntry(), {
    // Only the caller's flags a worker may take and this one needs: how modules resolve, source
    // maps, and a CPU profile of its own when the caller is profiled. Others (`--input-type`, the
    // caller's `--import`s) are not for this thread or are refused in one.
    execArgv: workerFlags(process.execArgv),
    workerData: start,
    transferList: loadDataDir === undefined ? [] : [loadDataDir]
  })
  const pending = new Map<number, Pending>()
  let nextId = 1
  let stopped: Error | undefined
  let closed = false

  const stop = (reason: Error) => {
    if (stopped !== undefined) return
    stopped = reason
    closed = true
    for (const p of pending.values()) p.reject(reason)
    pending.clear()
  }
  worker.on("message", (reply: WorkerReply) => {
    const p = pending.get(reply.id)
    if (p === undefined) return
    pending.delete(reply.id)
    if (pending.size === 0) worker.unref()
    if ("error" in reply) p.reject(new PgliteWorkerError(reply.error))
    else p.resolve(reply.result)
  })
  worker.on("error", (error) => stop(terminated(`it failed: ${error.message}`)))
  worker.on("exit", (code) => stop(terminated(`it exited with code ${code}`)))

  const call = <A>(id: number, request?: WorkerRequest): Promise<A> => {
    if (stopped !== undefined) return Promise.reject(stopped)
    if (pending.size === 0) worker.ref()
    return new Promise<A>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject })
      if (request === undefined) return
      try {
        worker.postMessage(request)
      } catch (error) {
        // A parameter that cannot be cloned: nothing was sent.
        pending.delete(id)
        if (pending.size === 0) worker.unref()
        reject(error)
      }
    })
  }
  const send = <A>(request: DistributiveOmit<WorkerRequest, "id">): Promise<A> => {
    const id = nextId++
    return call<A>(id, { ...request, id } as WorkerRequest)
  }

  try {
    await call<null>(0)
  } catch (error) {
    await worker.terminate()
    throw error
  }
  worker.unref()

  return {
    dataDir: options.dataDir,
    ordered: true,
    get closed() {
      return closed
    },
    query: (text, params, queryOptions) => send({ op: "query", text, params, options: queryOptions }),
    exec: (text, queryOptions) => send({ op: "exec", text, options: queryOptions }),
    dumpDataDir: async () => new Blob([await send<ArrayBuffer>({ op: "dump" })]),
    stopThread: async () => {
      await worker.terminate()
    },
    close: async () => {
      if (closed) return
      try {
        await send<null>({ op: "close" })
      } finally {
        closed = true
        await worker.terminate()
      }
    }
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

/** The session's thread is gone: matches a terminated connection (`SqlErrors.isDatabaseUnreachable`). */
const terminated = (why: string): Error =>
  new Error(`Connection terminated: the PGlite thread stopped (${why})`)

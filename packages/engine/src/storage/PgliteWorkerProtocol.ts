import type { SessionQueryOptions } from "./PgliteSession.js"

/**
 * The messages between a PGlite worker thread (`PgliteWorkerMain.ts`) and its session on the
 * caller's side (`PgliteWorker.ts`). Everything here is plain data: it crosses threads by
 * structured clone.
 */

/** What the thread is started with. */
export interface WorkerStart {
  readonly dataDir: string
  /** A tarball to start an empty directory from (`loadDataDir`). */
  readonly loadDataDir?: ArrayBuffer | undefined
}

export type WorkerRequest =
  | {
      readonly id: number
      readonly op: "query"
      readonly text: string
      readonly params: ReadonlyArray<unknown>
      readonly options: SessionQueryOptions
    }
  | { readonly id: number; readonly op: "exec"; readonly text: string; readonly options: SessionQueryOptions }
  | { readonly id: number; readonly op: "dump" | "close" }

/** The answer to request `id`; id 0 answers the start (opened, or why not). */
export type WorkerReply =
  | { readonly id: number; readonly result: unknown }
  | { readonly id: number; readonly error: WireError }

/** An error as it crosses: its message and name, and every field of pg-protocol's `DatabaseError`. */
export interface WireError {
  readonly name: string
  readonly message: string
  readonly fields: Readonly<Record<string, string | number | undefined>>
}

// pg-protocol's DatabaseError: what callers read (`code`, `constraint`) and what a log shows.
const FIELDS = [
  "severity",
  "code",
  "detail",
  "hint",
  "position",
  "internalPosition",
  "internalQuery",
  "where",
  "schema",
  "table",
  "column",
  "dataType",
  "constraint",
  "routine"
] as const

export const wireError = (error: unknown): WireError => {
  if (typeof error !== "object" || error === null)
    return { name: "Error", message: String(error), fields: {} }
  const source = error as Record<string, unknown>
  const fields: Record<string, string | number | undefined> = {}
  for (const field of FIELDS) {
    const value = source[field]
    if (typeof value === "string" || typeof value === "number") fields[field] = value
  }
  return {
    name: typeof source.name === "string" ? source.name : "Error",
    message: typeof source.message === "string" ? source.message : String(error),
    fields
  }
}

/** The error a statement on the worker failed with, on the caller's side: same message, name and fields. */
export class PgliteWorkerError extends Error {
  declare readonly code?: string
  declare readonly constraint?: string
  constructor(wire: WireError) {
    super(wire.message)
    this.name = wire.name
    Object.assign(this, wire.fields)
  }
}

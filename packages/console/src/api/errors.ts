/**
 * Any failure as the user should read it: the service's status and message verbatim, and its
 * reasons one per line. An `RfqError` carries them (REST `reason`, JSON-RPC `data.reason`); a
 * failure that never reached the service says so.
 */
export interface ShownError {
  readonly title: string
  readonly reasons: ReadonlyArray<string>
}

const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const stringsOf = (u: unknown): ReadonlyArray<string> =>
  Array.isArray(u) ? u.filter((r): r is string => typeof r === "string") : []

export const reasonsOf = (reason: unknown): ReadonlyArray<string> =>
  Array.isArray(reason) ? stringsOf(reason) : isRecord(reason) ? stringsOf(reason["reason"]) : []

export const showError = (error: unknown): ShownError => {
  if (isRecord(error) && typeof error["message"] === "string" && typeof error["status"] === "number") {
    const status = error["status"]
    return {
      title: status === 0 ? `service not reached: ${error["message"]}` : `${status} ${error["message"]}`,
      reasons: reasonsOf(error["reason"])
    }
  }
  if (error instanceof Error) return { title: error.message, reasons: [] }
  return { title: String(error), reasons: [] }
}

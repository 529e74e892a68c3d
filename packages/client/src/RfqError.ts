/**
 * A refused or failed call, as a value: the HTTP status, the service's error code and its message
 * verbatim, whichever door the call went through. REST answers `{code, message, reason?}` (the
 * spec's error body, `code` being the status); JSON-RPC answers `{code, message, data}` with the
 * status in `data.status` for an operation's error (docs/websocket.md, "Errors"). A caller can
 * therefore match on `status` and `message` the same way for both.
 *
 * Failures that never reached the service (no connection, a dropped socket before the answer)
 * have status 0 and a string code (`network`, `disconnected`, `closed`, `timeout`): the call may
 * or may not have run, and only the caller knows whether repeating it is safe.
 */
export class RfqError extends Error {
  override readonly name = "RfqError"
  constructor(
    /** HTTP status (REST), or the status the JSON-RPC error stands for; 0 when the service was not reached. */
    readonly status: number,
    /** The spec's error code: the REST body's `code`, or the JSON-RPC `error.code`. */
    readonly code: string | number,
    /** The service's message, verbatim. */
    message: string,
    /** REST's `reason` list, or JSON-RPC's `data` (whose `reason` is the same list). */
    readonly reason?: unknown
  ) {
    super(message)
  }

  /** The reasons as a list of strings (REST `reason`, JSON-RPC `data.reason`), empty when none. */
  get reasons(): ReadonlyArray<string> {
    const list = Array.isArray(this.reason)
      ? this.reason
      : isRecord(this.reason) && Array.isArray(this.reason["reason"])
        ? this.reason["reason"]
        : []
    return list.filter((r): r is string => typeof r === "string")
  }
}

export const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** The JSON-RPC codes of the contract and the statuses they stand for (docs/websocket.md, "Errors"). */
const statusOfRpcCode: Readonly<Record<number, number>> = {
  [-32700]: 400,
  [-32600]: 400,
  [-32601]: 404,
  [-32602]: 400,
  [-32001]: 401,
  [-32003]: 403,
  [-32004]: 404,
  [-32603]: 500
}

export const RATE_LIMIT_MESSAGE = "Rate limit exceeded"

/** A REST error answer: the spec's body when there is one, else the status and the body's text. */
export const restError = (status: number, body: unknown, text: string): RfqError => {
  if (isRecord(body) && typeof body["message"] === "string") {
    const code = typeof body["code"] === "number" || typeof body["code"] === "string" ? body["code"] : status
    return new RfqError(status, code, body["message"], body["reason"])
  }
  return new RfqError(status, status, text.trim() === "" ? `HTTP ${status}` : text.trim())
}

/** A JSON-RPC `error` object: its status from `data.status` when the service gave one, else from the code. */
export const rpcError = (error: unknown): RfqError => {
  if (!isRecord(error)) return new RfqError(500, -32603, "malformed JSON-RPC error", error)
  const code = typeof error["code"] === "number" ? error["code"] : -32603
  const message = typeof error["message"] === "string" ? error["message"] : "unknown error"
  const data = error["data"]
  const status =
    isRecord(data) && typeof data["status"] === "number"
      ? data["status"]
      : code === -32603 && message === RATE_LIMIT_MESSAGE
        ? 429
        : (statusOfRpcCode[code] ?? 500)
  return new RfqError(status, code, message, data)
}

/** A failure before any answer: the service was not reached or the connection went away. */
export const transportError = (
  code: "network" | "disconnected" | "closed" | "timeout",
  message: string,
  cause?: unknown
): RfqError => new RfqError(0, code, message, cause)

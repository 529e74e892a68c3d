import * as path from "node:path"
import { Either, Schema } from "effect"

/**
 * The admin socket's protocol: a Unix socket in the data directory, one JSON object per line each
 * way. The admin process sends `{"args": [...]}` (its command line, words as typed) and reads one
 * answer: `{"ok": true, "output": "..."}` or `{"ok": false, "error": "..."}`. The host parses the
 * words with the command line's own table, so it takes nothing the command line would refuse.
 */

export const ADMIN_SOCKET_FILE = "admin.sock"

export const adminSocketPath = (dataDir: string): string =>
  path.join(path.resolve(dataDir), ADMIN_SOCKET_FILE)

/** Longest request line the host reads (a command line is a few hundred bytes). */
export const MAX_REQUEST_BYTES = 64 * 1024

/**
 * A Unix socket's path must fit `sun_path` (108 bytes on Linux, with the terminating NUL); a data
 * directory too deep for it gets no socket, and the admin command says so.
 */
export const MAX_SOCKET_PATH_BYTES = 107

export const AdminRequest = Schema.Struct({ args: Schema.Array(Schema.String) })

export const AdminAnswer = Schema.Union(
  Schema.Struct({ ok: Schema.Literal(true), output: Schema.String }),
  Schema.Struct({ ok: Schema.Literal(false), error: Schema.String })
)
export type AdminAnswer = typeof AdminAnswer.Type

const decodeRequest = Schema.decodeUnknownEither(Schema.parseJson(AdminRequest))
const decodeAnswer = Schema.decodeUnknownEither(Schema.parseJson(AdminAnswer))

/** The words of a request line, or undefined when the line is not a request. */
export const readRequest = (line: string): ReadonlyArray<string> | undefined =>
  Either.getOrUndefined(Either.map(decodeRequest(line), (r) => r.args))

export const readAnswer = (line: string): AdminAnswer | undefined => Either.getOrUndefined(decodeAnswer(line))

export const line = (value: unknown): string => `${JSON.stringify(value)}\n`

import * as net from "node:net"
import { Data, Effect } from "effect"
import { type AdminAnswer, adminSocketPath, line, readAnswer } from "./AdminProtocol.js"

/**
 * The admin command's side of the admin socket: one request, one answer. The host runs the command
 * on its database; an unreachable socket (a host still starting or one that could not open it) is
 * said in one line, and nothing was done.
 */

/**
 * No answer. `sent`: the request may have reached the host, so the command may have been done;
 * otherwise nothing was, and `message` is the reason only (the caller says where and what to do).
 */
export class HostUnreachable extends Data.TaggedError("HostUnreachable")<{
  readonly message: string
  readonly sent: boolean
}> {}

/** Long enough for a key rotation over many rows; a host that says nothing by then is stuck. */
const ANSWER_TIMEOUT_MS = 120_000

export const askHost = (
  dataDir: string,
  args: ReadonlyArray<string>
): Effect.Effect<AdminAnswer, HostUnreachable> =>
  Effect.async<AdminAnswer, HostUnreachable>((resume) => {
    const file = adminSocketPath(dataDir)
    const socket = net.createConnection({ path: file, allowHalfOpen: true })
    let received = ""
    let settled = false
    const settle = (result: Effect.Effect<AdminAnswer, HostUnreachable>) => {
      if (settled) return
      settled = true
      socket.destroy()
      resume(result)
    }
    let sent = false
    const unreachable = (message: string) => settle(Effect.fail(new HostUnreachable({ message, sent })))
    socket.setEncoding("utf8")
    socket.setTimeout(ANSWER_TIMEOUT_MS, () =>
      unreachable(
        `the host did not answer on ${file} within ${ANSWER_TIMEOUT_MS / 1000} s; check its log before trying again (the command may have been done)`
      )
    )
    socket.on("connect", () => {
      sent = true
      socket.end(line({ args }))
    })
    socket.on("data", (chunk: string) => {
      received += chunk
      const newline = received.indexOf("\n")
      if (newline === -1) return
      const answer = readAnswer(received.slice(0, newline))
      if (answer === undefined) unreachable(`the host's answer on ${file} is not an admin answer`)
      else settle(Effect.succeed(answer))
    })
    socket.on("error", (error: NodeJS.ErrnoException) =>
      unreachable(
        error.code === "ENOENT"
          ? "no socket there"
          : error.code === "ECONNREFUSED"
            ? "connection refused"
            : `cannot reach the host on ${file}: ${error.message}`
      )
    )
    socket.on("close", () => unreachable(`the host closed ${file} without answering (did it stop?)`))
    return Effect.sync(() => socket.destroy())
  })

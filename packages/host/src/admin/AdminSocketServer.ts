import * as fs from "node:fs"
import * as net from "node:net"
import { Effect, type Scope } from "effect"
import {
  type AdminAnswer,
  adminSocketPath,
  line,
  MAX_REQUEST_BYTES,
  MAX_SOCKET_PATH_BYTES,
  readRequest
} from "./AdminProtocol.js"

/**
 * The host's side of the admin socket (`AdminProtocol.ts`): while a host holds an embedded data
 * directory nothing else may open it (`DataDirLock.ts`), so provisioning reaches it through the host.
 *
 * Who may connect is who may write the socket file: it is created with mode 0600 (the umask is
 * narrowed around the bind, which is synchronous, then the mode set again), so only the host's user
 * (and root), the same users that can read the data directory's key files anyway. The host holds
 * the lock, so a socket file already there is a dead host's and is replaced. Requests are read a
 * line at a time and answered in order; a line over `MAX_REQUEST_BYTES` or one that is not a
 * request (or text left without its newline when the admin closes its side) is answered with an
 * error and the connection closed. An idle connection is dropped after a minute. The socket file
 * is removed when the host stops.
 */

const IDLE_MS = 60_000

export interface AdminSocketOptions {
  readonly dataDir: string
  /** Runs one command line; never rejects (a failure is an `{ok: false}` answer). */
  readonly handle: (args: ReadonlyArray<string>) => Promise<AdminAnswer>
}

const serveConnection = (socket: net.Socket, handle: AdminSocketOptions["handle"]) => {
  socket.setEncoding("utf8")
  socket.setTimeout(IDLE_MS, () => socket.destroy())
  socket.on("error", () => socket.destroy())
  let buffered = ""
  let queue = Promise.resolve()
  const refuse = (error: string) => {
    buffered = ""
    socket.end(line({ ok: false, error }))
  }
  socket.on("data", (chunk: string) => {
    if (socket.writableEnded) return
    buffered += chunk
    let newline = buffered.indexOf("\n")
    while (newline !== -1) {
      const text = buffered.slice(0, newline)
      buffered = buffered.slice(newline + 1)
      const args = readRequest(text)
      if (args === undefined) return refuse('expected one JSON object per line: {"args": ["desk", "list"]}')
      queue = queue
        .then(() => handle(args))
        .catch((error: unknown): AdminAnswer => ({ ok: false, error: `the host failed: ${String(error)}` }))
        .then((answer) => {
          if (!socket.destroyed && !socket.writableEnded) socket.write(line(answer))
        })
      newline = buffered.indexOf("\n")
    }
    if (Buffer.byteLength(buffered) > MAX_REQUEST_BYTES)
      refuse(`a request line is at most ${MAX_REQUEST_BYTES} bytes`)
  })
  // The admin may close its side once it has sent its line: the answers still go out, then this side.
  // Text after the last newline is a request cut short (or one written without its newline): it is
  // not run, but answered, so the sender learns why nothing happened.
  socket.on("end", () => {
    const unterminated = buffered.trim() !== ""
    void queue.then(() => {
      if (socket.writableEnded) return
      if (unterminated) refuse("the request line must end with a newline; nothing was run")
      else socket.end()
    })
  })
}

/** Listens on `DATA_DIR/admin.sock` until the scope closes. A socket that cannot be opened is logged, never fatal. */
export const serveAdminSocket = (options: AdminSocketOptions): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const file = adminSocketPath(options.dataDir)
    if (Buffer.byteLength(file) > MAX_SOCKET_PATH_BYTES) {
      return yield* Effect.logWarning(
        `no admin socket: ${file} is longer than ${MAX_SOCKET_PATH_BYTES} bytes; stop the host to run npm run admin, or use a shorter DATA_DIR`
      )
    }
    const connections = new Set<net.Socket>()
    const server = net.createServer({ allowHalfOpen: true }, (socket) => {
      connections.add(socket)
      socket.on("close", () => connections.delete(socket))
      serveConnection(socket, options.handle)
    })
    const failure = yield* Effect.async<Error | undefined>((resume) => {
      const failed = (error: Error) => resume(Effect.succeed(error))
      server.once("error", failed)
      try {
        fs.rmSync(file, { force: true })
        const umask = process.umask(0o177)
        try {
          server.listen(file, () => {
            server.off("error", failed)
            // Accept errors (EMFILE) must not end the host; the connection is simply lost.
            server.on("error", () => {})
            try {
              fs.chmodSync(file, 0o600)
              resume(Effect.succeed(undefined))
            } catch (error) {
              server.close()
              resume(Effect.succeed(error instanceof Error ? error : new Error(String(error))))
            }
          })
        } finally {
          process.umask(umask)
        }
      } catch (error) {
        server.off("error", failed)
        resume(Effect.succeed(error instanceof Error ? error : new Error(String(error))))
      }
    })
    if (failure !== undefined)
      return yield* Effect.logWarning(`no admin socket at ${file}: ${failure.message}`)
    yield* Effect.addFinalizer(() =>
      Effect.async<void>((resume) => {
        for (const socket of connections) socket.destroy()
        server.close(() => resume(Effect.void))
      }).pipe(Effect.ensuring(Effect.sync(() => fs.rmSync(file, { force: true }))))
    )
    yield* Effect.logInfo(`admin socket at ${file}`)
  })

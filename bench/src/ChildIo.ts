import type { ChildMessage } from "./Processes.js"

/** The child's side of `spawnTs`: its JSON configuration, and messages to and from the parent. */
export const childConfig = <T>(): T => JSON.parse(process.argv[2] ?? "{}") as T

/** Sends a message; resolves once it has been handed to the channel. */
export const tell = <M extends ChildMessage>(message: M): Promise<void> =>
  new Promise((resolve) => {
    if (process.send === undefined || !process.connected) return resolve()
    process.send(message, undefined, undefined, () => resolve())
  })

/** Resolves with the next message of `type` from the parent. */
export const heard = <M extends ChildMessage = ChildMessage>(type: string): Promise<M> =>
  new Promise((resolve) => {
    const listener = (message: unknown) => {
      if ((message as ChildMessage).type !== type) return
      process.off("message", listener)
      resolve(message as M)
    }
    process.on("message", listener)
  })

/**
 * Runs a child's body: a failure is reported to the parent as an `error` message; the process
 * ends when the body settles (or lingers as a server until the parent stops it, if `serve`).
 */
export const runChild = (body: () => Promise<void>, options: { readonly serve?: boolean } = {}): void => {
  // A load generator may still hold sockets the server keeps open; once it has reported, it is done.
  const end = (code: number) => {
    process.exitCode = code
    setTimeout(() => process.exit(code), 100).unref()
    if (process.connected) process.disconnect()
  }
  body().then(
    () => {
      if (!options.serve) end(0)
    },
    async (error: unknown) => {
      await tell({
        type: "error",
        message: error instanceof Error ? (error.stack ?? error.message) : String(error)
      })
      end(1)
    }
  )
  process.on("SIGTERM", () => process.exit(0))
}

/**
 * Waits `durationMs`, then on until `done()` holds (at least one result to report on a slow
 * machine), but never longer than `durationMs + graceMs`: every load loop stays bounded in time.
 */
export const measureWindow = async (
  durationMs: number,
  done: () => boolean,
  graceMs = 120_000
): Promise<void> => {
  await new Promise((r) => setTimeout(r, durationMs))
  const deadline = Date.now() + graceMs
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
}

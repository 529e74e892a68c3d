import type { RpcConnection } from "./RpcConnection.js"

/** The session's connection once it is open; each loss replaces it with a new one to wait for. */
export interface Opened {
  readonly promise: Promise<RpcConnection>
  readonly resolve: (connection: RpcConnection) => void
  readonly reject: (error: unknown) => void
}

export const deferred = (): Opened => {
  let resolve!: (connection: RpcConnection) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<RpcConnection>((res, rej) => {
    resolve = res
    reject = rej
  })
  // A session nobody calls must not report an unhandled rejection when it ends.
  promise.catch(() => {})
  return { promise, resolve, reject }
}

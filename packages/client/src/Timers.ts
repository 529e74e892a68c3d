/**
 * The clock and timers the client runs on: the platform's by default, a test's when given. A timer
 * that only renews a token does not keep a Node process alive (`unref` where the platform has
 * it); an open WebSocket does, as it should.
 */
export interface Timers {
  readonly now: () => number
  readonly setTimeout: (run: () => void, delayMs: number) => ReturnType<typeof setTimeout>
  readonly clearTimeout: (timer: ReturnType<typeof setTimeout>) => void
}

export const platformTimers: Timers = {
  now: () => Date.now(),
  setTimeout: (run, delayMs) => {
    const timer = globalThis.setTimeout(run, delayMs)
    const handle = timer as unknown as { unref?: () => void }
    if (typeof handle.unref === "function") handle.unref()
    return timer
  },
  clearTimeout: (timer) => globalThis.clearTimeout(timer)
}

/** Resolves after `delayMs`, holding the process open meanwhile (someone is waiting on it). */
export const sleep = (delayMs: number): Promise<void> =>
  new Promise((resolve) => globalThis.setTimeout(resolve, delayMs))

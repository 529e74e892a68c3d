/**
 * Calls held to the end of the event loop's turn and then made together, in the order they came.
 *
 * Why: the NATS client writes what is sent in one synchronous run of code as one socket write (it
 * flushes in a microtask), but every committed step is published from its own callback (the
 * database's answer to its statement), between which Node runs the microtasks: under load each
 * step became a socket write of its own, a wake-up of the NATS server, and an acknowledgement
 * read on its own. Held to `setImmediate`, the steps committed in one turn of the loop go out as
 * one write. A step waits at most for the rest of the turn it was committed in; its command's
 * answer never waits for the stream (`Events.publishStep`).
 */
/** `call`, made at the end of this turn with the others queued in it; its promise's outcome. */
export type TurnBatch = <A>(call: () => PromiseLike<A>) => Promise<A>

export const makeTurnBatch = (): TurnBatch => {
  let queued: Array<() => void> = []
  const flush = () => {
    const due = queued
    queued = []
    for (const run of due) run()
  }
  return <A>(call: () => PromiseLike<A>): Promise<A> =>
    new Promise<A>((resolve, reject) => {
      if (queued.length === 0) setImmediate(flush)
      queued.push(() => {
        try {
          call().then(resolve, reject)
        } catch (e) {
          reject(e)
        }
      })
    })
}

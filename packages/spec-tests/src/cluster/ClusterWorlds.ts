import { createRfq, legPricesAtMark, getRfq, rfqBody } from "../Fixtures.js"
import { openWorld, type World } from "../World.js"
import type { ClusterProcesses } from "./ClusterProcesses.js"

/**
 * The demo parties logged in on every host of a cluster, one `World` per host (the same tokens are
 * valid on every host: one JWT secret), for checks that choose which host each request goes to.
 */
export const openWorlds = async (cluster: ClusterProcesses): Promise<ReadonlyArray<World>> => {
  const worlds: Array<World> = []
  for (let i = 0; i < cluster.size; i++) worlds.push(await openWorld(cluster.baseUrl(i)))
  return worlds
}

/** A quote body at the mark for an RFQ of `rfqBody`'s structure (legs priced once, reused). */
export const markQuote = async (w: World, rfqId: number) => {
  const rfq = await getRfq(w, "maker1", rfqId)
  return { legs: await legPricesAtMark(w, "maker1", rfq, "DBT") }
}

/** Creates an RFQ through `w` and answers its id. */
export const newRfq = (w: World, overrides: Parameters<typeof rfqBody>[2] = {}) =>
  createRfq(w, "taker", rfqBody(w, "taker", overrides))

/** Whether a status is a server error (never acceptable, whatever the race). */
export const isServerError = (status: number) => status >= 500

/**
 * Runs `count` tasks with at most `inFlight` at a time (a client's connection pool), answering
 * their results in order.
 */
export const pooled = async <A>(
  count: number,
  inFlight: number,
  task: (index: number) => Promise<A>
): Promise<Array<A>> => {
  const results: Array<A> = new Array(count)
  let next = 0
  const worker = async () => {
    while (next < count) {
      const index = next++
      results[index] = await task(index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, worker))
  return results
}

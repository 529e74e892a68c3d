import { sleep } from "../Fixtures.js"
import type { RpcSession } from "../RpcSession.js"
import { heardOn } from "./VenueWave.js"

/**
 * What sessions heard, for the host-kill check (`HostKill.ts`): each RFQ's closing and each
 * quote's creation must be heard exactly once by each session that listened throughout, whichever
 * host committed the step and whether its owner died before publishing it.
 */

/** Something a session must hear once: how it is named in a finding, and how often `s` heard it. */
export interface HeardOnce {
  readonly what: string
  readonly count: (s: RpcSession) => number
}

/** The statuses an RFQ closes with, as `rfq.taker` tells them. */
const CLOSED = new Set(["filled", "filledPartial", "expired", "cancelled"])

/** RFQ `rfqId` closing, on `rfq.taker`. */
export const rfqClosing = (rfqId: number): HeardOnce => ({
  what: `RFQ ${rfqId} closing`,
  count: (s) =>
    heardOn(s, "rfq.taker").filter((n) => {
      const data = n.data as { rfqId?: unknown; status?: unknown }
      return data.rfqId === rfqId && typeof data.status === "string" && CLOSED.has(data.status)
    }).length
})

/** Quote `quoteId` created, on `rfq_quote.taker`. */
export const quoteCreation = (quoteId: number): HeardOnce => ({
  what: `quote ${quoteId} created`,
  count: (s) =>
    heardOn(s, "rfq_quote.taker").filter((n) => {
      const data = n.data as { rfqQuoteId?: unknown; event?: unknown }
      return data.rfqQuoteId === quoteId && data.event === "created"
    }).length
})

/**
 * Each of `things` must have been heard exactly once by each session (waits until every one was
 * heard at least once, or 30 s, then a moment for a second copy, were there one, to arrive).
 */
export const checkHeardOnce = async (
  sessions: ReadonlyArray<RpcSession>,
  things: ReadonlyArray<HeardOnce>,
  notes: Array<string>
): Promise<{ checked: number; misheard: number }> => {
  const allHeard = () => things.every((t) => sessions.every((s) => t.count(s) > 0))
  for (const until = Date.now() + 30_000; !allHeard() && Date.now() < until; ) await sleep(200)
  await sleep(500)
  let misheard = 0
  for (const thing of things)
    sessions.forEach((s, i) => {
      const n = thing.count(s)
      if (n !== 1) {
        misheard++
        notes.push(`${thing.what}: heard ${n} times by the session on surviving host ${i}`)
      }
    })
  return { checked: things.length * sessions.length, misheard }
}

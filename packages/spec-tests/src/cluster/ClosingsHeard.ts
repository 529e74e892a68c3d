import { sleep } from "../Fixtures.js"
import type { RpcSession } from "../RpcSession.js"
import { heardOn } from "./VenueWave.js"

/**
 * What sessions heard of RFQs closing, for the host-kill check (`HostKill.ts`): each RFQ must be
 * heard to close exactly once by each session that listened throughout, whichever host committed
 * the closing step and whether its owner died before publishing it.
 */

/** The statuses an RFQ closes with, as `rfq.taker` tells them. */
const CLOSED = new Set(["filled", "filledPartial", "expired", "cancelled"])

/** How many times `session` heard RFQ `rfqId` close on `rfq.taker`. */
const closingsHeard = (session: RpcSession, rfqId: number) =>
  heardOn(session, "rfq.taker").filter((n) => {
    const data = n.data as { rfqId?: unknown; status?: unknown }
    return data.rfqId === rfqId && typeof data.status === "string" && CLOSED.has(data.status)
  }).length

/**
 * After the round's RFQs have all passed their expiry: each must have been heard to close exactly
 * once by each survivor's session (waits until every one was heard at least once, or 30 s).
 */
export const checkClosings = async (
  sessions: ReadonlyArray<RpcSession>,
  rfqIds: ReadonlyArray<number>,
  notes: Array<string>
): Promise<{ checked: number; misheard: number }> => {
  const allHeard = () => rfqIds.every((id) => sessions.every((s) => closingsHeard(s, id) > 0))
  for (const until = Date.now() + 30_000; !allHeard() && Date.now() < until; ) await sleep(200)
  await sleep(500) // a second copy, were there one, has time to arrive
  let misheard = 0
  for (const rfqId of rfqIds)
    sessions.forEach((s, i) => {
      const n = closingsHeard(s, rfqId)
      if (n !== 1) {
        misheard++
        notes.push(`RFQ ${rfqId}: the session on surviving host ${i} heard it close ${n} times`)
      }
    })
  return { checked: rfqIds.length * sessions.length, misheard }
}

import type { ApiResponse } from "../ApiClient.js"
import { createRfq, quoteBody, rfqBody, sleep } from "../Fixtures.js"
import { openDatabase } from "../reliability/DatabaseReader.js"
import { openRpcSession, type RpcSession } from "../RpcSession.js"
import type { MakerParty, Party, World } from "../World.js"

/**
 * Helpers of the issue-16 checks across hosts (`test/cluster/VenueWave.test.ts`): sessions opened
 * on every host, what each heard on a channel, waits that poll (never asserting on time), and RFQs
 * placed on a chosen owner (a create is owned by the host it lands on, docs/deploy.md).
 */

/** One notification's channel and data. */
export interface Heard {
  readonly channel: string
  readonly data: Record<string, unknown>
}

/** Everything a session heard so far, in arrival order. */
export const heardOn = (session: RpcSession, channel?: string): Array<Heard> =>
  session.connection.notifications
    .map((n) => (n as { params?: Heard }).params)
    .filter((p): p is Heard => p !== undefined && (channel === undefined || p.channel === channel))

/** Polls `done` every 100 ms until it holds; fails with `what` after `attempts` tries. */
export const until = async (what: string, done: () => Promise<boolean> | boolean, attempts = 200) => {
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (await done()) return
    await sleep(100)
  }
  throw new Error(`never: ${what}`)
}

/** A session of `party` on every host, each subscribed to `channels` before it is answered. */
export const sessionsOnEvery = async (
  hosts: ReadonlyArray<World>,
  party: Party,
  channels: ReadonlyArray<string>
): Promise<Array<RpcSession>> => {
  const sessions: Array<RpcSession> = []
  for (const w of hosts) {
    const session = await openRpcSession(w, party)
    sessions.push(session)
    await session.result("v1/subscribe", { channels })
  }
  return sessions
}

/** An RFQ owned by `owner` (created through it), the demo taker's call spread of 100. */
export const rfqOwnedBy = (owner: World, overrides: Record<string, unknown> = {}) =>
  createRfq(owner, "taker", rfqBody(owner, "taker", overrides))

/** `maker`'s ask of 100 at the mark on `rfqId`, sent through `via`; the answer as it came. */
export const askThrough = async (
  via: World,
  maker: MakerParty,
  rfqId: number,
  extra: Record<string, unknown> = {}
): Promise<{ answer: ApiResponse; body: Record<string, unknown> }> => {
  const body = { ...(await quoteBody(via, maker, rfqId, { direction: "sell", amount: 100 })), ...extra }
  return { answer: await via.api.post("/v1/rfq/quote", { token: via.token(maker), json: body }), body }
}

/** The quote id of a successful create, or a failure with the answer's text. */
export const quoteIdOf = (answer: ApiResponse): number => {
  if (answer.status !== 200) throw new Error(`quote not created: ${answer.status} ${answer.text}`)
  return (answer.body as { rfqQuoteId: number }).rfqQuoteId
}

/** A quote's status as `maker` reads it through `via` (`GET /v1/rfq/quotes?rfqId=`). */
export const quoteStatusThrough = async (via: World, maker: MakerParty, rfqId: number, quoteId: number) => {
  const answer = await via.api.get("/v1/rfq/quotes", { token: via.token(maker), query: { rfqId } })
  if (answer.status !== 200) throw new Error(`quotes not read: ${answer.status} ${answer.text}`)
  return (answer.body as { results: Array<{ rfqQuoteId: number; status: string }> }).results.find(
    (q) => q.rfqQuoteId === quoteId
  )?.status
}

/** The body of an update (`PUT /v1/rfq/quote`) of `quoteId` from a create's body. */
export const updateBody = (created: Record<string, unknown>, quoteId: number) => {
  const { rfqId: _rfqId, direction: _direction, ...rest } = created
  return { ...rest, rfqQuoteId: quoteId }
}

/** The first row of `query` on the cluster's schema (reads what the hosts committed). */
export const queryOne = async (namespace: string, query: string, params: ReadonlyArray<unknown>) => {
  const db = await openDatabase("postgres", { dataDir: "", schema: namespace })
  try {
    return (await db.query<Record<string, string>>(query, [...params]))[0]
  } finally {
    await db.close()
  }
}

/**
 * The fills market-maker protection admitted (one desk configured in the namespace), those
 * admitted after the tripping one (or with no trip at all), and the trades of the RFQs `$1`.
 */
export const MMP_FILLS_SQL = `SELECT (SELECT count(*) FROM mmp_fills)::text AS admitted,
  (SELECT count(*) FROM mmp_fills f JOIN mmp_configs c USING (desk_id, base_currency)
     WHERE c.trip_fill_id IS NULL OR f.id > c.trip_fill_id)::text AS late,
  (SELECT count(*) FROM trades WHERE rfq_id = ANY($1) AND status <> 'failed')::text AS traded`

import type { Answer } from "./Http.js"
import type { Desk } from "./Lifecycle.js"
import type { WsConnection } from "./WsClient.js"

/** The money-rules item's counters, its deterministic generator, and calls over REST or JSON-RPC. */

export interface Tally {
  rounds: number
  rpcCalls: number
  created: number
  refusedAtCreation: number
  quotesAccepted: number
  quotesRefused: number
  trades: number
  bulk: number
  creationsAgainstRule4: number
  hedgesBelowMinimumAccepted: number
  quotesAcceptedBelowMinimum: number
  quotesRefusedThoughValid: number
  optionsWithoutMakersAccepted: number
  ledgerAgainstConvention: number
  /** Calls that got no answer at all (a closed session, a timeout): the round stops there. */
  unanswered: number
  readonly problems: Array<string>
}

export const emptyTally = (): Tally => ({
  rounds: 0,
  rpcCalls: 0,
  created: 0,
  refusedAtCreation: 0,
  quotesAccepted: 0,
  quotesRefused: 0,
  trades: 0,
  bulk: 0,
  creationsAgainstRule4: 0,
  hedgesBelowMinimumAccepted: 0,
  quotesAcceptedBelowMinimum: 0,
  quotesRefusedThoughValid: 0,
  optionsWithoutMakersAccepted: 0,
  ledgerAgainstConvention: 0,
  unanswered: 0,
  problems: []
})

export const note = (t: Tally, problem: string) => {
  if (t.problems.length < 30) t.problems.push(problem)
}

/** A small deterministic generator (mulberry32): a failing run repeats with its seed. */
export const prng = (seed: number) => {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = Math.imul(a ^ (a >>> 15), 1 | a)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    coin: () => next() < 0.5
  }
}
export type Prng = ReturnType<typeof prng>

export interface Party {
  readonly desk: Desk
  readonly ws: WsConnection
}

/** One call's status, result and reasons, whichever way it went. */
interface Outcome {
  readonly status: number
  readonly result: any
  readonly reasons: ReadonlyArray<string>
}

const fromRest = (a: Answer): Outcome => ({
  status: a.status,
  result: a.body,
  reasons: ((a.body as { reason?: Array<string> } | undefined)?.reason ?? []) as ReadonlyArray<string>
})

export const call = async (
  ctx: { readonly rnd: Prng },
  t: Tally,
  who: Party,
  rpcMethod: string,
  rest: readonly [method: string, path: string],
  body: unknown
): Promise<Outcome> => {
  if (ctx.rnd.coin()) return fromRest(await who.desk.request(rest[0], rest[1], body))
  t.rpcCalls++
  const reply = await who.ws.rpc(rpcMethod, body)
  if (reply.error === undefined) return { status: 200, result: reply.result, reasons: [] }
  const data = reply.error.data as { status?: number; reason?: Array<string> } | undefined
  const status = data?.status ?? 0
  if (status === 0) {
    t.unanswered++
    note(t, `${rpcMethod}: no answer (${JSON.stringify(reply.error)})`)
  }
  return { status, result: reply.error, reasons: data?.reason ?? [] }
}

/** Heartbeats both sessions when 10 s have passed (the server closes a silent one after 30 s). */
export const keepAlive = async (parties: ReadonlyArray<Party>, last: { at: number }) => {
  if (Date.now() - last.at < 10_000) return
  for (const p of parties) await p.ws.rpc("heartbeat")
  last.at = Date.now()
}

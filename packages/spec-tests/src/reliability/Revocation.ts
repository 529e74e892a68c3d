import { type DatabaseReader, openDatabase, type Place } from "./DatabaseReader.js"
import { withHost } from "./WithHost.js"
import { atMost, type Figure, info, type Item, type Scale, zero } from "./Figures.js"
import { runAdmin as admin } from "./AdminCommand.js"
import { type Backend, hostEnv, type RunningHost } from "./HostProcess.js"
import { call, oauthRefresh, oauthToken, tokenFor } from "./Http.js"
import {
  createRfq,
  credentialsOf,
  Desk,
  legPricesFor,
  MAKER_IDS,
  MAKERS,
  quoteBody,
  rfqBody,
  TAKER
} from "./Lifecycle.js"
import { connectWs, type RpcReply, type WsConnection } from "./WsClient.js"

/**
 * Item 10: whatever ends a token or a client ends its open WebSocket sessions (issue 12, class 1).
 * - Replay (both backends): a refresh token used twice on REST revokes its family; the family's
 *   sessions (authenticated with the REST-issued token, or with a token the session itself got
 *   from `auth/refresh`) must refuse every call from that answer on and close with 4003 within
 *   5 s, idle ones included; a session of the same client outside the family goes on.
 * - Deactivation (PostgreSQL: a second process cannot open the embedded database while the host
 *   runs): `npm run admin -- client deactivate`, a separate process, deactivates a client with
 *   open sessions (logged in over WS and with a REST token); they close with 4003 within 5 s of
 *   the commit, and no call succeeds once REST refuses the same token.
 * Calls before the change are counted as a control: they succeed, so a refusal later means something.
 */
const ITEM = "10 revocation"
const BOUND_MS = 5_000
const ROUNDS = { replay: { full: 20, short: 2 }, deactivation: { full: 10, short: 1 } } as const

interface Tally {
  replayRounds: number
  deactivationRounds: number
  controlCalls: number
  controlFailures: number
  succeededAfterReplay: number
  succeededAfterRestRefused: number
  succeededBeforeClose: number
  restAcceptedAfterClose: number
  sessions: number
  notClosedInTime: number
  otherCode: number
  slowestMs: number
  bystandersDisturbed: number
  problems: Array<string>
}

const succeeded = (reply: RpcReply) => reply.result !== undefined && reply.error === undefined

/** A session and when it closed (resolves with the close, stamped on arrival). */
interface Watched {
  readonly ws: WsConnection
  readonly closed: Promise<{ code: number; reason: string; at: number }>
}

const open = async (base: string, auth: Record<string, unknown>): Promise<Watched> => {
  const ws = await connectWs(base)
  const reply = await ws.rpc("auth", auth)
  if (!succeeded(reply)) throw new Error(`auth failed: ${JSON.stringify(reply)}`)
  return { ws, closed: ws.closed.then((c) => ({ ...c, at: Date.now() })) }
}

/** The three calls the issue names: list quotes, cancel-all, create a quote (valid, so it would succeed). */
const attempts = (ws: WsConnection, quote: Record<string, unknown>) => [
  () => ws.rpc("v1/quote/list", {}, 3_000),
  () => ws.rpc("v1/quote/cancel-all", {}, 3_000),
  () => ws.rpc("v1/quote/create", quote, 3_000)
]

/** Waits for each close (at most the bound plus a margin) and records delay and code. */
const judgeCloses = async (t: Tally, sessions: ReadonlyArray<Watched>, since: number, what: string) => {
  const late = new Promise<undefined>((done) => setTimeout(() => done(undefined), BOUND_MS + 5_000))
  for (const s of sessions) {
    t.sessions += 1
    const closed = await Promise.race([s.closed, late])
    if (closed === undefined) {
      t.notClosedInTime += 1
      t.problems.push(`${what}: a session was still open ${BOUND_MS + 5_000} ms later`)
      continue
    }
    const delay = Math.max(0, closed.at - since)
    t.slowestMs = Math.max(t.slowestMs, delay)
    if (delay >= BOUND_MS) {
      t.notClosedInTime += 1
      t.problems.push(`${what}: closed ${delay} ms after the change`)
    }
    if (closed.code !== 4003) {
      t.otherCode += 1
      t.problems.push(`${what}: closed with ${closed.code} ${closed.reason}`)
    }
  }
}

const bystanderStillWorks = async (t: Tally, bystander: Watched, what: string) => {
  if (!succeeded(await bystander.ws.rpc("v1/quote/list", {}))) {
    t.bystandersDisturbed += 1
    t.problems.push(`${what}: a session outside the revoked family or client was refused`)
  }
}

/** An RFQ that `maker` may quote, and a valid quote body for it. */
const quotable = async (taker: Desk, maker: Desk) => {
  const rfqId = await createRfq(
    taker,
    rfqBody("single", await credentialsOf(taker), [MAKER_IDS[maker.clientId]!])
  )
  return quoteBody(rfqId, 50, await legPricesFor(maker, rfqId))
}

const replayRound = async (t: Tally, base: string, taker: Desk, i: number) => {
  const clientId = MAKERS[i % MAKERS.length]!
  const maker = await Desk.login(base, clientId)
  const quote = await quotable(taker, maker)
  const issued = await oauthToken(base, clientId)
  const busy = await open(base, { token: issued.access_token })
  const idle = await open(base, { token: issued.access_token })
  // The session gets its own token of the family: WS-issued, by the refresh grant over WS.
  const wsIssued = await open(base, { clientId, clientSecret: `${clientId}-secret` })
  const refreshed = await wsIssued.ws.rpc("auth/refresh", { refreshToken: issued.refresh_token })
  const wsToken = (refreshed.result as { token?: string } | undefined)?.token
  const bystander = await open(base, { clientId, clientSecret: `${clientId}-secret` })
  for (const s of [busy, wsIssued]) {
    t.controlCalls += 1
    if (!succeeded(await s.ws.rpc("v1/quote/list", {}))) t.controlFailures += 1
  }
  const replay = await oauthRefresh(base, clientId, issued.refresh_token)
  const revokedAt = Date.now()
  if (replay.status !== 401 || wsToken === undefined) {
    t.problems.push(`replay: refresh answered ${replay.status}, WS refresh ${JSON.stringify(refreshed)}`)
  }
  for (const s of [busy, wsIssued])
    for (const attempt of attempts(s.ws, quote)) if (succeeded(await attempt())) t.succeededAfterReplay += 1
  await judgeCloses(t, [busy, idle, wsIssued], revokedAt, `replay round ${i}`)
  for (const token of [issued.access_token, wsToken ?? ""]) {
    if ((await call(base, "GET", "/v1/rfq/quotes", { token })).status === 200) t.restAcceptedAfterClose += 1
  }
  await bystanderStillWorks(t, bystander, `replay round ${i}`)
  for (const s of [busy, idle, wsIssued, bystander]) s.ws.close()
  t.replayRounds += 1
}

/** The user id (`sub`) of an access token. */
const userIdOf = (token: string): string =>
  JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")).sub as string

/** Polls the database until the client reads inactive: the moment the command's change committed. */
const committedAt = async (db: DatabaseReader, clientId: string, deadline: number) => {
  while (Date.now() < deadline) {
    const rows = await db.query<{ active: boolean }>("SELECT active FROM api_clients WHERE client_id = $1", [
      clientId
    ])
    if (rows[0]?.active === false) return Date.now()
    await new Promise((r) => setTimeout(r, 20))
  }
  return undefined
}

const deactivationRound = async (
  t: Tally,
  host: RunningHost,
  env: Record<string, string>,
  db: DatabaseReader,
  taker: Desk,
  i: number
) => {
  const base = host.url
  const owner = MAKERS[i % MAKERS.length]!
  const maker = await Desk.login(base, owner)
  const created = await admin(env, ["client", "create", userIdOf(maker.token)])
  const clientId = /clientId: (\S+)/.exec(created.stdout)?.[1]
  const clientSecret = /clientSecret: (\S+)/.exec(created.stdout)?.[1]
  if (clientId === undefined || clientSecret === undefined) {
    t.problems.push(`admin client create failed: ${created.code} ${created.stderr.slice(0, 300)}`)
    return
  }
  const quote = await quotable(taker, maker)
  const restToken = await tokenFor(base, clientId, clientSecret)
  const byCredentials = await open(base, { clientId, clientSecret })
  const byToken = await open(base, { token: restToken })
  const busy = await open(base, { clientId, clientSecret })
  const bystander = await open(base, { clientId: owner, clientSecret: `${owner}-secret` })
  t.controlCalls += 1
  if (!succeeded(await busy.ws.rpc("v1/quote/list", {}))) t.controlFailures += 1

  const command = admin(env, ["client", "deactivate", clientId])
  const commit = committedAt(db, clientId, Date.now() + 60_000)
  // Calls keep coming while the change lands; each REST probe first, so "after REST refused" is exact.
  const answered: Array<number> = []
  let restRefused = false
  let busyClosed = false
  void busy.closed.then(() => (busyClosed = true))
  for (let n = 0; !busyClosed && n < 400; n++) {
    if ((await call(base, "GET", "/v1/rfq/quotes", { token: restToken })).status === 401) restRefused = true
    const attempt = attempts(busy.ws, quote)[n % 3]!
    if (succeeded(await attempt())) {
      answered.push(Date.now())
      if (restRefused) t.succeededAfterRestRefused += 1
    }
    await new Promise((r) => setTimeout(r, 25))
  }
  const [exit, changedAt] = await Promise.all([command, commit])
  if (exit.code !== 0 || changedAt === undefined) {
    t.problems.push(
      `admin client deactivate: ${exit.code} ${exit.stdout.trim()} ${exit.stderr.slice(0, 300)}`
    )
    return
  }
  t.succeededBeforeClose += answered.filter((at) => at > changedAt).length
  await judgeCloses(t, [byCredentials, byToken, busy], changedAt, `deactivation round ${i}`)
  if ((await call(base, "GET", "/v1/rfq/quotes", { token: restToken })).status === 200)
    t.restAcceptedAfterClose += 1
  await bystanderStillWorks(t, bystander, `deactivation round ${i}`)
  for (const s of [byCredentials, byToken, busy, bystander]) s.ws.close()
  t.deactivationRounds += 1
}

const figures = (t: Tally, scale: Scale): Array<Figure> => [
  info(
    ITEM,
    "rounds: refresh replay (both backends) / admin deactivation (PostgreSQL)",
    `${t.replayRounds} / ${t.deactivationRounds}`
  ),
  zero(
    ITEM,
    "rounds short of the scale",
    2 * ROUNDS.replay[scale] + ROUNDS.deactivation[scale] - t.replayRounds - t.deactivationRounds,
    t.problems[0]
  ),
  {
    ...zero(ITEM, "control calls before the change that failed", t.controlFailures),
    note: `${t.controlCalls} made`
  },
  zero(ITEM, "method calls that succeeded after the replay was answered", t.succeededAfterReplay),
  zero(
    ITEM,
    "method calls that succeeded after REST refused the deactivated client's token",
    t.succeededAfterRestRefused
  ),
  info(
    ITEM,
    "calls that succeeded between the deactivation's commit and the close (inside the bound)",
    t.succeededBeforeClose
  ),
  zero(
    ITEM,
    "REST requests accepted with a revoked or deactivated token after the close",
    t.restAcceptedAfterClose
  ),
  { ...zero(ITEM, "sessions not closed within 5 s", t.notClosedInTime), note: `${t.sessions} sessions` },
  zero(ITEM, "sessions closed with another code than 4003", t.otherCode),
  atMost(ITEM, "slowest close after the change", t.slowestMs, BOUND_MS, " ms"),
  zero(ITEM, "sessions outside the revoked family or client disturbed", t.bystandersDisturbed)
]

export const revocationItem: Item = {
  id: "revocation",
  title: "10. Revocation reaches open sessions",
  run: async ({ scale, log }) => {
    const t: Tally = {
      replayRounds: 0,
      deactivationRounds: 0,
      controlCalls: 0,
      controlFailures: 0,
      succeededAfterReplay: 0,
      succeededAfterRestRefused: 0,
      succeededBeforeClose: 0,
      restAcceptedAfterClose: 0,
      sessions: 0,
      notClosedInTime: 0,
      otherCode: 0,
      slowestMs: 0,
      bystandersDisturbed: 0,
      problems: []
    }
    for (const backend of ["pglite", "postgres"] as const satisfies ReadonlyArray<Backend>) {
      const before = { replay: t.replayRounds, deactivation: t.deactivationRounds }
      await withHost(backend, {}, async (host, place: Place) => {
        const taker = await Desk.login(host.url, TAKER)
        for (let i = 0; i < ROUNDS.replay[scale]; i++) await replayRound(t, host.url, taker, i)
        if (backend !== "postgres") return
        const db = await openDatabase("postgres", place)
        try {
          const env = hostEnv("postgres", place)
          for (let i = 0; i < ROUNDS.deactivation[scale]; i++)
            await deactivationRound(t, host, env, db, taker, i)
        } finally {
          await db.close()
        }
      })
      log(
        `revocation on ${backend}: ${t.replayRounds - before.replay} replay, ${t.deactivationRounds - before.deactivation} deactivation rounds`
      )
    }
    for (const p of t.problems.slice(0, 10)) log(p)
    return figures(t, scale)
  }
}

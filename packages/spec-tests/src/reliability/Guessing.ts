import http from "node:http"
import { withHost } from "./WithHost.js"
import WebSocket from "ws"
import { type Figure, info, type Item, zero } from "./Figures.js"
import { wsUrl } from "./WsClient.js"

/**
 * Item 11: client-secret guessing across REST and WebSocket (issue 12, class 2). Failed secret
 * checks are limited per address and per client id, over `POST /oauth/token`, `POST /v1/auth` and
 * WebSocket `auth` together, and a guess past the limit is refused before any scrypt runs.
 *
 * The host's `/metrics` counts every scrypt verification (`rfq_client_secret_checks_total`), so
 * "verified" is measured where the cost is, not inferred from the answers; the answers must agree
 * with it (a 401 `invalid client ID` per verification, a documented 429 / -32603 for the rest).
 * The loopback network gives each role its own source address (127.0.0.0/8 all reach the host).
 */
const ITEM = "11 guessing"
/** The host's limit (`LOGIN_FAILURES_PER_MINUTE`); a client id takes five times as many. */
const PER_ADDRESS = 10
const PER_CLIENT = 5 * PER_ADDRESS
const COUNTS = { oneAddress: { full: 150, short: 40 }, spread: { full: 150, short: 60 } } as const
const GUESSER = "127.0.0.2"
const ELSEWHERE = "127.0.0.3"
const HOME = "127.0.0.4"
/** The host's `WS_RATE_LIMIT_PER_MINUTE` here, small enough to pass it. */
const WS_MESSAGE_LIMIT = 5

interface Answer {
  readonly status: number
  readonly body: any
  readonly headers: http.IncomingHttpHeaders
}

/** One HTTP request from a chosen source address. */
const httpFrom = (from: string, base: string, method: string, path: string, body?: string, type?: string) =>
  new Promise<Answer>((resolve, reject) => {
    const url = new URL(path, base)
    const request = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method,
        localAddress: from,
        headers: type === undefined ? {} : { "content-type": type }
      },
      (response) => {
        let text = ""
        response.setEncoding("utf8").on("data", (chunk: string) => (text += chunk))
        response.on("end", () => {
          let parsed: unknown
          try {
            parsed = JSON.parse(text)
          } catch {
            parsed = text
          }
          resolve({ status: response.statusCode ?? 0, body: parsed, headers: response.headers })
        })
      }
    )
    request.on("error", reject)
    request.end(body)
  })

/** A WebSocket from a chosen source address, answering JSON-RPC replies by id. */
const wsFrom = (from: string, base: string) =>
  new Promise<{ rpc: (method: string, params: unknown) => Promise<any>; close: () => void }>(
    (resolve, reject) => {
      const socket = new WebSocket(wsUrl(base), { localAddress: from })
      const waiting = new Map<number, (reply: unknown) => void>()
      let id = 0
      socket.on("message", (data) => {
        const reply = JSON.parse(data.toString()) as { id?: number }
        if (typeof reply.id === "number") waiting.get(reply.id)?.(reply)
      })
      socket.on("close", () => {
        for (const done of waiting.values()) done({ error: { code: 0, message: "closed" } })
      })
      socket.once("error", reject)
      socket.once("open", () =>
        resolve({
          rpc: (method, params) =>
            new Promise((done) => {
              const n = ++id
              waiting.set(n, done)
              socket.send(JSON.stringify({ jsonrpc: "2.0", id: n, method, params }))
            }),
          close: () => socket.close()
        })
      )
    }
  )

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()

/** One login attempt by path: `oauth`, `auth` (REST) or a WebSocket session. */
type Path = "oauth" | "auth" | { readonly ws: { rpc: (m: string, p: unknown) => Promise<any> } }

type Outcome = "verified" | "throttled" | "ok" | `unexpected: ${string}`

const attempt = async (
  base: string,
  from: string,
  path: Path,
  clientId: string,
  secret: string
): Promise<Outcome> => {
  if (typeof path === "object") {
    const reply = await path.ws.rpc("auth", { clientId, clientSecret: secret })
    if (reply.result?.success === true) return "ok"
    const e = reply.error ?? {}
    if (e.code === -32001 && e.message === "invalid client ID") return "verified"
    const d = e.data ?? {}
    if (
      e.code === -32603 &&
      e.message === "Rate limit exceeded" &&
      d.limit >= PER_ADDRESS &&
      d.window === "1m0s" &&
      Number.isInteger(d.reset)
    )
      return "throttled"
    return `unexpected: WS ${JSON.stringify(e).slice(0, 200)}`
  }
  const a =
    path === "oauth"
      ? await httpFrom(
          from,
          base,
          "POST",
          "/oauth/token",
          form({ grant_type: "client_credentials", client_id: clientId, client_secret: secret }),
          "application/x-www-form-urlencoded"
        )
      : await httpFrom(
          from,
          base,
          "POST",
          "/v1/auth",
          JSON.stringify({ clientId, clientSecret: secret }),
          "application/json"
        )
  if (a.status === 200) return "ok"
  if (a.status === 401 && a.body?.message === "invalid client ID") return "verified"
  const h = a.headers
  if (
    a.status === 429 &&
    a.body?.code === 429 &&
    a.body?.message === "rate limit exceeded" &&
    Number(h["x-ratelimit-limit"]) >= PER_ADDRESS &&
    h["x-ratelimit-remaining"] === "0" &&
    Number(h["retry-after"]) >= 1 &&
    Number(h["x-ratelimit-reset"]) * 1000 > Date.now() - 1000
  )
    return "throttled"
  return `unexpected: ${a.status} ${JSON.stringify(a.body).slice(0, 200)} ${JSON.stringify(h).slice(0, 200)}`
}

/** Scrypt verifications so far, by outcome, from the host's metrics. */
const verifications = async (base: string) => {
  const text = (await httpFrom(ELSEWHERE, base, "GET", "/metrics")).body as string
  const count = (outcome: string) =>
    Number(new RegExp(`rfq_client_secret_checks_total\\{outcome="${outcome}"\\} (\\d+)`).exec(text)?.[1] ?? 0)
  return count("mismatch") + count("match")
}

/** Fixed one-minute windows touched between two times: each brings a fresh budget. */
const windowsBetween = (start: number, end: number) =>
  Math.floor(end / 60_000) - Math.floor(start / 60_000) + 1

const tallyOf = (outcomes: ReadonlyArray<Outcome>) => ({
  verified: outcomes.filter((o) => o === "verified").length,
  throttled: outcomes.filter((o) => o === "throttled").length,
  unexpected: outcomes.filter((o) => o.startsWith("unexpected") || o === "ok")
})

export const runGuessing = async (
  base: string,
  scale: "full" | "short",
  log: (l: string) => void
): Promise<Array<Figure>> => {
  const secret = (id: string) => `${id}-secret`
  const logins = (from: string, paths: ReadonlyArray<Path>, ids: ReadonlyArray<string>) =>
    Promise.all(paths.flatMap((p) => ids.map((id) => attempt(base, from, p, id, secret(id)))))

  // The real client of the spread attack has logged in from its usual address before.
  const homeLogin = await attempt(base, HOME, "auth", "demo-maker-2", secret("demo-maker-2"))

  // 1. One address, every path at once, known and unknown ids, all wrong.
  const sockets = await Promise.all([1, 2, 3].map(() => wsFrom(GUESSER, base)))
  const paths: ReadonlyArray<Path> = ["oauth", "auth", ...sockets.map((ws) => ({ ws }))]
  const ids = ["demo-maker-1", "demo-taker", "no-such-client"]
  const before1 = await verifications(base)
  const start1 = Date.now()
  const one = await Promise.all(
    Array.from({ length: COUNTS.oneAddress[scale] }, (_, i) =>
      attempt(base, GUESSER, paths[i % paths.length]!, ids[i % ids.length]!, `guess-${i}`)
    )
  )
  const end1 = Date.now()
  const verified1 = (await verifications(base)) - before1
  const t1 = tallyOf(one)
  // Valid logins from elsewhere while the guesser is locked out: its targets included.
  const elsewhere = await logins(ELSEWHERE, ["oauth", "auth"], ["demo-maker-1", "demo-taker", "demo-viewer"])
  const wsElsewhere = await wsFrom(ELSEWHERE, base)
  const elsewhereWs = await logins(ELSEWHERE, [{ ws: wsElsewhere }], ["demo-maker-1"])
  // Valid use stays exempt from the WebSocket message limit: past it, `auth` still works.
  for (let i = 0; i < WS_MESSAGE_LIMIT + 1; i++) await wsElsewhere.rpc("v1/exchange/maker", {})
  const pastMessageLimit = await logins(ELSEWHERE, [{ ws: wsElsewhere }], ["demo-maker-1"])
  for (const s of [...sockets, wsElsewhere]) s.close()

  // 2. One client id, guessed from many addresses (two guesses each).
  const spreadCount = COUNTS.spread[scale]
  const before2 = await verifications(base)
  const start2 = Date.now()
  const spread = await Promise.all(
    Array.from({ length: spreadCount }, (_, i) =>
      attempt(
        base,
        `127.0.1.${1 + Math.floor(i / 2)}`,
        i % 2 === 0 ? "auth" : "oauth",
        "demo-maker-2",
        `guess-${i}`
      )
    )
  )
  const end2 = Date.now()
  const verified2 = (await verifications(base)) - before2
  const t2 = tallyOf(spread)
  const fromHome = await attempt(base, HOME, "oauth", "demo-maker-2", secret("demo-maker-2"))
  const others = await logins(`127.0.1.${200}`, ["auth"], ["demo-maker-3", "demo-taker"])

  const validRefused = [
    homeLogin,
    ...elsewhere,
    ...elsewhereWs,
    ...pastMessageLimit,
    fromHome,
    ...others
  ].filter((o) => o !== "ok")
  const unexpected = [...t1.unexpected, ...t2.unexpected]
  for (const u of [...unexpected, ...validRefused].slice(0, 5)) log(`guessing: ${u}`)
  const past1 = Math.max(0, verified1 - PER_ADDRESS * windowsBetween(start1, end1))
  const past2 = Math.max(0, verified2 - PER_CLIENT * windowsBetween(start2, end2))
  return [
    info(
      ITEM,
      "wrong secrets from one address (REST both endpoints + 3 sockets) / verified",
      `${one.length} / ${verified1}`
    ),
    zero(ITEM, "secrets verified past the per-address limit", past1),
    info(
      ITEM,
      "wrong secrets at one client id from many addresses / verified",
      `${spread.length} / ${verified2}`
    ),
    zero(ITEM, "secrets verified past the per-client-id limit", past2),
    zero(
      ITEM,
      "answers disagreeing with the scrypt runs counted (a 401 per run, 429 / -32603 otherwise)",
      Math.abs(t1.verified - verified1) + Math.abs(t2.verified - verified2)
    ),
    zero(
      ITEM,
      "answers other than 401 invalid client ID or the documented 429 / -32603",
      unexpected.length,
      unexpected[0]
    ),
    zero(ITEM, "valid logins refused for another client or address", validRefused.length, validRefused[0]),
    info(ITEM, "time to answer every guess (ms)", `${end1 - start1} / ${end2 - start2}`)
  ]
}

export const guessingItem: Item = {
  id: "guessing",
  title: "11. Secret guessing across REST and WS",
  run: async ({ scale, log }) => {
    const limits = {
      LOGIN_FAILURES_PER_MINUTE: String(PER_ADDRESS),
      WS_RATE_LIMIT_PER_MINUTE: String(WS_MESSAGE_LIMIT)
    }
    return withHost("pglite", limits, (host) => runGuessing(host.url, scale, log))
  }
}

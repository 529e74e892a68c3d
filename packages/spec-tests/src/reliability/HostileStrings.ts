import { type Figure, info, type Item, type RunContext, type Scale, zero } from "./Figures.js"
import { call, oauthToken } from "./Http.js"
import type { Backend, RunningHost } from "./HostProcess.js"
import {
  type Clients,
  type Kind,
  note,
  pathOf,
  probe,
  probeFrame,
  type Tally,
  type Variant,
  variantsFor
} from "./HostileProbe.js"
import { type Target, type TargetContext, targets } from "./HostileTargets.js"
import { withHost } from "./WithHost.js"
import { aliasId, createQuote, createRfq, credentialsOf, Desk, legPricesFor, rfqBody } from "./Lifecycle.js"
import { connectWs } from "./WsClient.js"

/**
 * Item 12 (issue 12, class 3): hostile text in every string field of every operation, over REST
 * and JSON-RPC. Text PostgreSQL cannot store (U+0000, lone surrogates, sent as JSON escapes),
 * control characters and overlong values must be refused with a 400 / -32602 (404 / -32004 for an
 * unknown exchange) whose reason names the field; nothing may answer 5xx / -32603, nothing a
 * refused request carried may be stored. Text a client may mean (right-to-left marks, emoji,
 * combining marks) is stored exactly as sent. Hostile JSON-RPC `id` and `method` get a clean error.
 */

/** What a refused request could have written: counts that must not move. */
const stateOf = async (base: string, taker: Desk, maker: Desk, openRfqId: number) => {
  const rfqs = (await taker.request("GET", "/v1/rfq?limit=1")).body as { totalResults: number }
  const quotes = (await maker.request("GET", `/v1/rfq/quotes?rfqId=${openRfqId}`)).body
  const credentials = (await taker.request("GET", "/v1/account/exchange-credentials")).body as Array<unknown>
  const logins = await call(base, "POST", "/v1/auth", {
    body: { clientId: "demo-taker", clientSecret: "demo-taker-secret" }
  })
  return JSON.stringify([rfqs.totalResults, quotes, credentials.length, logins.status])
}

/** Accepted text in the fields that are read back: stored and answered exactly as sent. */
const roundTrips = async (
  taker: Desk,
  maker: Desk,
  c: TargetContext,
  rfqBase: Record<string, unknown>,
  variants: ReadonlyArray<Variant>,
  t: Tally
) => {
  for (const [i, v] of variants.entries()) {
    const label = v.text(`label-${i}`)
    const created = await taker.request("POST", "/v1/rfq/0", { ...rfqBase, label })
    const rfqId = (created.body as { rfqId?: number } | undefined)?.rfqId
    const readLabel =
      rfqId === undefined
        ? undefined
        : ((await taker.request("GET", `/v1/rfq/${rfqId}`)).body as { label?: string }).label
    const alias = v.text(`alias-${i}`)
    await taker.request("POST", "/v1/account/exchange-credentials", {
      alias,
      exchange: "DBT",
      clientId: "c",
      clientSecret: "s"
    })
    const aliases = (
      (await taker.request("GET", "/v1/account/exchange-credentials")).body as Array<{ alias: string }>
    ).map((x) => x.alias)
    const quoteLabel = v.text(`quote-${i}`)
    await maker.request("POST", "/v1/rfq/quote", {
      rfqId: c.openRfqId,
      direction: "sell",
      amount: 50,
      settlementOption: "DBT",
      legs: c.legs,
      label: quoteLabel
    })
    const quotes = (await maker.request("GET", `/v1/rfq/quotes?rfqId=${c.openRfqId}&limit=1000`)).body as {
      results: Array<{ label?: string }>
    }
    const nonce = v.text(`nonce-${i}`)
    const bulk = await taker.request("POST", "/v1/block-trade/bulk", {
      timestamp: Date.now(),
      blockTrades: [
        {
          nonce,
          makerExchangeCredentials: "dbt-alt",
          takerExchangeCredentials: "dbt-main",
          trades: [
            {
              direction: "sell",
              instrumentName: c.legs[0]!.instrumentName,
              price: c.legs[0]!.price,
              amount: 25
            }
          ]
        }
      ]
    })
    const bulkResult = (bulk.body as Array<{ nonce?: string; exchangeError?: unknown }> | undefined)?.[0]
    const checks: Array<[string, boolean]> = [
      [`RFQ label (${created.status} ${created.text.slice(0, 100)})`, readLabel === label],
      ["alias", aliases.includes(alias)],
      ["quote label", quotes.results.some((q) => q.label === quoteLabel)],
      ["bulk nonce", bulkResult?.nonce === nonce && bulkResult.exchangeError === undefined]
    ]
    for (const [what, ok] of checks) {
      if (ok) continue
      note(
        t,
        "storedDifferently",
        `${v.name}: ${what} not stored as sent (bulk ${bulk.status} ${bulk.text.slice(0, 120)})`
      )
    }
  }
}

const runOn = async (
  backend: Backend,
  scale: Scale,
  log: (line: string) => void
): Promise<ReadonlyArray<Figure>> =>
  withHost(backend, {}, async (host: RunningHost) => {
    const base = host.url
    const taker = await Desk.login(base, "demo-taker")
    const maker = await Desk.login(base, "demo-maker-1")
    const credentials = await credentialsOf(taker)
    const openRfqId = await createRfq(taker, rfqBody("single", credentials, ["maker-1"]))
    const quoteLabel = "hostile-base-quote"
    const quoteId = await createQuote(maker, openRfqId, 50, quoteLabel)
    const c: TargetContext = {
      credentialsId: aliasId(credentials, "dbt-main"),
      openRfqId,
      quoteId,
      quoteLabel,
      legs: await legPricesFor(maker, openRfqId),
      refreshToken: (await oauthToken(base, "demo-taker")).refresh_token,
      takerToken: taker.token
    }
    const session = async (token?: string) => {
      const ws = await connectWs(base)
      if (token !== undefined) await ws.rpc("auth", { token })
      return ws
    }
    const clients: Clients = {
      tokens: { taker: taker.token, maker: maker.token },
      sessions: {
        taker: await session(taker.token),
        maker: await session(maker.token),
        none: await session()
      }
    }
    const t: Tally = {
      sent: 0,
      counts: { serverErrors: 0, unnamed: 0, stateChanges: 0, storedDifferently: 0 },
      problems: []
    }
    const { refused, accepted } = variantsFor(scale)
    try {
      /** Every variant in every field `fieldsOf` picks, over REST and JSON-RPC. */
      const sweep = async (
        fieldsOf: (target: Target) => ReadonlyArray<string>,
        variants: ReadonlyArray<Variant>,
        mustRefuse: boolean
      ) => {
        for (const target of targets(c)) {
          for (const field of fieldsOf(target)) {
            const valid = String(
              pathOf(field).reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], target.base)
            )
            for (const v of variants) {
              const what = `${target.rpc ?? target.rest?.path} ${field} ${v.name}`
              await probe(base, clients, target, field, v.text(valid), mustRefuse, t, what)
            }
          }
        }
      }
      const before = await stateOf(base, taker, maker, openRfqId)
      await sweep((target) => target.fields, refused, true)
      for (const v of refused) await probeFrame(clients.sessions.taker, v.text("m"), t, v.name)
      const after = await stateOf(base, taker, maker, openRfqId)
      if (after !== before) note(t, "stateChanges", `refused requests changed state: ${before} → ${after}`)
      await sweep((target) => target.free, accepted, false)
      await roundTrips(taker, maker, c, rfqBody("single", credentials, ["maker-1"]), accepted, t)
    } finally {
      for (const ws of Object.values(clients.sessions)) ws.close()
    }
    for (const p of t.problems) log(`${backend}: ${p.text}`)
    const item = `12 strings (${backend})`
    const figure = (kind: Kind, name: string) =>
      zero(item, name, t.counts[kind], t.problems.find((p) => p.kind === kind)?.text)
    return [
      info(
        item,
        "requests and frames sent / hostile variants",
        `${t.sent} / ${refused.length + accepted.length}`
      ),
      figure("serverErrors", "5xx / -32603 answers"),
      figure("unnamed", "answers without the field named"),
      figure("stateChanges", "refused requests that changed state"),
      figure("storedDifferently", "accepted text not stored exactly")
    ]
  })

export const hostileStringsItem: Item = {
  id: "strings",
  title: "12. Hostile strings in every string field",
  run: async ({ scale, log }: RunContext) => [
    ...(await runOn("pglite", scale, log)),
    ...(await runOn("postgres", scale, log))
  ]
}

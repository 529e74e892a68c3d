import { openDatabase } from "./DatabaseReader.js"
import { type Figure, info, type Item, type Scale, zero } from "./Figures.js"
import type { Backend } from "./HostProcess.js"
import { withHost } from "./WithHost.js"
import { aliasId, credentialsOf, Desk } from "./Lifecycle.js"
import { type Booked, type ExpectedBooking, ledgerProblems } from "./MoneyOracle.js"
import { playRound, type RoundContext } from "./MoneyRound.js"
import { emptyTally, keepAlive, note, type Party, prng, type Tally } from "./MoneyTally.js"
import { connectWs } from "./WsClient.js"

/**
 * Item 13 (issue 12, classes 4, 5 and 8): money rules against a real host. Random splits over up to
 * four taker accounts, random RFQ amounts, structures and hedges (some below the venue's minimum),
 * quotes below the RFQ amount created or updated, over REST and JSON-RPC at random (`MoneyRound.ts`);
 * every answer is judged by the contract's arithmetic written out in `MoneyOracle.ts`. Accepted
 * quotes are traded and must settle every account with the oracle's amounts; at the end the venue
 * ledger is read from the database and every booking (RFQ trades and bulk block trades) must carry
 * the maker's side, the maker's and the taker's accounts, and the oracle's amounts.
 */

const counts = { full: { rounds: 500 }, short: { rounds: 12 } } as const

const loginParty = async (base: string, clientId: string): Promise<Party> => {
  const desk = await Desk.login(base, clientId)
  const ws = await connectWs(base)
  const auth = await ws.rpc("auth", { token: desk.token })
  if (auth.error !== undefined) throw new Error(`ws auth: ${JSON.stringify(auth.error)}`)
  return { desk, ws }
}

const clientIdOf = async (desk: Desk, credentialsId: number): Promise<string> => {
  const answer = await desk.request("GET", `/v1/account/exchange-credentials/${credentialsId}`)
  return (answer.body as { clientId: string }).clientId
}

/** The demo parties, two more taker accounts, and the venue client ids the ledger will name. */
const setUp = async (base: string, seed: number): Promise<RoundContext> => {
  const tag = `${seed.toString(36)}${Date.now().toString(36)}`
  const taker = await loginParty(base, "demo-taker")
  const maker = await loginParty(base, "demo-maker-1")
  for (const n of [1, 2]) {
    await taker.desk.request("POST", "/v1/account/exchange-credentials", {
      alias: `dbt-r${n}`,
      exchange: "DBT",
      clientId: `money-${tag}-r${n}`,
      clientSecret: "secret"
    })
  }
  const takerCredentials = await credentialsOf(taker.desk)
  const accounts = ["dbt-main", "dbt-alt", "dbt-r1", "dbt-r2"].map((a) => aliasId(takerCredentials, a))
  const clientIds = new Map<number, string>()
  for (const id of accounts) clientIds.set(id, await clientIdOf(taker.desk, id))
  const makerDbt = aliasId(await credentialsOf(maker.desk), "dbt-main")
  const counterparties = (await taker.desk.request("GET", "/v1/account/otc-counterparty")).body as Array<{
    id: number
    name: string
  }>
  return {
    rnd: prng(seed),
    tag,
    taker,
    maker,
    accounts,
    bullAccount: aliasId(takerCredentials, "bull-main"),
    clientIds,
    makerClientId: await clientIdOf(maker.desk, makerDbt),
    maker1Desk: counterparties.find((c) => c.name === "Demo Maker 1")!.id,
    exact: new Map<string, ExpectedBooking>(),
    byNonce: new Map<string, ExpectedBooking>()
  }
}

const figuresOf = (backend: Backend, t: Tally, seed: number): Array<Figure> => {
  const item = `13 money (${backend})`
  const first = (what: string) => t.problems.find((p) => p.includes(what))
  return [
    info(item, "rounds / JSON-RPC calls / seed", `${t.rounds} / ${t.rpcCalls} / ${seed}`),
    info(item, "RFQs created / refused", `${t.created} / ${t.refusedAtCreation}`),
    info(
      item,
      "quotes accepted / refused / trades / bulk block trades",
      `${t.quotesAccepted} / ${t.quotesRefused} / ${t.trades} / ${t.bulk}`
    ),
    zero(
      item,
      "quotes accepted that settle an account below minimum",
      t.quotesAcceptedBelowMinimum,
      first("trade of") ?? first("accepted")
    ),
    zero(
      item,
      "quotes refused though every account meets the minimum",
      t.quotesRefusedThoughValid,
      first("valid quote")
    ),
    zero(
      item,
      "hedges below minimum accepted at creation",
      t.hedgesBelowMinimumAccepted,
      first("hedge below")
    ),
    zero(item, "RFQ creations against split rule 4 (either way)", t.creationsAgainstRule4, first("RFQ")),
    zero(item, "ledger entries against the side convention", t.ledgerAgainstConvention, first("booking")),
    zero(item, "options without makers accepted", t.optionsWithoutMakersAccepted, first("without makers")),
    zero(item, "calls without an answer (REST or JSON-RPC)", t.unanswered, first("no answer"))
  ]
}

const runOn = (backend: Backend, scale: Scale, seed: number, log: (l: string) => void) =>
  withHost(backend, {}, async (host, place) => {
    const t = emptyTally()
    const ctx = await setUp(host.url, seed)
    const beat = { at: Date.now() }
    for (let round = 0; round < counts[scale].rounds; round++) {
      await keepAlive([ctx.taker, ctx.maker], beat)
      await playRound(ctx, t, round)
    }
    ctx.taker.ws.close()
    ctx.maker.ws.close()
    // The ledger, read from the database (PGlite only once its host is gone: it has no lock).
    if (backend === "pglite") await host.stop("SIGTERM")
    const db = await openDatabase(backend, place)
    try {
      const rows = await db.query<{ payload: string }>(
        "SELECT payload::text AS payload FROM venue_block_trades"
      )
      const problems = ledgerProblems(
        rows.map((r) => JSON.parse(r.payload) as Booked),
        ctx.exact,
        ctx.byNonce
      )
      t.ledgerAgainstConvention += problems.length
      for (const p of problems.slice(0, 10)) note(t, p)
    } finally {
      await db.close()
    }
    for (const p of t.problems.slice(0, 10)) log(`${backend}: ${p}`)
    return figuresOf(backend, t, seed)
  })

export const moneyRulesItem: Item = {
  id: "money",
  title: "13. Money rules (split rule 4 at quote time, hedges, ledger sides)",
  run: async ({ scale, log, seed }) => {
    const base = seed ?? Date.now() % 2 ** 31
    const backends: ReadonlyArray<Backend> = scale === "full" ? ["pglite", "postgres"] : ["pglite"]
    const out: Array<Figure> = []
    for (const [i, backend] of backends.entries()) out.push(...(await runOn(backend, scale, base + i, log)))
    return out
  }
}

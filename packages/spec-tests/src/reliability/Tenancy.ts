import fc from "fast-check"
import { type Answer, isStandardError } from "./Http.js"
import { extraFields } from "./ExtraFields.js"
import {
  createQuote,
  createRfq,
  credentialsOf,
  Desk,
  getRfq,
  rfqBody,
  type TradeAnswer
} from "./Lifecycle.js"

/**
 * Tenancy (OWASP API1 broken object level authorization, API3 broken object property level
 * authorization) over REST. The taker desk owns RFQs, quotes, a trade and credentials; maker-2 and
 * maker-3 are other desks that were never invited. Every operation that takes an id is called by
 * them with the taker's ids, with ids that do not exist and with fuzzed ids, then the owner's
 * objects are read back: nothing may have been read or changed, and the answer for a foreign id
 * must be the answer for a missing one. Then extra body fields (`status`, `deskId`, `price`,
 * `__proto__`, …) are sent on the owner's own writes and must change nothing.
 */
export interface TenancyFigures {
  calls: number
  crossTenantReads: number
  crossTenantWrites: number
  existenceLeaks: number
  extraFieldEffects: number
  problems: Array<string>
}

const MISSING_ID = 2_000_000_000

interface IdOperation {
  readonly name: string
  readonly kind: "rfq" | "quote" | "credentials"
  readonly send: (desk: Desk, id: unknown) => Promise<Answer>
}

const idOperations: ReadonlyArray<IdOperation> = [
  {
    name: "GET /v1/rfq/{id}",
    kind: "rfq",
    send: (d, id) => d.request("GET", `/v1/rfq/${encodeURIComponent(String(id))}`)
  },
  {
    name: "GET /v1/rfq/{id}/quote",
    kind: "rfq",
    send: (d, id) => d.request("GET", `/v1/rfq/${encodeURIComponent(String(id))}/quote`)
  },
  {
    name: "DELETE /v1/rfq/{id}",
    kind: "rfq",
    send: (d, id) => d.request("DELETE", `/v1/rfq/${encodeURIComponent(String(id))}`)
  },
  {
    name: "POST /v1/rfq/cancel",
    kind: "rfq",
    send: (d, id) => d.request("POST", "/v1/rfq/cancel", { rfqId: id })
  },
  {
    name: "POST /v1/rfq/leg-prices",
    kind: "rfq",
    send: (d, id) =>
      d.request("POST", "/v1/rfq/leg-prices", {
        rfqId: id,
        price: 0.01,
        legs: [{ direction: "buy", instrumentName: "BTC-27DEC30-90000-C", ratio: 1 }]
      })
  },
  {
    name: "POST /v1/rfq/quote",
    kind: "rfq",
    send: (d, id) =>
      d.request("POST", "/v1/rfq/quote", {
        rfqId: id,
        direction: "sell",
        amount: 50,
        settlementOption: "DBT",
        legs: [
          { instrumentName: "BTC-27DEC30-90000-C", price: 0.1 },
          { instrumentName: "BTC-27DEC30-110000-C", price: 0.05 }
        ]
      })
  },
  {
    name: "GET /v1/rfq/quotes?rfqId",
    kind: "rfq",
    send: (d, id) => d.request("GET", `/v1/rfq/quotes?rfqId=${encodeURIComponent(String(id))}`)
  },
  {
    name: "POST /v1/rfq/quote/cancel-all",
    kind: "rfq",
    send: (d, id) => d.request("POST", "/v1/rfq/quote/cancel-all", { rfqId: id })
  },
  {
    name: "POST /v1/rfq/trade",
    kind: "quote",
    send: (d, id) => d.request("POST", "/v1/rfq/trade", { rfqQuoteId: id })
  },
  {
    name: "PUT /v1/rfq/quote",
    kind: "quote",
    send: (d, id) =>
      d.request("PUT", "/v1/rfq/quote", {
        rfqQuoteId: id,
        amount: 50,
        settlementOption: "DBT",
        legs: [
          { instrumentName: "BTC-27DEC30-90000-C", price: 0.1 },
          { instrumentName: "BTC-27DEC30-110000-C", price: 0.05 }
        ]
      })
  },
  {
    name: "DELETE /v1/rfq/quote",
    kind: "quote",
    send: (d, id) => d.request("DELETE", "/v1/rfq/quote", { rfqQuoteId: id })
  },
  {
    name: "GET /v1/account/exchange-credentials/{id}",
    kind: "credentials",
    send: (d, id) => d.request("GET", `/v1/account/exchange-credentials/${encodeURIComponent(String(id))}`)
  },
  {
    name: "DELETE /v1/account/exchange-credentials/{id}",
    kind: "credentials",
    send: (d, id) => d.request("DELETE", `/v1/account/exchange-credentials/${encodeURIComponent(String(id))}`)
  }
]

/**
 * The status and body with the id itself blanked out (a reason may echo the id the caller sent):
 * what an outsider learns from the answer beyond what it already knew.
 */
const shape = (a: Answer, id: unknown) => {
  const body = a.body as { reason?: unknown } | undefined
  if (body === undefined || !Array.isArray(body.reason)) return JSON.stringify({ status: a.status, body })
  const escaped = String(id).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  const blank = (r: unknown) =>
    typeof r === "string" ? r.replace(new RegExp(`\\b${escaped}\\b`, "g"), "<id>") : r
  return JSON.stringify({ status: a.status, body: { ...body, reason: body.reason.map(blank) } })
}

/** An unknown route (an id that is empty or `..` changes the path): says nothing about any object. */
const isRouteNotFound = (a: Answer) =>
  a.status === 404 && (a.body as { message?: string } | undefined)?.message === "not found"

/** Everything of the owner's that an outsider could have touched, as the owner reads it. */
const snapshot = async (taker: Desk, maker: Desk, rfqIds: ReadonlyArray<number>) => {
  const rfqs = await Promise.all(rfqIds.map((id) => getRfq(taker, id)))
  const quotes = await maker.request("GET", "/v1/rfq/quotes?limit=1000")
  const credentials = await credentialsOf(taker)
  return JSON.stringify({ rfqs, quotes: quotes.body, credentials })
}

export const runTenancy = async (
  base: string,
  options: { fuzzedIds: number; seed: number }
): Promise<TenancyFigures> => {
  const figures: TenancyFigures = {
    calls: 0,
    crossTenantReads: 0,
    crossTenantWrites: 0,
    existenceLeaks: 0,
    extraFieldEffects: 0,
    problems: []
  }
  const problem = (kind: keyof Omit<TenancyFigures, "calls" | "problems">, what: string) => {
    figures[kind]++
    if (figures.problems.length < 30) figures.problems.push(`${kind}: ${what}`)
  }
  const taker = await Desk.login(base, "demo-taker")
  const maker1 = await Desk.login(base, "demo-maker-1")
  const outsiders = [await Desk.login(base, "demo-maker-2"), await Desk.login(base, "demo-maker-3")]
  const takerCredentials = await credentialsOf(taker)

  // The owner's objects: an open RFQ with a quote, and a traded RFQ.
  const openRfq = await createRfq(taker, rfqBody("single", takerCredentials, ["maker-1"]))
  const openQuote = await createQuote(maker1, openRfq, 50, `tenancy-${Date.now()}`)
  const tradedRfq = await createRfq(taker, rfqBody("single", takerCredentials, ["maker-1"]))
  const tradedQuote = await createQuote(maker1, tradedRfq, 50)
  const trade = (await (
    await taker.request("POST", "/v1/rfq/trade", { rfqQuoteId: tradedQuote })
  ).body) as TradeAnswer
  const owned = {
    rfq: [openRfq, tradedRfq, trade.rfqTradeId],
    quote: [openQuote, tradedQuote],
    credentials: takerCredentials.map((c) => c.credentialsId)
  }
  const before = await snapshot(taker, maker1, [openRfq, tradedRfq])

  const probe = async (outsider: Desk, op: IdOperation, id: unknown, missing: Answer) => {
    const a = await op.send(outsider, id)
    figures.calls++
    if (a.status >= 500) problem("existenceLeaks", `${op.name} ${String(id)} answered ${a.status}`)
    if (shape(a, id) !== shape(missing, MISSING_ID))
      problem(
        "existenceLeaks",
        `${op.name} with ${String(id)}: ${a.status} ${a.text.slice(0, 120)} vs missing ${missing.status} ${missing.text.slice(0, 120)}`
      )
    if (a.status === 200 && a.text.includes(`"rfqId":${openRfq}`))
      problem("crossTenantReads", `${op.name} ${String(id)} returned the owner's RFQ`)
    if (a.status === 200 && /clientSecret|"alias"/.test(a.text))
      problem("crossTenantReads", `${op.name} ${String(id)} returned credentials`)
  }

  for (const outsider of outsiders) {
    for (const op of idOperations) {
      const missing = await op.send(outsider, MISSING_ID)
      figures.calls++
      if (!isStandardError(missing) && missing.status !== 200)
        problem("existenceLeaks", `${op.name} missing id: non-standard ${missing.status}`)
      for (const id of owned[op.kind]) await probe(outsider, op, id, missing)
    }
  }

  // Fuzzed ids: whatever the id, an outsider gets either the missing-id answer or a 400 about the
  // id's format, and never anything of the owner's.
  const ids = fc.sample(
    fc.oneof(
      fc.integer({ min: 1, max: 1000 }),
      fc.integer({ min: -(2 ** 31), max: 2 ** 31 }),
      fc.constantFrom(
        "0",
        "-1",
        "1.0",
        "1e3",
        "0x10",
        " 1",
        "1 ",
        "01",
        "9".repeat(30),
        "null",
        "true",
        "[1]",
        "%00",
        "..",
        "1;2"
      ),
      fc.string({ maxLength: 12 }),
      fc.double()
    ),
    { numRuns: options.fuzzedIds, seed: options.seed }
  )
  const missingByOp = new Map<string, Answer>()
  for (const op of idOperations) missingByOp.set(op.name, await op.send(outsiders[0]!, MISSING_ID))
  // The outsider's own credentials are its to read and delete; a fuzzed id that names one is skipped.
  const outsidersOwn = new Set((await credentialsOf(outsiders[0]!)).map((c) => String(c.credentialsId)))
  for (const [i, id] of ids.entries()) {
    const op = idOperations[i % idOperations.length]!
    if (op.kind === "credentials" && outsidersOwn.has(String(Number(String(id).trim())))) continue
    const a = await op.send(outsiders[0]!, id)
    figures.calls++
    if (a.status >= 500)
      problem(
        "existenceLeaks",
        `${op.name} fuzzed ${JSON.stringify(id)}: ${a.status} (seed ${options.seed}, run ${i})`
      )
    else if (a.status === 200 && shape(a, id) !== shape(missingByOp.get(op.name)!, MISSING_ID))
      problem(
        "crossTenantReads",
        `${op.name} fuzzed ${JSON.stringify(id)}: 200 ${a.text.slice(0, 120)} (seed ${options.seed}, run ${i})`
      )
    else if (
      a.status !== 200 &&
      a.status !== 400 &&
      !isRouteNotFound(a) &&
      shape(a, id) !== shape(missingByOp.get(op.name)!, MISSING_ID)
    )
      problem(
        "existenceLeaks",
        `${op.name} fuzzed ${JSON.stringify(id)}: ${a.status} ${a.text.slice(0, 120)} (seed ${options.seed}, run ${i})`
      )
  }

  const after = await snapshot(taker, maker1, [openRfq, tradedRfq])
  if (after !== before) problem("crossTenantWrites", `the owner's objects changed: ${diff(before, after)}`)

  await extraFields(taker, maker1, takerCredentials, (what) => problem("extraFieldEffects", what))
  return figures
}

const diff = (a: string, b: string) => {
  let i = 0
  while (i < a.length && a[i] === b[i]) i++
  return `…${a.slice(Math.max(0, i - 60), i + 60)} → …${b.slice(Math.max(0, i - 60), i + 60)}`
}

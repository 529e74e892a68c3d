import { createQuote, createRfq, credentialsOf, Desk, getRfq, rfqBody } from "./Lifecycle.js"
import { connectWs, type RpcReply, type WsConnection } from "./WsClient.js"

/**
 * Tenancy over JSON-RPC: the same id-taking operations as the REST run, as methods, called by an
 * outsider desk's session with the owner's ids and with a missing id (the error must be the same
 * once the id itself is blanked out, and nothing of the owner's may come back or change); and the
 * outsider, subscribed to every channel, must hear nothing about the owner's uninvited RFQ while
 * it is created, quoted, traded.
 */
export interface WsTenancyFigures {
  calls: number
  crossTenantReads: number
  crossTenantWrites: number
  existenceLeaks: number
  notificationsLeaked: number
  problems: Array<string>
}

const MISSING_ID = 2_000_000_000
const legs = [
  { instrumentName: "BTC-27DEC30-90000-C", price: 0.1 },
  { instrumentName: "BTC-27DEC30-110000-C", price: 0.05 }
]

const methods: ReadonlyArray<{
  method: string
  kind: "rfq" | "quote" | "credentials"
  params: (id: number) => unknown
}> = [
  { method: "v1/rfq/get", kind: "rfq", params: (id) => ({ id }) },
  { method: "v1/rfq/quotes", kind: "rfq", params: (id) => ({ id }) },
  { method: "v1/rfq/delete", kind: "rfq", params: (id) => ({ id }) },
  { method: "v1/rfq/cancel", kind: "rfq", params: (rfqId) => ({ rfqId }) },
  {
    method: "v1/rfq/leg-prices",
    kind: "rfq",
    params: (rfqId) => ({
      rfqId,
      price: 0.01,
      legs: [{ direction: "buy", instrumentName: "BTC-27DEC30-90000-C", ratio: 1 }]
    })
  },
  {
    method: "v1/quote/create",
    kind: "rfq",
    params: (rfqId) => ({ rfqId, direction: "sell", amount: 50, settlementOption: "DBT", legs })
  },
  { method: "v1/quote/list", kind: "rfq", params: (rfqId) => ({ rfqId }) },
  { method: "v1/quote/cancel-all", kind: "rfq", params: (rfqId) => ({ rfqId }) },
  { method: "v1/rfq/trade", kind: "quote", params: (rfqQuoteId) => ({ rfqQuoteId }) },
  {
    method: "v1/quote/update",
    kind: "quote",
    params: (rfqQuoteId) => ({ rfqQuoteId, amount: 50, settlementOption: "DBT", legs })
  },
  { method: "v1/quote/delete", kind: "quote", params: (rfqQuoteId) => ({ rfqQuoteId }) },
  { method: "v1/account/exchange-credentials/get", kind: "credentials", params: (id) => ({ id }) },
  { method: "v1/account/exchange-credentials/delete", kind: "credentials", params: (id) => ({ id }) }
]

/** Whether JSON text names the RFQ `id` (`"rfqId":12` does not name RFQ 1). */
const namesRfq = (text: string, id: number) => new RegExp(`"rfqId":${id}[,}\\]]`).test(text)

/** The reply without its id and with the object id blanked out of any reason. */
const shape = (reply: RpcReply, id: number) =>
  JSON.stringify({ result: reply.result, error: reply.error }).replace(new RegExp(`\\b${id}\\b`, "g"), "<id>")

const session = async (desk: Desk): Promise<WsConnection> => {
  const ws = await connectWs(desk.base)
  const auth = await ws.rpc("auth", { token: desk.token })
  if (auth.error !== undefined) throw new Error(`auth: ${JSON.stringify(auth.error)}`)
  return ws
}

export const runWsTenancy = async (base: string): Promise<WsTenancyFigures> => {
  const figures: WsTenancyFigures = {
    calls: 0,
    crossTenantReads: 0,
    crossTenantWrites: 0,
    existenceLeaks: 0,
    notificationsLeaked: 0,
    problems: []
  }
  const problem = (
    kind: "crossTenantReads" | "crossTenantWrites" | "existenceLeaks" | "notificationsLeaked",
    what: string
  ) => {
    figures[kind]++
    if (figures.problems.length < 30) figures.problems.push(`${kind} (WS): ${what}`)
  }
  const taker = await Desk.login(base, "demo-taker")
  const maker1 = await Desk.login(base, "demo-maker-1")
  const outsider = await Desk.login(base, "demo-maker-2")
  const listener = await session(outsider)
  const subscribed = await listener.rpc("v1/subscribe", {
    channels: ["rfq.maker", "rfq.taker", "rfq_quote.maker", "rfq_quote.taker"]
  })
  if (subscribed.error !== undefined)
    figures.problems.push(`note: subscribe refused: ${JSON.stringify(subscribed.error)}`)
  const credentials = await credentialsOf(taker)
  const openRfq = await createRfq(taker, rfqBody("single", credentials, ["maker-1"]))
  const openQuote = await createQuote(maker1, openRfq, 50)
  const tradedRfq = await createRfq(taker, rfqBody("single", credentials, ["maker-1"]))
  const tradedQuote = await createQuote(maker1, tradedRfq, 50)
  const trade = await taker.request("POST", "/v1/rfq/trade", { rfqQuoteId: tradedQuote })
  if (trade.status !== 200)
    figures.problems.push(`note: the owner's trade failed: ${trade.text.slice(0, 120)}`)
  const owned = {
    rfq: [openRfq, tradedRfq],
    quote: [openQuote, tradedQuote],
    credentials: credentials.map((c) => c.credentialsId)
  }
  const before = JSON.stringify([await getRfq(taker, openRfq), await getRfq(taker, tradedRfq), credentials])

  const ws = await session(outsider)
  for (const m of methods) {
    const missing = await ws.rpc(m.method, m.params(MISSING_ID))
    figures.calls++
    for (const id of owned[m.kind]) {
      const reply = await ws.rpc(m.method, m.params(id))
      figures.calls++
      if (shape(reply, id) !== shape(missing, MISSING_ID))
        problem(
          "existenceLeaks",
          `${m.method} ${id}: ${JSON.stringify(reply).slice(0, 160)} vs missing ${JSON.stringify(missing).slice(0, 160)}`
        )
      const text = JSON.stringify(reply.result ?? null)
      if (namesRfq(text, openRfq) || namesRfq(text, tradedRfq) || /clientSecret|"alias"/.test(text))
        problem("crossTenantReads", `${m.method} ${id} returned the owner's data`)
    }
  }
  ws.close()
  const after = JSON.stringify([
    await getRfq(taker, openRfq),
    await getRfq(taker, tradedRfq),
    await credentialsOf(taker)
  ])
  if (after !== before) problem("crossTenantWrites", "the owner's objects changed")
  // Give the hub a moment to deliver anything it (wrongly) would.
  await new Promise((r) => setTimeout(r, 500))
  for (const n of listener.notifications) {
    const text = JSON.stringify(n)
    if (namesRfq(text, openRfq) || namesRfq(text, tradedRfq))
      problem("notificationsLeaked", text.slice(0, 200))
  }
  listener.close()
  return figures
}

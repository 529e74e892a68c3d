import { Desk, getRfq, legPricesFor, rfqBody } from "./Lifecycle.js"

/**
 * API3 (broken object property level authorization): fields the server owns, sent by a client on
 * its own writes, must change nothing.
 */
/** Fields a client must not be able to set: server-owned state, another desk, prices on a trade. */
export const extraFields = async (
  taker: Desk,
  maker1: Desk,
  takerCredentials: Parameters<typeof rfqBody>[1],
  problem: (what: string) => void
) => {
  const hostile = `{"status":"filled","deskId":4,"takerDeskId":4,"role":"maker","createdAt":1,"expiresAt":9999999999999,"rfqId":1,"tradePrice":1,"__proto__":{"status":"filled","isAdmin":true},"constructor":{"prototype":{"polluted":true}}`
  const body = JSON.stringify(rfqBody("single", takerCredentials, ["maker-1"]))
  const created = await taker.request("POST", "/v1/rfq/0", `${hostile},${body.slice(1)}`)
  if (created.status !== 200) {
    problem(`create with extra fields: ${created.status} ${created.text.slice(0, 200)}`)
    return
  }
  const rfqId = (created.body as { rfqId: number }).rfqId
  const rfq = (await getRfq(taker, rfqId)) as unknown as Record<string, unknown>
  if (rfq.status !== "open") problem(`rfq status ${String(rfq.status)}`)
  if (rfq.role !== "taker") problem(`rfq role ${String(rfq.role)}`)
  if (rfq.createdAt === 1 || rfq.expiresAt === 9999999999999) problem("timestamps taken from the body")
  const outsider = await Desk.login(taker.base, "demo-maker-2")
  if ((await outsider.request("GET", `/v1/rfq/${rfqId}`)).status !== 404) problem("deskId moved the RFQ")

  const legs = (await getRfq(maker1, rfqId)).legs
  const quoteAnswer = await maker1.request("POST", "/v1/rfq/quote", {
    rfqId,
    direction: "sell",
    amount: 50,
    settlementOption: "DBT",
    legs: await legPricesFor(maker1, rfqId),
    price: 0.0001,
    status: "filled",
    makerId: "maker-2",
    deskId: 4
  })
  if (quoteAnswer.status !== 200) {
    problem(`quote with extra fields: ${quoteAnswer.status} ${quoteAnswer.text.slice(0, 200)}`)
    return
  }
  const quoteId = (quoteAnswer.body as { rfqQuoteId: number }).rfqQuoteId
  const mine = (await maker1.request("GET", `/v1/rfq/quotes?rfqId=${rfqId}`)).body as {
    results: Array<{ rfqQuoteId: number; price: number }>
  }
  const quote = mine.results.find((q) => q.rfqQuoteId === quoteId)
  if (quote === undefined) problem("the quote left its maker")
  else if (quote.price === 0.0001) problem("quote price taken from the body")
  const trade = await taker.request(
    "POST",
    "/v1/rfq/trade",
    `{"rfqQuoteId":${quoteId},"price":0.0001,"amount":1,"status":"cancelled","deskId":4,"__proto__":{"price":0.0001}}`
  )
  if (trade.status !== 200) {
    problem(`trade with extra fields: ${trade.status} ${trade.text.slice(0, 200)}`)
    return
  }
  const traded = (await getRfq(taker, rfqId)) as unknown as Record<string, unknown>
  if (traded.status !== "filled") problem(`traded status ${String(traded.status)}`)
  if (quote !== undefined && traded.tradePrice !== quote.price)
    problem(`trade price ${String(traded.tradePrice)} vs quote ${quote.price}`)
  if (traded.tradeAmount !== 50) problem(`trade amount ${String(traded.tradeAmount)}`)
  if (legs.length !== 2) problem("legs changed")
  if (({} as Record<string, unknown>).polluted !== undefined) problem("prototype polluted")
}

/**
 * A taker's execution script on `@rfq/client`: asks every maker for a price on a BTC call spread
 * (two calls of one expiry from `v1/exchange/instruments`), settled on DBT split 60/40 over two
 * of the desk's accounts, prints quotes as they arrive, waits `WAIT_SECONDS`, accepts the best ask
 * and prints the trade and each account's allocation. Exits 1 when nothing could be traded.
 *
 *   npx tsx examples/taker.ts
 *
 * Environment: RFQ_URL (http://127.0.0.1:8080), CLIENT_ID / CLIENT_SECRET (demo-taker),
 * WAIT_SECONDS (10), AMOUNT (100; each account's share must reach the venue's minimum block).
 */
import { RfqError } from "@rfq/client"
import { clientFromEnv, describeError } from "./shared.js"

const { client } = clientFromEnv("demo-taker")
const waitMs = Number(process.env.WAIT_SECONDS ?? "10") * 1000
const amount = Number(process.env.AMOUNT ?? "100")

const main = async (): Promise<number> => {
  // Two calls of the first expiry that has two, the lower strike bought: a call spread.
  const instruments = await client.call("v1/exchange/instruments", {
    exchange: "DBT",
    baseCurrency: "BTC",
    kind: "option"
  })
  const calls = instruments.filter((i) => i.optionType === "call")
  const expiry = calls.find((c) => calls.filter((o) => o.expiry === c.expiry).length >= 2)?.expiry
  const [low, high] = calls
    .filter((c) => c.expiry === expiry)
    .sort((a, b) => (a.strike ?? 0) - (b.strike ?? 0))
  if (low === undefined || high === undefined) throw new Error("no two calls of one expiry on DBT")

  // Two of the desk's DBT accounts (the demo's dbt-flaky fails every execution: left out).
  const accounts = (await client.call("v1/account/exchange-credentials", {})).filter(
    (a) => a.exchangeShortCode === "DBT" && a.alias !== "dbt-flaky"
  )
  const split =
    accounts.length >= 2
      ? [
          { credentialsId: accounts[0]!.credentialsId, percentage: 60 },
          { credentialsId: accounts[1]!.credentialsId, percentage: 40 }
        ]
      : accounts.map((a) => ({ credentialsId: a.credentialsId, percentage: 100 }))
  const makers = (await client.call("v1/exchange/maker", {}))
    .filter((m) => m.settlementOptions.includes("DBT"))
    .map((m) => m.makerId)

  const session = client.session()
  await session.subscribe(["rfq_quote.taker"], (n) => {
    const quote = n.data as { event: string; rfqQuoteId: number; price?: number; status?: string }
    console.log(`quote ${quote.event}: #${quote.rfqQuoteId} ${quote.status ?? ""} ${quote.price ?? ""}`)
  })
  try {
    const { rfqId } = await client.call("v1/rfq/create", {
      id: 0,
      baseCurrency: "BTC",
      amount,
      anonymous: false,
      settlementOptions: ["DBT"],
      makers: { DBT: makers },
      ...(split.length === 0 ? {} : { settlementAccounts: { DBT: split } }),
      legs: [
        { direction: "buy", instrumentName: low.instrumentName, ratio: 1 },
        { direction: "sell", instrumentName: high.instrumentName, ratio: 1 }
      ]
    })
    const rfq = await client.call("v1/rfq/get", { id: rfqId })
    console.log(
      `RFQ ${rfqId}: ${rfq.description}, ${amount} BTC, mark ${rfq.markPrice}, asking ${makers.join(", ")}`
    )

    await new Promise((resolve) => setTimeout(resolve, waitMs))
    const ladders = await client.call("v1/rfq/quotes", { id: rfqId })
    const best = ladders
      .flatMap((ladder) => ladder.asks)
      .sort((a, b) => a.price - b.price)
      .at(0)
    if (best === undefined) {
      console.log(`no ask within ${waitMs / 1000} s; cancelling RFQ ${rfqId}`)
      await client.call("v1/rfq/cancel", { rfqId })
      return 1
    }
    console.log(`accepting #${best.rfqQuoteId} from ${best.makers.join(", ")} at ${best.price}`)
    const trade = await client.call("v1/rfq/trade", { rfqQuoteId: best.rfqQuoteId })
    for (const t of trade.trades) {
      console.log(`trade ${t.exchangeTradeId}: ${t.direction} ${t.amount} at ${t.price}`)
    }
    for (const a of trade.allocations ?? []) {
      console.log(
        `allocation: account ${a.credentialsId} ${a.percentage}% ${a.amount} BTC ${a.status}${a.reason ? ` (${a.reason})` : ""}`
      )
    }
    const final = await client.call("v1/rfq/get", { id: rfqId })
    console.log(`RFQ ${rfqId} ${final.status}, filled ${final.filledAmount ?? 0} BTC`)
    return final.status === "filled" || final.status === "filledPartial" ? 0 : 1
  } finally {
    await session.close()
    client.logout()
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    // A service error in its words; anything else with its stack.
    console.error(error instanceof RfqError ? describeError(error) : error)
    process.exit(1)
  }
)

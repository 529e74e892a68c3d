import { legPricesFor } from "./Lifecycle.js"
import {
  allocate,
  type ExpectedBooking,
  hedgesMeetMinimum,
  legsMeetMinimum,
  type MoneyCase,
  makerSide,
  type Side,
  tenthsText
} from "./MoneyOracle.js"
import { call, note, type Party, type Prng, type Tally } from "./MoneyTally.js"

/**
 * One round of the money-rules item: a random split RFQ (maybe hedged), an RFQ with an option
 * nobody is invited on, a quote below or at the RFQ amount (created, or created in full and then
 * updated), the trade, and a bulk block trade with a random maker side; each call over REST or
 * JSON-RPC at random, each answer judged by `MoneyOracle.ts`. Bookings the ledger must hold are
 * recorded in the context.
 */

const CALL90 = "BTC-27DEC30-90000-C"
const CALL110 = "BTC-27DEC30-110000-C"
const PERPETUAL = "BTC-PERPETUAL"

export interface RoundContext {
  readonly rnd: Prng
  readonly tag: string
  readonly taker: Party
  readonly maker: Party
  /** The taker's four DBT accounts (credentials ids) and its BULL account. */
  readonly accounts: ReadonlyArray<number>
  readonly bullAccount: number
  /** Venue client id of each credentials id the run uses. */
  readonly clientIds: ReadonlyMap<number, string>
  readonly makerClientId: string
  readonly maker1Desk: number
  /** Bookings the ledger must hold: by idempotency key (RFQ trades) and by nonce (bulk). */
  readonly exact: Map<string, ExpectedBooking>
  readonly byNonce: Map<string, ExpectedBooking>
}

/** The perpetual's mark on its 0.5 tick: the markPrice of a one-leg RFQ, cancelled at once. */
const perpetualMark = async (ctx: RoundContext): Promise<number> => {
  const a = await ctx.taker.desk.request("POST", "/v1/rfq/0", {
    baseCurrency: "BTC",
    amount: 200_000,
    anonymous: false,
    settlementOptions: ["DBT"],
    settlementCredentials: { DBT: ctx.accounts[0] },
    makers: { DBT: ["maker-1"] },
    legs: [{ direction: "buy", instrumentName: PERPETUAL, ratio: 1 }]
  })
  const rfqId = (a.body as { rfqId: number }).rfqId
  const rfq = (await ctx.taker.desk.request("GET", `/v1/rfq/${rfqId}`)).body as { markPrice: number }
  await ctx.taker.desk.request("POST", "/v1/rfq/cancel", { rfqId })
  return Math.round(rfq.markPrice * 2) / 2
}

/** A random case, biased so that every outcome (refused, partial, traded) is common. */
const randomCase = (rnd: Prng) => {
  const k = [1, 1, 1, 2, 2, 2, 2, 3, 3, 4][rnd.int(0, 9)]!
  // Integer percentages from random weights: small shares happen, but not most of the time.
  const weights = Array.from({ length: k }, () => rnd.int(2, 10))
  const total = weights.reduce((a, b) => a + b, 0)
  const percentages = weights.map((w) => Math.max(1, Math.floor((w * 100) / total)))
  percentages[0] = percentages[0]! + 100 - percentages.reduce((a, b) => a + b, 0)
  const first: Side = rnd.coin() ? "buy" : "sell"
  const legs: ReadonlyArray<{ direction: Side; instrumentName: string; ratio: number }> = rnd.coin()
    ? [
        { direction: first, instrumentName: CALL90, ratio: 1 },
        { direction: first === "buy" ? "sell" : "buy", instrumentName: CALL110, ratio: rnd.int(1, 2) }
      ]
    : [{ direction: first, instrumentName: CALL90, ratio: 1 }]
  const h = rnd.next()
  const hedge = h < 0.5 ? undefined : 10 * (h < 0.6 ? rnd.int(1, 19_999) : rnd.int(20_000 * k, 100_000 * k))
  const c: MoneyCase = {
    percentages,
    rfqTenths: rnd.int(250, 1_000) * k,
    ratios: legs.map((l) => l.ratio),
    hedge
  }
  return { c, legs, hedgeSide: (rnd.coin() ? "buy" : "sell") as Side }
}

export const playRound = async (ctx: RoundContext, t: Tally, round: number): Promise<void> => {
  const { rnd } = ctx
  t.rounds++
  const { c, legs, hedgeSide } = randomCase(rnd)
  const accounts = c.percentages.map((percentage, i) => ({ credentialsId: ctx.accounts[i]!, percentage }))
  const body = {
    baseCurrency: "BTC",
    amount: c.rfqTenths / 10,
    anonymous: false,
    settlementOptions: ["DBT"],
    settlementAccounts: { DBT: accounts },
    makers: { DBT: ["maker-1"] },
    legs
  }
  const hedgePrice = c.hedge === undefined ? undefined : await perpetualMark(ctx)
  const hedge =
    hedgePrice === undefined
      ? {}
      : { hedge: { direction: hedgeSide, instrumentName: PERPETUAL, amount: c.hedge, price: hedgePrice } }
  const created = await call(ctx, t, ctx.taker, "v1/rfq/create", ["POST", "/v1/rfq/0"], { ...body, ...hedge })
  if (created.status === 0) return
  const full = allocate(c, c.rfqTenths)
  const legsOk = legsMeetMinimum(full)
  const hedgeOk = hedgesMeetMinimum(full)
  if (created.status === 200) {
    t.created++
    if (!hedgeOk) {
      t.hedgesBelowMinimumAccepted++
      note(t, `hedge below minimum accepted: ${JSON.stringify(c)}`)
    }
    if (!legsOk) {
      t.creationsAgainstRule4++
      note(t, `RFQ below minimum accepted: ${JSON.stringify(c)}`)
    }
  } else {
    t.refusedAtCreation++
    if (legsOk && hedgeOk) {
      t.creationsAgainstRule4++
      note(t, `valid RFQ refused ${created.status}: ${JSON.stringify(c)} ${created.reasons.join("; ")}`)
    }
  }

  // A second settlement option that nobody is invited on (missing, or an empty list).
  const noMakers = await call(ctx, t, ctx.taker, "v1/rfq/create", ["POST", "/v1/rfq/0"], {
    ...body,
    settlementOptions: ["DBT", "BULL"],
    settlementAccounts: { DBT: accounts, BULL: [{ credentialsId: ctx.bullAccount, percentage: 100 }] },
    makers: rnd.coin() ? { DBT: ["maker-1"] } : { DBT: ["maker-1"], BULL: [] }
  })
  if (noMakers.status === 0) return
  if (noMakers.status === 200) {
    t.optionsWithoutMakersAccepted++
    note(t, `option without makers accepted: ${JSON.stringify(noMakers.result)}`)
  }
  if (created.status !== 200) return
  const rfqId = (created.result as { rfqId: number }).rfqId

  // A quote below (or at) the RFQ amount: created at that amount, or created in full and updated.
  const r = rnd.next()
  const fraction = r < 0.25 ? 1 : r < 0.6 ? 0.5 + rnd.next() / 2 : rnd.next()
  const quoteTenths = Math.max(1, Math.round(c.rfqTenths * fraction))
  const quoted: Side = rnd.coin() ? "buy" : "sell"
  const priced = await legPricesFor(ctx.maker.desk, rfqId)
  const label = `money-${ctx.tag}-${round}`
  // The quote prices the hedge at the price the taker gave (inside the band: the mark just now).
  const fields = (tenths: number) => ({
    label,
    amount: tenths / 10,
    settlementOption: "DBT",
    legs: priced,
    ...(hedgePrice === undefined ? {} : { hedge: { instrumentName: PERPETUAL, price: hedgePrice } })
  })
  const update = quoteTenths !== c.rfqTenths && rnd.coin()
  let quoteId: number | undefined
  if (update) {
    const placed = await call(ctx, t, ctx.maker, "v1/quote/create", ["POST", "/v1/rfq/quote"], {
      rfqId,
      direction: quoted,
      ...fields(c.rfqTenths)
    })
    quoteId = (placed.result as { rfqQuoteId?: number } | undefined)?.rfqQuoteId
    if (placed.status !== 200) note(t, `quote of the full amount refused: ${placed.reasons.join("; ")}`)
  }
  const answer = update
    ? await call(ctx, t, ctx.maker, "v1/quote/update", ["PUT", "/v1/rfq/quote"], fields(quoteTenths))
    : await call(ctx, t, ctx.maker, "v1/quote/create", ["POST", "/v1/rfq/quote"], {
        rfqId,
        direction: quoted,
        ...fields(quoteTenths)
      })
  if (answer.status === 0) return
  const atQuote = allocate(c, quoteTenths)
  const valid = legsMeetMinimum(atQuote) && hedgesMeetMinimum(atQuote)
  let tradedTenths = quoteTenths
  if (answer.status === 200) {
    t.quotesAccepted++
    quoteId = (answer.result as { rfqQuoteId: number }).rfqQuoteId
    if (!valid) {
      t.quotesAcceptedBelowMinimum++
      note(t, `quote of ${quoteTenths / 10} accepted: ${JSON.stringify(c)}`)
    }
  } else {
    t.quotesRefused++
    if (valid) {
      t.quotesRefusedThoughValid++
      note(t, `valid quote of ${quoteTenths / 10} refused ${answer.status}: ${answer.reasons.join("; ")}`)
    }
    // A refused update leaves the full quote standing: it trades at the RFQ amount.
    tradedTenths = c.rfqTenths
    if (!update) return
  }
  if (quoteId === undefined) return

  // The trade: every account settles, with the oracle's amounts, on the maker's sides.
  const traded = await call(ctx, t, ctx.taker, "v1/rfq/trade", ["POST", "/v1/rfq/trade"], {
    rfqQuoteId: quoteId
  })
  if (traded.status === 0) return
  t.trades++
  const plan = allocate(c, tradedTenths)
  type Allocation = { credentialsId: number; amount: number; status: string }
  const allocations = ((traded.result as { allocations?: Array<Allocation> } | undefined)?.allocations ??
    []) as ReadonlyArray<Allocation>
  const got = JSON.stringify(allocations.map((a) => [a.status, a.amount]))
  const want = JSON.stringify(plan.map((p) => ["filled", Number(p.shareTenths) / 10]))
  if (traded.status !== 200 || got !== want) {
    t.quotesAcceptedBelowMinimum++
    note(
      t,
      `trade of ${tradedTenths / 10}: ${traded.status} ${got}, expected ${want} ${traded.reasons.join("; ")}`
    )
    return
  }
  const tradeId = (traded.result as { rfqTradeId: number }).rfqTradeId
  allocations.forEach((a, i) => {
    const p = plan[i]!
    ctx.exact.set(`rfq-${rfqId}-trade-${tradeId}-account-${a.credentialsId}`, {
      makerClientId: ctx.makerClientId,
      takerClientId: ctx.clientIds.get(a.credentialsId) ?? "?",
      legs: [
        ...legs.map((l, j) => `${makerSide(quoted, l.direction)} ${tenthsText(p.legTenths[j]!)}`),
        ...(p.hedge === undefined ? [] : [`${makerSide(quoted, hedgeSide)} ${p.hedge}`])
      ]
    })
  })

  // A bulk block trade, the maker's side at random, the maker an own or a counterparty account.
  const side: Side = rnd.coin() ? "buy" : "sell"
  const cross = rnd.coin()
  const nonce = `money-${ctx.tag}-${round}`
  const price = priced.find((p) => p.instrumentName === CALL90)!.price
  const bulk = await call(ctx, t, ctx.taker, "v1/block-trade/bulk", ["POST", "/v1/block-trade/bulk"], {
    timestamp: Date.now(),
    blockTrades: [
      {
        nonce,
        makerExchangeCredentials: cross ? `${ctx.maker1Desk}:dbt-main` : "dbt-alt",
        takerExchangeCredentials: "dbt-main",
        trades: [{ direction: side, instrumentName: CALL90, price, amount: 25 }]
      }
    ]
  })
  const id = (bulk.result as Array<{ blockTradeId?: unknown }> | undefined)?.[0]?.blockTradeId
  if (bulk.status !== 200 || !Number.isSafeInteger(id)) {
    return note(t, `bulk ${nonce}: ${bulk.status} ${JSON.stringify(bulk.result).slice(0, 200)}`)
  }
  t.bulk++
  ctx.byNonce.set(nonce, {
    makerClientId: cross ? ctx.makerClientId : ctx.clientIds.get(ctx.accounts[1]!)!,
    takerClientId: ctx.clientIds.get(ctx.accounts[0]!)!,
    legs: [`${side} 25`]
  })
}

import { BigDecimal, Effect, Option } from "effect"
import { AccountStore } from "../accounts/AccountStore.js"
import type { CreateQuoteRequest, UpdateQuoteRequest } from "../api/QuoteRequests.js"
import { type ApiError, apiError } from "../domain/Errors.js"
import type { Direction, SettlementOption } from "../domain/Primitives.js"
import { sumDecimals } from "../domain/Decimal.js"
import { structurePrice } from "../domain/StructurePrice.js"
import { allocateRfqTrade, amountRulesOf, tradeShapeOf } from "../rfq/AllocationRules.js"
import { dec, decString } from "../rfq/Dec.js"
import { type LegMarket, type QuoteCandidate, makerLegDirection } from "../rfq/QuoteRules.js"
import type { Caller, LegContract, QuoteRecord, RfqRecord } from "../rfq/RfqRecord.js"
import { Pricing, type PricingService } from "../services/Pricing.js"
import { type VenueInstrument, Venues, type VenuesService } from "../services/Venues.js"

type QuoteFields = Pick<
  CreateQuoteRequest,
  "amount" | "settlementOption" | "settlementCredentials" | "legs" | "hedge" | "label" | "validUntil"
>

/** The venue contract behind a leg's stored contract reference, with its rules. */
export const venueInstrumentOf = (
  option: SettlementOption,
  instrumentName: string,
  contract: LegContract | undefined
): Effect.Effect<VenueInstrument, ApiError, Venues> =>
  contract === undefined
    ? Effect.fail(apiError("instrumentNotFoundForLeg", `${instrumentName} on ${option}`))
    : Effect.flatMap(Venues, (venues) => listedContract(venues, option, instrumentName, contract))

/** `venueInstrumentOf` with the venues at hand (a command's hot path: one lookup, no generator). */
const listedContract = (
  venues: VenuesService,
  option: SettlementOption,
  instrumentName: string,
  contract: LegContract
): Effect.Effect<VenueInstrument, ApiError> =>
  Effect.flatMap(venues.resolve(option, instrumentName, contract.quoteCurrency), (found) =>
    Option.isNone(found)
      ? Effect.fail(
          apiError("failedToFetchInstrumentForLeg", `${instrumentName} is no longer listed on ${option}`)
        )
      : Effect.succeed(found.value)
  )

/**
 * The hedge a quote of `amount` trades: the sum of every account's share of it, as settlement will
 * book it. The RFQ's own hedge amount when the amount cannot be allocated (the rules refuse it).
 */
const quotedHedgeAmount = (
  rfq: RfqRecord,
  option: SettlementOption,
  amount: BigDecimal.BigDecimal,
  legMarkets: ReadonlyArray<LegMarket>,
  hedgeMarket: LegMarket
): string => {
  const whole = rfq.hedge?.amount ?? "0"
  if (
    !BigDecimal.isPositive(amount) ||
    BigDecimal.greaterThan(amount, BigDecimal.unsafeFromString(rfq.amount))
  ) {
    return whole
  }
  if ((rfq.settlementAccounts[option]?.length ?? 0) === 0) return whole
  const shape = tradeShapeOf(rfq, legMarkets.map(amountRulesOf), amountRulesOf(hedgeMarket))
  const allocations = allocateRfqTrade(rfq, option, amount, shape)
  return decString(sumDecimals(allocations.map((a) => a.hedge ?? BigDecimal.unsafeFromString("0"))))
}

const marketOf = (venues: VenuesService, pricing: PricingService, instrument: VenueInstrument) =>
  Effect.map(pricing.mark(instrument), (mark): LegMarket => {
    const band = venues.priceBand(instrument, mark)
    return {
      tick: decString(instrument.tickSize),
      low: decString(band.low),
      high: decString(band.high),
      amountStep: decString(instrument.amountStep),
      minBlockAmount: decString(instrument.minBlockAmount)
    }
  })

/** The leg's listed contract on `option` and its market, as a quote on it is judged. */
const legMarketOf = (
  venues: VenuesService,
  pricing: PricingService,
  option: SettlementOption,
  instrumentName: string,
  contract: LegContract | undefined
) =>
  contract === undefined
    ? Effect.fail(apiError("instrumentNotFoundForLeg", `${instrumentName} on ${option}`))
    : Effect.flatMap(listedContract(venues, option, instrumentName, contract), (instrument) =>
        Effect.map(marketOf(venues, pricing, instrument), (market) => ({ instrument, market }))
      )

/**
 * Builds the quote a maker's request describes, with every venue fact the RFQ actor's pure rules
 * need. Checks that need the desk's data (its credentials) are made here; the RFQ's rules are the
 * actor's.
 */
export const buildQuoteCandidate = (
  caller: Caller,
  rfq: RfqRecord,
  req: QuoteFields,
  identity: {
    readonly id: number
    readonly direction: Direction
    readonly createdAt: number
    readonly now: number
  }
): Effect.Effect<QuoteCandidate, ApiError, AccountStore | Venues | Pricing> =>
  Effect.gen(function* () {
    const accounts = yield* AccountStore
    const venues = yield* Venues
    const pricing = yield* Pricing
    const option = req.settlementOption
    if (!rfq.settlementOptions.includes(option)) {
      return yield* Effect.fail(
        apiError(
          "invalidRequest",
          `settlementOption: ${option} is not a settlement option of the RFQ (${rfq.settlementOptions.join(", ")})`
        )
      )
    }
    const desk = yield* accounts.credentialsOfDesk(caller.deskId)
    let credentialsId: number
    if (req.settlementCredentials !== undefined) {
      const row = desk.find((c) => c.id === req.settlementCredentials)
      if (row === undefined)
        return yield* Effect.fail(
          apiError("credentialsNotFound", `settlementCredentials ${req.settlementCredentials}`)
        )
      if (row.exchange !== option) {
        return yield* Effect.fail(
          apiError(
            "invalidRequest",
            `settlementCredentials: ${row.alias} is for ${row.exchange}, not ${option}`
          )
        )
      }
      credentialsId = row.id
    } else {
      const row =
        desk.find((c) => c.exchange === option && c.isExchangeDefault) ??
        desk.find((c) => c.exchange === option)
      if (row === undefined)
        return yield* Effect.fail(
          apiError("invalidRequest", `settlementCredentials: the desk has no ${option} credentials`)
        )
      credentialsId = row.id
    }
    const byName = new Map(req.legs.map((l) => [l.instrumentName, l]))
    for (const l of req.legs) {
      if (!rfq.legs.some((r) => r.instrumentName === l.instrumentName)) {
        return yield* Effect.fail(
          apiError("invalidRequest", `legs: ${l.instrumentName} is not a leg of the RFQ`)
        )
      }
    }
    const amount = req.amount
    const legMarkets: Array<LegMarket> = []
    const legs: Array<QuoteRecord["legs"][number]> = []
    for (const [i, leg] of rfq.legs.entries()) {
      const sent = byName.get(leg.instrumentName)
      if (sent === undefined)
        return yield* Effect.fail(apiError("invalidRequest", `legs: ${leg.instrumentName} is missing`))
      const { instrument, market } = yield* legMarketOf(
        venues,
        pricing,
        option,
        leg.instrumentName,
        leg.contracts[option]
      )
      legMarkets.push(market)
      legs.push({
        instrumentName: leg.instrumentName,
        instrumentId: instrument.instrumentId,
        direction: makerLegDirection(identity.direction, leg),
        price: decString(sent.price),
        amount: decString(BigDecimal.multiply(amount, BigDecimal.unsafeFromString(leg.ratio)))
      })
      void i
    }
    let hedge: QuoteRecord["hedge"]
    let hedgeMarket: LegMarket | undefined
    // A hedged RFQ needs the maker's hedge price: none sent leaves the quote without a hedge, which
    // the actor's rules refuse ("hedge: is missing"); the taker's price is never taken as the maker's.
    if (rfq.hedge !== undefined && req.hedge !== undefined) {
      const sentPrice = req.hedge.price
      const name = req.hedge.instrumentName
      const { instrument, market } = yield* legMarketOf(
        venues,
        pricing,
        option,
        rfq.hedge.instrumentName,
        rfq.hedge.contracts[option]
      )
      hedgeMarket = market
      hedge = {
        instrumentName: name,
        instrumentId: instrument.instrumentId,
        direction: makerLegDirection(identity.direction, rfq.hedge),
        price: decString(sentPrice),
        amount: quotedHedgeAmount(rfq, option, amount, legMarkets, hedgeMarket)
      }
    } else if (rfq.hedge === undefined && req.hedge !== undefined) {
      hedge = {
        instrumentName: req.hedge.instrumentName,
        instrumentId: 0,
        direction: identity.direction,
        price: decString(req.hedge.price),
        amount: "0"
      }
    }
    const quote: QuoteRecord = {
      id: identity.id,
      rfqId: rfq.id,
      makerId: caller.makerId ?? "",
      makerDeskId: caller.deskId,
      makerUserId: caller.userId,
      label: req.label,
      direction: identity.direction,
      settlementOption: option,
      settlementCredentials: credentialsId,
      quoteCurrency: rfq.quoteCurrencies[option] ?? rfq.quoteCurrency,
      amount: decString(amount),
      price: decString(
        structurePrice(
          rfq.legs.map((leg, i) => ({
            direction: leg.direction,
            ratio: dec(leg.ratio),
            price: dec(legs[i]!.price)
          }))
        )
      ),
      legs,
      hedge,
      status: "active",
      validUntil: req.validUntil,
      createdAt: identity.createdAt,
      updatedAt: identity.now
    }
    return { quote, caller, legMarkets, hedgeMarket, now: identity.now }
  })

export type { QuoteFields, UpdateQuoteRequest }

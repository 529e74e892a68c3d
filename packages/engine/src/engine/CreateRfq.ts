import { type BigDecimal, Effect, Either, Option } from "effect"
import type { CreateRfqRequest } from "../api/RfqRequests.js"
import { AccountStore } from "../accounts/AccountStore.js"
import { isMultipleOf } from "../domain/Decimal.js"
import { type ApiError, apiError } from "../domain/Errors.js"
import { type Instrument, legExpiryField, parseInstrument } from "../domain/Instrument.js"
import type { QuoteCurrency, SettlementOption } from "../domain/Primitives.js"
import { quoteCurrenciesFor, resolveQuoteCurrency } from "../domain/QuoteCurrencies.js"
import { legAmount, parseRatio } from "../domain/Ratio.js"
import { classifyStrategy, describeStructure, rfqKind } from "../domain/Strategy.js"
import { type PricedLeg, structurePrice } from "../domain/StructurePrice.js"
import { decString } from "../rfq/Dec.js"
import type { Caller, HedgeRecord, LegContract, LegRecord, RfqRecord } from "../rfq/RfqRecord.js"
import { resolveSettlementAccounts } from "../rfq/SettlementAccounts.js"
import { checkSplitRulesAtCreation } from "../rfq/SplitRules.js"
import { Pricing } from "../services/Pricing.js"
import { type VenueInstrument, Venues } from "../services/Venues.js"

const fail = (e: ApiError) => Effect.fail(e)
const orFail = <A>(e: Either.Either<A, ApiError>) =>
  Either.isLeft(e) ? Effect.fail(e.left) : Effect.succeed(e.right)

/** The settlement option whose quote currency the RFQ's own prices (markPrice) are in. */
export const pricingOption = (
  rfq: Pick<RfqRecord, "settlementOptions" | "quoteCurrencies" | "quoteCurrency">
) =>
  rfq.settlementOptions.find((o) => rfq.quoteCurrencies[o] === rfq.quoteCurrency) ?? rfq.settlementOptions[0]!

const contractOf = (i: VenueInstrument): LegContract => ({
  instrumentId: i.instrumentId,
  venueName: i.venueName,
  quoteCurrency: i.quoteCurrency
})

/**
 * Everything `POST /rfq/{id}` checks that needs the venues, the desk's credentials or the makers,
 * and the record it builds. The request was already decoded by its schema (split rules 1–3 there);
 * split rules 4 and 5 are `checkSplitRulesAtCreation` (`rfq/SplitRules.ts`).
 */
export const buildRfq = (
  caller: Caller,
  req: CreateRfqRequest,
  ids: { readonly id: number; readonly now: number; readonly ttlMs: number }
) =>
  Effect.gen(function* () {
    const venues = yield* Venues
    const pricing = yield* Pricing
    const accounts = yield* AccountStore
    const options = req.settlementOptions

    // Legs: names, ratios, one base currency, one kind.
    const parsed: Array<{ instrument: Instrument; ratio: BigDecimal.BigDecimal }> = []
    for (const [i, leg] of req.legs.entries()) {
      const instrument = yield* orFail(parseInstrument(leg.instrumentName))
      if (instrument.base !== req.baseCurrency) {
        return yield* fail(
          apiError(
            "invalidRequest",
            `legs[${i}].instrumentName: ${leg.instrumentName} is not a ${req.baseCurrency} instrument`
          )
        )
      }
      parsed.push({ instrument, ratio: yield* orFail(parseRatio(leg.ratio, `legs[${i}].ratio`)) })
    }
    const kind = yield* orFail(rfqKind(parsed))
    const quoteCurrency: QuoteCurrency = yield* orFail(
      resolveQuoteCurrency(req.baseCurrency, kind, req.quoteCurrency)
    )
    const quoteCurrencies = quoteCurrenciesFor(req.baseCurrency, quoteCurrency, options)

    // Every leg (and the hedge) must exist on every chosen venue, in the contract its currency picks.
    const legContracts: Array<Partial<Record<SettlementOption, VenueInstrument>>> = []
    for (const [i, leg] of req.legs.entries()) {
      const byOption: Partial<Record<SettlementOption, VenueInstrument>> = {}
      for (const option of options) {
        const found = yield* venues.resolve(option, leg.instrumentName, quoteCurrency)
        if (Option.isNone(found)) {
          return yield* fail(
            apiError(
              "instrumentNotFoundForLeg",
              `legs[${i}]: ${leg.instrumentName} is not listed on ${option}`
            )
          )
        }
        byOption[option] = found.value
      }
      legContracts.push(byOption)
    }
    let hedgeContracts: Partial<Record<SettlementOption, VenueInstrument>> | undefined
    let hedgeExpiry: string | undefined
    if (req.hedge !== undefined) {
      const hedgeInstrument = parseInstrument(req.hedge.instrumentName)
      if (Either.isLeft(hedgeInstrument)) return yield* fail(hedgeInstrument.left)
      const hk = hedgeInstrument.right.kind
      if (hk === "option" || hedgeInstrument.right.base !== req.baseCurrency) {
        return yield* fail(
          apiError(
            "invalidRequest",
            `hedge.instrumentName: must be a ${req.baseCurrency} future or perpetual`
          )
        )
      }
      hedgeExpiry = hk === "perpetual" ? undefined : legExpiryField(hedgeInstrument.right)
      hedgeContracts = {}
      for (const option of options) {
        const found = yield* venues.resolve(option, req.hedge.instrumentName, quoteCurrency)
        if (Option.isNone(found)) {
          return yield* fail(
            apiError(
              "instrumentNotFoundForHedge",
              `hedge: ${req.hedge.instrumentName} is not listed on ${option}`
            )
          )
        }
        const contract = found.value
        if (!isMultipleOf(req.hedge.price, contract.tickSize)) {
          return yield* fail(
            apiError(
              "invalidPrice",
              `hedge.price: not a multiple of the tick ${decString(contract.tickSize)}`
            )
          )
        }
        if (!isMultipleOf(req.hedge.amount, contract.amountStep)) {
          return yield* fail(
            apiError(
              "invalidRequest",
              `hedge.amount: not a multiple of the venue's amount step ${decString(contract.amountStep)}`
            )
          )
        }
        hedgeContracts[option] = contract
      }
    }

    // Settlement accounts, per option (see `resolveSettlementAccounts`).
    const desk = yield* accounts.credentialsOfDesk(caller.deskId)
    const settlementAccounts = yield* resolveSettlementAccounts(req, desk)

    // Makers: they must exist and trade through the option they are invited on.
    const makers = yield* accounts.makers
    const makerMap: Partial<Record<SettlementOption, ReadonlyArray<string>>> = {}
    for (const option of options) {
      const invited = req.makers[option]
      if (invited === undefined) continue
      for (const makerId of invited) {
        const maker = makers.find((m) => m.makerId === makerId)
        if (maker === undefined) return yield* fail(apiError("makerNotFound", `makers.${option}: ${makerId}`))
        if (maker.deskId === caller.deskId) {
          return yield* fail(
            apiError("invalidRequest", `makers.${option}: ${makerId} is the caller's own desk`)
          )
        }
        const makerCredentials = yield* accounts.credentialsOfDesk(maker.deskId)
        if (!makerCredentials.some((c) => c.exchange === option)) {
          return yield* fail(
            apiError("invalidRequest", `makers.${option}: ${makerId} cannot trade through ${option}`)
          )
        }
      }
      makerMap[option] = invited
    }

    // Marks, then split rules 4 and 5 (hedge included) with the amounts settlement would trade.
    const amount = req.amount
    const markOption = pricingOption({ settlementOptions: options, quoteCurrencies, quoteCurrency })
    const markedLegs: Array<PricedLeg> = []
    for (const [i, p] of parsed.entries()) {
      const price = yield* pricing.mark(legContracts[i]![markOption]!)
      markedLegs.push({ direction: req.legs[i]!.direction, ratio: p.ratio, price })
    }
    yield* checkSplitRulesAtCreation({
      rfqId: ids.id,
      amount,
      options,
      split: req.settlementAccounts !== undefined,
      legs: parsed.map((p, i) => ({
        instrumentName: req.legs[i]!.instrumentName,
        direction: req.legs[i]!.direction,
        ratio: p.ratio,
        contracts: legContracts[i]!
      })),
      hedge:
        req.hedge === undefined || hedgeContracts === undefined
          ? undefined
          : {
              instrumentName: req.hedge.instrumentName,
              direction: req.hedge.direction,
              amount: req.hedge.amount,
              contracts: hedgeContracts
            },
      settlementAccounts,
      desk
    })

    const strategyLegs = parsed.map((p, i) => ({
      instrument: p.instrument,
      direction: req.legs[i]!.direction,
      ratio: p.ratio
    }))
    const strategy = classifyStrategy(
      strategyLegs,
      req.hedge === undefined ? undefined : { direction: req.hedge.direction }
    )
    const legs: Array<LegRecord> = parsed.map((p, i) => {
      const leg = req.legs[i]!
      const contracts: Partial<Record<SettlementOption, LegContract>> = {}
      for (const option of options) contracts[option] = contractOf(legContracts[i]![option]!)
      return {
        instrumentName: leg.instrumentName,
        direction: leg.direction,
        ratio: decString(p.ratio),
        amount: decString(legAmount(amount, p.ratio)),
        price: leg.price === undefined ? undefined : decString(leg.price),
        expiry: p.instrument.kind === "perpetual" ? undefined : legExpiryField(p.instrument),
        contracts
      }
    })
    let hedge: HedgeRecord | undefined
    if (req.hedge !== undefined && hedgeContracts !== undefined) {
      const contracts: Partial<Record<SettlementOption, LegContract>> = {}
      for (const option of options) contracts[option] = contractOf(hedgeContracts[option]!)
      hedge = {
        instrumentName: req.hedge.instrumentName,
        direction: req.hedge.direction,
        amount: decString(req.hedge.amount),
        price: decString(req.hedge.price),
        expiry: hedgeExpiry,
        contracts
      }
    }
    const record: RfqRecord = {
      id: ids.id,
      requestId: req.requestId,
      takerDeskId: caller.deskId,
      takerUserId: caller.userId,
      label: req.label,
      kind,
      strategy,
      description: describeStructure(strategyLegs, strategy),
      baseCurrency: req.baseCurrency,
      quoteCurrency,
      quoteCurrencies,
      amount: decString(amount),
      anonymous: req.anonymous,
      settlementOptions: options,
      settlementAccounts,
      split: req.settlementAccounts !== undefined,
      makers: makerMap,
      legs,
      hedge,
      markPrice: decString(structurePrice(markedLegs)),
      createdAt: ids.now,
      expiresAt: ids.now + ids.ttlMs
    }
    return record
  })

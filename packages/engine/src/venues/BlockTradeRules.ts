import { BigDecimal } from "effect"
import { isMultipleOf } from "../domain/Decimal.js"
import { formatDecimal } from "../domain/Instrument.js"
import type { AccountPermissions, BlockTradeRequest, VenueInstrument } from "../services/Venues.js"
import type { PriceBand } from "./VenueParameters.js"

/**
 * The venue's checks of a block trade (simulation and execution run the same ones), as a pure
 * function of what the venue knows at that moment. The first violation is the answer, written for
 * the person reading the failed allocation.
 */

/** What the venue knows about one leg of the request right now. */
export interface LegView {
  /** The venue's listing of the leg's contract, if it trades now (the request's copy is not trusted). */
  readonly listed: VenueInstrument | undefined
  readonly mark: BigDecimal.BigDecimal | undefined
  readonly band: PriceBand | undefined
}

export interface BlockTradeView {
  readonly maker: AccountPermissions
  readonly taker: AccountPermissions
  /** One per request leg, in order. */
  readonly legs: ReadonlyArray<LegView>
}

const show = formatDecimal

const legViolation = (
  request: BlockTradeRequest,
  index: number,
  view: LegView | undefined
): string | undefined => {
  const leg = request.legs[index]
  if (leg === undefined) return undefined
  const label = `leg ${index + 1} (${leg.instrument.venueName})`
  if (leg.instrument.venue !== request.venue) {
    return `${label} is a ${leg.instrument.venue} contract, not a ${request.venue} one`
  }
  const listed = view?.listed
  if (listed === undefined || listed.venueName !== leg.instrument.venueName) {
    return `${label} is not listed on ${request.venue}`
  }
  const { amount, price } = leg
  if (!BigDecimal.isPositive(amount)) return `${label}: amount ${show(amount)} must be greater than 0`
  if (!isMultipleOf(amount, listed.amountStep)) {
    return `${label}: amount ${show(amount)} is not a multiple of the amount step ${show(listed.amountStep)}`
  }
  if (BigDecimal.lessThan(amount, listed.minBlockAmount)) {
    return `${label}: amount ${show(amount)} is below the minimum block trade amount ${show(listed.minBlockAmount)}`
  }
  if (!isMultipleOf(price, listed.tickSize)) {
    return `${label}: price ${show(price)} is not a multiple of the tick size ${show(listed.tickSize)}`
  }
  const { band, mark } = view ?? {}
  if (band === undefined || mark === undefined) return `${label} has no mark on ${request.venue}`
  const where = `the band [${show(band.low)}, ${show(band.high)}] around the mark ${show(mark)}`
  if (BigDecimal.lessThan(price, band.low)) return `${label}: price ${show(price)} is below ${where}`
  if (BigDecimal.greaterThan(price, band.high)) return `${label}: price ${show(price)} is above ${where}`
  return undefined
}

/** The first rule the block trade breaks, or `undefined` if the venue accepts it. */
export const blockTradeViolation = (request: BlockTradeRequest, view: BlockTradeView): string | undefined => {
  if (request.legs.length === 0) return "a block trade needs at least one leg"
  if (request.maker.clientId === request.taker.clientId) {
    return `maker and taker must be different accounts (both are ${request.maker.clientId})`
  }
  if (!view.maker.blockTrade) return `maker account ${request.maker.clientId} has no block trade permission`
  if (!view.taker.blockTrade) return `taker account ${request.taker.clientId} has no block trade permission`
  for (let i = 0; i < request.legs.length; i++) {
    const violation = legViolation(request, i, view.legs[i])
    if (violation !== undefined) return violation
  }
  return undefined
}

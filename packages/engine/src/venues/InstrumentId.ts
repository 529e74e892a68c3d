import { type BigDecimal, Option } from "effect"
import { unsafeDecimal } from "../domain/Decimal.js"
import type { Expiry, Instrument } from "../domain/Instrument.js"
import type { BaseCurrency } from "../domain/Primitives.js"
import type { ContractType } from "../domain/VenueContract.js"

/**
 * Instrument ids are the contract's structure written as bits, not a counter or a hash: the same
 * contract gets the same id on every start and at every date, and two contracts can never share
 * one. Positive 31-bit integers (they fit an `int4` column):
 *
 *   bit 30      base currency       BTC 0, ETH 1
 *   bit 29      contract type       inverse 0, linear 1
 *   bits 27–28  kind                call 0, put 1, future or perpetual 2, future spread 3
 *   bits 11–26  expiry              days from 1 Jan 2000 (names write years 2000–2099); 0 for a perpetual;
 *                                   the near leg for a spread
 *   bits 0–10   detail              option: strike / strike unit (1–2047); spread: far − near in days
 *                                   (1–2047), 0 when the far leg is the perpetual; otherwise 0
 *
 * An id is the same on both venues for the same contract type (a contract, not a listing). A
 * contract the layout cannot hold (strike off the unit, spread longer than 2047 days) has no id
 * and the venues do not list it.
 */

const DETAIL_BITS = 11
const EXPIRY_BITS = 16
const MAX_DETAIL = 2 ** DETAIL_BITS - 1
const MAX_EXPIRY_DAYS = 2 ** EXPIRY_BITS - 1
const EPOCH = Date.UTC(2000, 0, 1)
const DAY = 86_400_000

/** Strikes must be whole multiples of this unit to have an id (the strike grid is). */
export const strikeUnit: Record<BaseCurrency, BigDecimal.BigDecimal> = {
  BTC: unsafeDecimal(500),
  ETH: unsafeDecimal(25)
}

const daysOf = (e: Expiry): number => (Date.UTC(e.year, e.month - 1, e.day) - EPOCH) / DAY

/** strike / unit when whole, else -1; bigint arithmetic on the raw digits (this runs per listed option). */
const unitsOf = (strike: BigDecimal.BigDecimal, unit: BigDecimal.BigDecimal): bigint => {
  const shift = unit.scale - strike.scale
  const num = shift >= 0 ? strike.value * 10n ** BigInt(shift) : strike.value
  const den = shift >= 0 ? unit.value : unit.value * 10n ** BigInt(-shift)
  return num % den === 0n ? num / den : -1n
}

const compose = (
  base: BaseCurrency,
  contract: ContractType,
  kind: number,
  days: number,
  detail: number
): number =>
  (base === "ETH" ? 1 << 30 : 0) +
  (contract === "linear" ? 1 << 29 : 0) +
  kind * 2 ** 27 +
  days * 2 ** DETAIL_BITS +
  detail

export const instrumentId = (instrument: Instrument, contract: ContractType): Option.Option<number> => {
  const { base } = instrument
  switch (instrument.kind) {
    case "perpetual":
      return Option.some(compose(base, contract, 2, 0, 0))
    case "future": {
      const days = daysOf(instrument.expiry)
      return days < 0 || days > MAX_EXPIRY_DAYS
        ? Option.none()
        : Option.some(compose(base, contract, 2, days, 0))
    }
    case "option": {
      const days = daysOf(instrument.expiry)
      const units = unitsOf(instrument.strike, strikeUnit[base])
      return days < 0 || days > MAX_EXPIRY_DAYS || units < 1n || units > BigInt(MAX_DETAIL)
        ? Option.none()
        : Option.some(compose(base, contract, instrument.optionType === "call" ? 0 : 1, days, Number(units)))
    }
    case "future_spread": {
      const days = daysOf(instrument.near)
      const span = instrument.far === "perpetual" ? 0 : daysOf(instrument.far) - days
      return days < 0 || days > MAX_EXPIRY_DAYS || span < 0 || span > MAX_DETAIL
        ? Option.none()
        : Option.some(compose(base, contract, 3, days, span))
    }
  }
}

import { Either } from "effect"
import { type ApiError, apiError } from "./Errors.js"
import type { BaseCurrency, QuoteCurrency, SettlementOption } from "./Primitives.js"
import type { RfqKind } from "./Strategy.js"
import { contractQuoteCurrency, contractTypeFor } from "./VenueContract.js"

/**
 * Quote-currency rules (spec "Quote-currency rules", contract "RFQ creation"): the RFQ names one
 * quote currency, the base coin or USDC. DBT lists both inverse (coin) and linear (USDC)
 * contracts, so it uses the requested currency; BULL lists only linear contracts, so it uses USDC.
 */

/**
 * Default when the request names none. Options: the base currency (contract). Futures: USDC, so
 * that a futures RFQ settles in the linear contract on both venues and its amount and prices are in
 * one currency everywhere; naming the base currency explicitly selects DBT's inverse future.
 */
export const defaultQuoteCurrency = (base: BaseCurrency, kind: RfqKind): QuoteCurrency =>
  kind === "option" ? base : "USDC"

/** The requested quote currency must be the RFQ's base currency or USDC. */
export const validateQuoteCurrency = (
  base: BaseCurrency,
  requested: string
): Either.Either<QuoteCurrency, ApiError> =>
  requested === base || requested === "USDC"
    ? Either.right(requested)
    : Either.left(
        apiError(
          "invalidRequest",
          `quoteCurrency: ${JSON.stringify(requested)} must be ${base} or USDC for a ${base} RFQ`
        )
      )

/** The RFQ's quote currency: the requested one if valid, else the default for its kind. */
export const resolveQuoteCurrency = (
  base: BaseCurrency,
  kind: RfqKind,
  requested: string | undefined
): Either.Either<QuoteCurrency, ApiError> =>
  requested === undefined
    ? Either.right(defaultQuoteCurrency(base, kind))
    : validateQuoteCurrency(base, requested)

/** The quote currency of one settlement option for an RFQ quoted in `rfqQuoteCurrency`. */
export const quoteCurrencyFor = (
  base: BaseCurrency,
  rfqQuoteCurrency: QuoteCurrency,
  option: SettlementOption
): QuoteCurrency => contractQuoteCurrency(base, contractTypeFor(option, rfqQuoteCurrency))

/** The RFQ's `quoteCurrencies`: one entry per settlement option of the RFQ, no others. */
export const quoteCurrenciesFor = (
  base: BaseCurrency,
  rfqQuoteCurrency: QuoteCurrency,
  options: ReadonlyArray<SettlementOption>
): Partial<Record<SettlementOption, QuoteCurrency>> =>
  Object.fromEntries(options.map((o) => [o, quoteCurrencyFor(base, rfqQuoteCurrency, o)]))

import { assert } from "@effect/vitest"
import { BigDecimal, Either } from "effect"
import { unsafeDecimal } from "../../src/domain/Decimal.js"
import {
  type LegPriceInput,
  type LegPriceSearch,
  type LegPrices,
  legPriceSearch,
  legPrices
} from "../../src/domain/LegPrices.js"

/** What the leg-price tests share: decimals from text, exact equality, and a call that must succeed. */

export const d = unsafeDecimal

export const eq = (actual: BigDecimal.BigDecimal, expected: BigDecimal.BigDecimal, what = "") =>
  assert.isTrue(
    BigDecimal.equals(actual, expected),
    `${what}${BigDecimal.format(actual)} !== ${BigDecimal.format(expected)}`
  )

export const solve = (legs: ReadonlyArray<LegPriceInput>, target: BigDecimal.BigDecimal): LegPrices =>
  Either.getOrThrowWith(legPrices(legs, target), (e) => new Error(JSON.stringify(e.toBody())))

/** `solve`, saying whether the search ran to the end (see `legPriceSearch`). */
export const search = (legs: ReadonlyArray<LegPriceInput>, target: BigDecimal.BigDecimal): LegPriceSearch =>
  Either.getOrThrowWith(legPriceSearch(legs, target), (e) => new Error(JSON.stringify(e.toBody())))

import { BigDecimal } from "effect"
import type { Dec } from "./RfqRecord.js"

// Records hold decimals as strings and the rules parse the same few (prices, ticks, bands, amounts)
// again at every quote and accept. A BigDecimal is immutable, so one parse serves every later ask;
// the cache is dropped whole when it fills, which bounds it without bookkeeping.
const parsed = new Map<string, BigDecimal.BigDecimal>()
const PARSED_MAX = 4096

/** Parses a canonical decimal string of a record. */
export const dec = (s: Dec): BigDecimal.BigDecimal => {
  let value = parsed.get(s)
  if (value === undefined) {
    value = BigDecimal.unsafeFromString(s)
    if (parsed.size >= PARSED_MAX) parsed.clear()
    parsed.set(s, value)
  }
  return value
}

/** The canonical plain-notation string of a decimal: no exponent, no trailing zeros. */
export const decString = (x: BigDecimal.BigDecimal): Dec => {
  const n = BigDecimal.normalize(x)
  if (n.scale <= 0) return (n.value * 10n ** BigInt(-n.scale)).toString()
  const negative = n.value < 0n
  const digits = (negative ? -n.value : n.value).toString().padStart(n.scale + 1, "0")
  const cut = digits.length - n.scale
  return `${negative ? "-" : ""}${digits.slice(0, cut)}.${digits.slice(cut)}`
}

/** A decimal string as a JSON number, for responses only. */
export const decNumber = (s: Dec): number => Number(s)

export const decAdd = (a: Dec, b: Dec): Dec => decString(BigDecimal.sum(dec(a), dec(b)))
export const decMul = (a: Dec, b: Dec): Dec => decString(BigDecimal.multiply(dec(a), dec(b)))
export const decCmp = (a: Dec, b: Dec): -1 | 0 | 1 => BigDecimal.Order(dec(a), dec(b))
export const decIsPositive = (a: Dec): boolean => BigDecimal.isPositive(dec(a))

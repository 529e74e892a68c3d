import { BigDecimal, Either } from "effect"
import { type ApiError, apiError } from "./Errors.js"
import { compareExpiry, type Expiry, formatDecimal, formatExpiryCode, type Instrument } from "./Instrument.js"
import type { Direction } from "./Primitives.js"
import { ratioProportions } from "./Ratio.js"

/**
 * Strategy classification of an RFQ structure. Definitions are in docs/instruments.md; in short,
 * names follow the industry's meaning, ignore leg order, and ignore which side the whole structure
 * is traded on (flipping every leg, and the hedge, keeps the name). Wing widths are not checked:
 * a broken-wing fly is still a fly.
 */
export const strategyNames = [
  "Call",
  "Put",
  "Call Spread",
  "Put Spread",
  "Call Ratio",
  "Put Ratio",
  "Straddle",
  "Strangle",
  "Guts",
  "Risk Reversal",
  "Synthetic",
  "Collar",
  "Call Fly",
  "Put Fly",
  "IFly",
  "Iron Condor",
  "Call Condor",
  "Put Condor",
  "Call Calendar",
  "Put Calendar",
  "Diagonal",
  "Future",
  "Perp",
  "Fut Spd",
  "Custom"
] as const
export type StrategyName = (typeof strategyNames)[number]

export interface StrategyLeg {
  readonly instrument: Instrument
  readonly direction: Direction
  /** Validated ratio (> 0). */
  readonly ratio: BigDecimal.BigDecimal
}

export interface StrategyHedge {
  readonly direction: Direction
}

type OptionLeg = StrategyLeg & { readonly instrument: Extract<Instrument, { kind: "option" }> }

const isOptionLeg = (l: StrategyLeg): l is OptionLeg => l.instrument.kind === "option"

const kindRank = { option: 0, future: 1, perpetual: 2, future_spread: 3 } as const

/** First settlement of an outright or spread, perpetual last. */
const settlementKey = (i: Instrument): ReadonlyArray<Expiry | "perpetual"> =>
  i.kind === "option" || i.kind === "future"
    ? [i.expiry]
    : i.kind === "perpetual"
      ? ["perpetual"]
      : [i.near, i.far]

const compareSettlement = (a: Expiry | "perpetual", b: Expiry | "perpetual"): number =>
  a === "perpetual" ? (b === "perpetual" ? 0 : 1) : b === "perpetual" ? -1 : compareExpiry(a, b)

/** A total order on legs, so that classification never depends on the order legs were sent in. */
const compareLegs = (a: StrategyLeg, b: StrategyLeg): number => {
  const ia = a.instrument
  const ib = b.instrument
  if (ia.base !== ib.base) return ia.base < ib.base ? -1 : 1
  if (ia.kind !== ib.kind) return kindRank[ia.kind] - kindRank[ib.kind]
  const ka = settlementKey(ia)
  const kb = settlementKey(ib)
  for (let i = 0; i < Math.max(ka.length, kb.length); i++) {
    const c = compareSettlement(ka[i] ?? "perpetual", kb[i] ?? "perpetual")
    if (c !== 0) return c
  }
  if (ia.kind === "option" && ib.kind === "option") {
    const c = BigDecimal.Order(ia.strike, ib.strike)
    if (c !== 0) return c
    if (ia.optionType !== ib.optionType) return ia.optionType === "put" ? -1 : 1
  }
  if (a.direction !== b.direction) return a.direction === "buy" ? -1 : 1
  return BigDecimal.Order(a.ratio, b.ratio)
}

export const canonicalLegOrder = <L extends StrategyLeg>(legs: ReadonlyArray<L>): Array<L> =>
  [...legs].sort(compareLegs)

const allEqual = (xs: ReadonlyArray<bigint>): boolean => xs.every((x) => x === xs[0])
const sameShape = (xs: ReadonlyArray<bigint>, shape: ReadonlyArray<bigint>): boolean =>
  xs.length === shape.length && xs.every((x, i) => x === shape[i])

const classifyOptions = (legs: ReadonlyArray<OptionLeg>, hedge: StrategyHedge | undefined): StrategyName => {
  const p = ratioProportions(legs.map((l) => l.ratio))
  const sameExpiry = legs.every((l) => compareExpiry(l.instrument.expiry, legs[0]!.instrument.expiry) === 0)
  const sameType = legs.every((l) => l.instrument.optionType === legs[0]!.instrument.optionType)
  const typeName = legs[0]!.instrument.optionType === "call" ? "Call" : "Put"
  const strikesIncreasing = legs.every(
    (l, i) => i === 0 || BigDecimal.greaterThan(l.instrument.strike, legs[i - 1]!.instrument.strike)
  )
  const dir = (i: number): Direction => legs[i]!.direction

  if (legs.length === 1) return typeName
  if (legs.length === 2) {
    const [a, b] = legs as unknown as readonly [OptionLeg, OptionLeg]
    const sameStrike = BigDecimal.equals(a.instrument.strike, b.instrument.strike)
    if (sameType) {
      if (dir(0) === dir(1)) return "Custom"
      if (sameExpiry) {
        if (sameStrike) return "Custom"
        return allEqual(p) ? `${typeName} Spread` : `${typeName} Ratio`
      }
      if (!allEqual(p)) return "Custom"
      return sameStrike ? `${typeName} Calendar` : "Diagonal"
    }
    if (!sameExpiry || !allEqual(p)) return "Custom"
    const put = a.instrument.optionType === "put" ? a : b
    const call = put === a ? b : a
    const strikeOrder = BigDecimal.Order(put.instrument.strike, call.instrument.strike)
    if (put.direction === call.direction)
      return strikeOrder === 0 ? "Straddle" : strikeOrder < 0 ? "Strangle" : "Guts"
    if (strikeOrder === 0) return "Synthetic"
    // A hedge on the put's side turns the risk reversal into a collar (long coin, long put, short
    // call), or its mirror image; a hedge on the call's side only adds delta, so it stays a RR.
    return hedge !== undefined && hedge.direction === put.direction ? "Collar" : "Risk Reversal"
  }
  if (!sameExpiry) return "Custom"
  if (legs.length === 3) {
    const fly =
      sameType && strikesIncreasing && sameShape(p, [1n, 2n, 1n]) && dir(0) === dir(2) && dir(0) !== dir(1)
    return fly ? `${typeName} Fly` : "Custom"
  }
  if (legs.length === 4 && allEqual(p)) {
    if (sameType) {
      const condor = strikesIncreasing && dir(0) === dir(3) && dir(1) === dir(2) && dir(0) !== dir(1)
      return condor ? `${typeName} Condor` : "Custom"
    }
    const puts = legs.filter((l) => l.instrument.optionType === "put")
    const calls = legs.filter((l) => l.instrument.optionType === "call")
    if (puts.length !== 2 || calls.length !== 2) return "Custom"
    const [outerPut, innerPut] = puts as unknown as readonly [OptionLeg, OptionLeg]
    const [innerCall, outerCall] = calls as unknown as readonly [OptionLeg, OptionLeg]
    const wingsOk =
      BigDecimal.lessThan(outerPut.instrument.strike, innerPut.instrument.strike) &&
      BigDecimal.lessThan(innerCall.instrument.strike, outerCall.instrument.strike)
    const sidesOk =
      innerPut.direction === innerCall.direction &&
      outerPut.direction === outerCall.direction &&
      innerPut.direction !== outerPut.direction
    if (!wingsOk || !sidesOk) return "Custom"
    const body = BigDecimal.Order(innerPut.instrument.strike, innerCall.instrument.strike)
    return body === 0 ? "IFly" : body < 0 ? "Iron Condor" : "Custom"
  }
  return "Custom"
}

const classifyFutures = (legs: ReadonlyArray<StrategyLeg>): StrategyName => {
  if (legs.length === 1) {
    const kind = legs[0]!.instrument.kind
    return kind === "future"
      ? "Future"
      : kind === "perpetual"
        ? "Perp"
        : kind === "future_spread"
          ? "Fut Spd"
          : "Custom"
  }
  if (legs.length !== 2) return "Custom"
  const [a, b] = legs as unknown as readonly [StrategyLeg, StrategyLeg]
  const outright = (l: StrategyLeg) => l.instrument.kind === "future" || l.instrument.kind === "perpetual"
  if (!outright(a) || !outright(b) || a.direction === b.direction) return "Custom"
  const differentSettlement =
    compareSettlement(settlementKey(a.instrument)[0]!, settlementKey(b.instrument)[0]!) !== 0
  return differentSettlement && allEqual(ratioProportions([a.ratio, b.ratio])) ? "Fut Spd" : "Custom"
}

/** Classifies a structure; anything outside the definitions is `Custom`. */
export const classifyStrategy = (legs: ReadonlyArray<StrategyLeg>, hedge?: StrategyHedge): StrategyName => {
  if (legs.length === 0) return "Custom"
  const sorted = canonicalLegOrder(legs)
  if (sorted.some((l) => l.instrument.base !== sorted[0]!.instrument.base)) return "Custom"
  if (sorted.every(isOptionLeg)) return classifyOptions(sorted, hedge)
  if (sorted.some(isOptionLeg)) return "Custom"
  return classifyFutures(sorted)
}

// ---------------------------------------------------------------------------------------------
// Kind and description

export type LegsKind = "option" | "future" | "mixed" | "empty"
export type RfqKind = "option" | "future"

export const legsKind = (legs: ReadonlyArray<{ readonly instrument: Instrument }>): LegsKind => {
  if (legs.length === 0) return "empty"
  const options = legs.filter((l) => l.instrument.kind === "option").length
  return options === legs.length ? "option" : options === 0 ? "future" : "mixed"
}

/**
 * The RFQ `kind`: `option` or `future`. Options and futures cannot share one RFQ because the RFQ
 * amount is in base-currency units for options and quote-currency units for futures; a future
 * that offsets an option structure's delta belongs in `hedge`.
 */
export const rfqKind = (
  legs: ReadonlyArray<{ readonly instrument: Instrument }>
): Either.Either<RfqKind, ApiError> => {
  const kind = legsKind(legs)
  if (kind === "empty") return Either.left(apiError("invalidRequest", "legs: an RFQ needs at least one leg"))
  if (kind === "mixed") {
    return Either.left(
      apiError(
        "invalidRequest",
        "legs: options and futures cannot be mixed in one RFQ (the amount is in base units for options and quote units for futures); put a future hedge in `hedge`"
      )
    )
  }
  return Either.right(kind)
}

const settlementsOf = (i: Instrument): ReadonlyArray<Expiry | "perpetual"> =>
  i.kind === "future_spread" ? [i.near, i.far] : settlementKey(i)

/** `BTC 27DEC30 90000/110000 Call Spread`; format defined in docs/instruments.md. */
export const describeStructure = (legs: ReadonlyArray<StrategyLeg>, strategy?: StrategyName): string => {
  const name = strategy ?? classifyStrategy(legs)
  const bases = [...new Set(legs.map((l) => l.instrument.base))].sort().join("/")
  if (name === "Custom" || legs.length === 0) {
    return `${bases === "" ? "" : `${bases} `}Custom ${legs.length} ${legs.length === 1 ? "leg" : "legs"}`
  }
  const settlements = legs.flatMap((l) => settlementsOf(l.instrument))
  const dated = settlements
    .filter((s): s is Expiry => s !== "perpetual")
    .sort(compareExpiry)
    .map(formatExpiryCode)
  const expiries = [...new Set(dated)]
  if (expiries.length > 0 && settlements.includes("perpetual")) expiries.push("PERP")
  const optionLegs = canonicalLegOrder(legs).filter(isOptionLeg)
  const strikes = [
    ...new Set(
      optionLegs
        .map((l) => l.instrument.strike)
        .sort(BigDecimal.Order)
        .map(formatDecimal)
    )
  ]
  const ratios =
    name === "Call Ratio" || name === "Put Ratio"
      ? ratioProportions(optionLegs.map((l) => l.ratio)).join("x")
      : ""
  return [bases, expiries.join("/"), strikes.join("/"), ratios, name].filter((s) => s !== "").join(" ")
}

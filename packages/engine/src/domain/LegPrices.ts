import { BigDecimal, Either } from "effect"
import { abs, BoxSearch, BudgetExhausted, bigMax, clamp, SearchBudget } from "./BoxSearch.js"
import {
  bigintCeilDiv,
  bigintFloorDiv,
  bigintRoundDiv,
  ceilUnits,
  commonScale,
  floorUnits,
  fromUnits,
  roundUnits,
  toScaledInteger
} from "./Decimal.js"
import { type ApiError, apiError } from "./Errors.js"
import { GroupedSearch } from "./WeightGroups.js"
import type { Direction } from "./Primitives.js"
import { structurePrice } from "./StructurePrice.js"

/** A leg to price: its venue tick, the venue's band [bandLow, bandHigh] and its mark. */
export interface LegPriceInput {
  readonly instrumentName: string
  readonly direction: Direction
  readonly ratio: BigDecimal.BigDecimal
  readonly mark: BigDecimal.BigDecimal
  readonly tick: BigDecimal.BigDecimal
  readonly bandLow: BigDecimal.BigDecimal
  readonly bandHigh: BigDecimal.BigDecimal
}

export interface LegPrice {
  readonly instrumentName: string
  readonly direction: Direction
  readonly ratio: BigDecimal.BigDecimal
  readonly price: BigDecimal.BigDecimal
}

export interface LegPrices {
  readonly legs: ReadonlyArray<LegPrice>
  /** Σ sᵢ·ratioᵢ·priceᵢ − target: 0 when the target is reproduced exactly. */
  readonly priceDifference: BigDecimal.BigDecimal
}

/**
 * Work limit of one `legPrices` call, in search steps (candidate values tried). Realistic structures
 * need a few hundred; the limit only stops adversarial inputs from running long. When it is reached
 * the best answer found so far is returned, still on tick, in band and with an honest priceDifference.
 */
export const legPriceSearchBudget = 100_000

/**
 * Leg prices for a target structure price (the contract's "Leg prices" rule; docs/algorithms.md).
 *
 * Prices are kᵢ·tickᵢ with kᵢ whole, inside [bandLow, bandHigh]. dᵢ = kᵢ − kᵢ⁰ counts the ticks a leg
 * moved from its start kᵢ⁰ (the mark rounded to the tick, half away from zero, clamped into the
 * band). The answer minimises, in this order:
 *  1. |achieved − target| (0 whenever some on-tick, in-band answer reproduces the target; on a tie
 *     the lower achieved price),
 *  2. max |dᵢ|: no leg moves further from its mark than it must,
 *  3. for one deterministic answer, leg by leg from the largest |ratio·tick| (the leg whose tick moves
 *     the structure price most; input order on a tie): |dᵢ| smallest, then the lower price.
 *
 * Fails with `invalidRequest` when there is no leg, a tick or ratio is not > 0, or a band holds no
 * price on its tick.
 */
export const legPrices = (
  legs: ReadonlyArray<LegPriceInput>,
  target: BigDecimal.BigDecimal
): Either.Either<LegPrices, ApiError> => Either.map(legPriceSearch(legs, target), (found) => found.prices)

/** `legPrices` and whether its search ran to the end (false: the work limit was reached first). */
export interface LegPriceSearch {
  readonly prices: LegPrices
  readonly searchComplete: boolean
}

/**
 * `legPrices`, saying whether the search ran to the end: when it did, the answer is the one the
 * objective defines; when the work limit came first, the best answer found so far (see
 * `legPriceSearchBudget`).
 */
export const legPriceSearch = (
  legs: ReadonlyArray<LegPriceInput>,
  target: BigDecimal.BigDecimal
): Either.Either<LegPriceSearch, ApiError> => {
  const invalid = validate(legs)
  if (invalid.length > 0) return Either.left(apiError("invalidRequest", invalid))

  // The integer problem: Σ aᵢ·kᵢ = T on the grid 10^−scale, where aᵢ = sᵢ·ratioᵢ·tickᵢ.
  const weights = legs.map((leg) => {
    const w = BigDecimal.multiply(leg.ratio, leg.tick)
    return leg.direction === "buy" ? w : BigDecimal.negate(w)
  })
  const scale = commonScale([...weights, target])
  const a = weights.map((w) => toScaledInteger(w, scale))
  const low = legs.map((leg) => ceilUnits(leg.bandLow, leg.tick))
  const high = legs.map((leg) => floorUnits(leg.bandHigh, leg.tick))
  const start = legs.map((leg, i) => clamp(roundUnits(leg.mark, leg.tick), low[i]!, high[i]!))
  const startSum = a.reduce((sum, ai, i) => sum + ai * start[i]!, 0n)
  const residual = toScaledInteger(target, scale) - startSum

  // A leg whose band holds one price on its tick cannot move: it stays out of the search, where its
  // weight would only shrink the gcd the search prunes with (a 0.01 × 5 leg beside legs of weight 5
  // made every multiple of 0.05 a candidate sum and spent the whole work limit).
  const order = searchOrder(a).filter((i) => low[i]! < high[i]!)
  const { moves: found, complete } =
    order.length === 0
      ? { moves: [], complete: true }
      : solveMoves(
          order.map((i) => a[i]!),
          order.map((i) => low[i]! - start[i]!),
          order.map((i) => high[i]! - start[i]!),
          residual
        )
  const moves = a.map(() => 0n)
  order.forEach((i, k) => {
    moves[i] = found[k]!
  })
  const priced = legs.map((leg, i) => ({
    instrumentName: leg.instrumentName,
    direction: leg.direction,
    ratio: leg.ratio,
    price: fromUnits(start[i]! + moves[i]!, leg.tick)
  }))
  return Either.right({
    prices: {
      legs: priced,
      priceDifference: BigDecimal.normalize(BigDecimal.subtract(structurePrice(priced), target))
    },
    searchComplete: complete
  })
}

/** Legs by |aᵢ| descending, input order on a tie: the search and tie-break order. */
const searchOrder = (a: ReadonlyArray<bigint>): ReadonlyArray<number> =>
  a.map((_, i) => i).sort((i, j) => (abs(a[j]!) > abs(a[i]!) ? 1 : abs(a[j]!) < abs(a[i]!) ? -1 : i - j))

const validate = (legs: ReadonlyArray<LegPriceInput>): ReadonlyArray<string> => {
  if (legs.length === 0) return ["legs: at least one leg is required"]
  const reasons: Array<string> = []
  legs.forEach((leg, i) => {
    const name = `legs[${i}] ${leg.instrumentName}`
    if (!BigDecimal.isPositive(leg.ratio)) reasons.push(`${name}: ratio must be greater than 0`)
    if (!BigDecimal.isPositive(leg.tick)) {
      reasons.push(`${name}: tick size must be greater than 0`)
    } else if (ceilUnits(leg.bandLow, leg.tick) > floorUnits(leg.bandHigh, leg.tick)) {
      reasons.push(
        `${name}: no price on tick ${BigDecimal.format(leg.tick)} inside the band ` +
          `[${BigDecimal.format(leg.bandLow)}, ${BigDecimal.format(leg.bandHigh)}]`
      )
    }
  })
  return reasons
}

/** A set of moves d (ticks per leg) and what they add up to: Σ aᵢ·dᵢ. */
interface Candidate {
  readonly moves: ReadonlyArray<bigint>
  readonly sum: bigint
}

/**
 * Moves dᵢ ∈ [loᵢ, hiᵢ] (loᵢ ≤ 0 ≤ hiᵢ) with Σ aᵢ·dᵢ as close to `residual` as possible, then
 * minimax, then the tie-break order (see `legPrices`). |aᵢ| must be descending.
 */
const solveMoves = (
  a: ReadonlyArray<bigint>,
  lo: ReadonlyArray<bigint>,
  hi: ReadonlyArray<bigint>,
  residual: bigint
): { readonly moves: ReadonlyArray<bigint>; readonly complete: boolean } => {
  const budget = new SearchBudget(legPriceSearchBudget)
  // Which sums are reachable, and within which largest move, is asked of one unknown per |aᵢ|
  // (`WeightGroups.ts`); only the tie-break needs the legs one by one.
  const grouped = new GroupedSearch(a, budget)
  // If the work limit is ever reached, the best answer seen so far stands; the first costs no search.
  let best = greedyMoves(a, lo, hi, residual)
  try {
    // When the quick answer reaches the residual itself, no sum is nearer (0 when the marks already
    // make the target): no search for it, and its largest move bounds D.
    const sum = best.sum === residual ? residual : nearestReachable(a, grouped, budget, lo, hi, residual)
    // Binary search for the smallest D such that some answer keeps every |dᵢ| ≤ D; feasibility only
    // grows with D. Σ|aᵢ|·D ≥ |sum| bounds D from below, the widest band (or the quick answer's
    // largest move) from above. The lower bound is tried first: it is often the answer, and small
    // boxes are the cheap searches.
    const totalWeight = a.reduce((s, ai) => s + abs(ai), 0n)
    let dLow = bigintCeilDiv(abs(sum), totalWeight)
    let dHigh =
      best.sum === sum ? bigMax(0n, ...best.moves.map(abs)) : bigMax(0n, ...lo.map((l) => -l), ...hi)
    if (dLow < dHigh) {
      const moves = grouped.find(sum, boxAt(lo, -dLow), boxAt(hi, dLow))
      if (moves !== undefined) {
        best = { moves, sum }
        dHigh = dLow
      } else {
        dLow += 1n
      }
    }
    while (dLow < dHigh) {
      const d = (dLow + dHigh) / 2n
      const moves = grouped.find(sum, boxAt(lo, -d), boxAt(hi, d))
      if (moves === undefined) {
        dLow = d + 1n
      } else {
        best = { moves, sum }
        dHigh = d
      }
    }
    if (best.sum !== sum) {
      // The binary search had nothing to narrow (one value of D): an answer at D, should the
      // tie-break below run out of work.
      const moves = grouped.find(sum, boxAt(lo, -dLow), boxAt(hi, dLow))
      if (moves !== undefined) best = { moves, sum }
    }
    const search = new BoxSearch(a, budget)
    const moves = search.find(sum, boxAt(lo, -dLow), boxAt(hi, dLow), "tieBreak") ?? best.moves
    return { moves, complete: true }
  } catch (e) {
    if (e instanceof BudgetExhausted) return { moves: best.moves, complete: false }
    throw e
  }
}

const boxAt = (bounds: ReadonlyArray<bigint>, limit: bigint): ReadonlyArray<bigint> =>
  bounds.map((b) => (limit < 0n ? (b > limit ? b : limit) : b < limit ? b : limit))

/**
 * A quick answer without search: spread the residual over the legs in proportion to |aᵢ| (legs in
 * descending |aᵢ|) and let the last, smallest one round off the rest. Off the residual by at most
 * half that leg's weight unless a band stops it.
 */
const greedyMoves = (
  a: ReadonlyArray<bigint>,
  lo: ReadonlyArray<bigint>,
  hi: ReadonlyArray<bigint>,
  residual: bigint
): Candidate => {
  let weightLeft = a.reduce((s, ai) => s + abs(ai), 0n)
  let rest = residual
  const moves = a.map((ai, i) => {
    // Leg i's share rest·|aᵢ|/Σ|a| in value is rest/Σ|a| ticks in the direction of sign(aᵢ).
    const d = clamp(bigintRoundDiv(ai < 0n ? -rest : rest, weightLeft), lo[i]!, hi[i]!)
    rest -= ai * d
    weightLeft -= abs(ai)
    return d
  })
  return { moves, sum: residual - rest }
}

/** Multiples of g nearest the residual tried one by one before the slack search. */
const nearbyTries = 4

/**
 * The reachable sum nearest to `residual`, the lower on a tie. Outside [min, max] that is the bound
 * (every leg at a band edge). Inside, reachable sums are multiples of g = gcd(aᵢ) and consecutive
 * ones are at most max|aᵢ| apart (from any reachable sum below the maximum, one more tick on some
 * leg reaches a higher one). "Some reachable sum lies within m of residual" is itself an exact
 * question with one more unknown, a slack e of weight −g: Σ aᵢ·dᵢ − g·e = C with C a multiple of g
 * and e bounded by m; a binary search finds the smallest such m.
 */
const nearestReachable = (
  a: ReadonlyArray<bigint>,
  search: GroupedSearch,
  budget: SearchBudget,
  lo: ReadonlyArray<bigint>,
  hi: ReadonlyArray<bigint>,
  residual: bigint
): bigint => {
  const [min, max] = search.range(lo, hi)
  if (residual <= min) return min
  if (residual >= max) return max
  const g = search.gcd
  // Usually one of the multiples of g nearest the residual is reachable: try a few first.
  let down = bigintFloorDiv(residual, g) * g
  let up = down + g
  for (let tries = 0; tries < nearbyTries; tries++) {
    const useDown = residual - down <= up - residual
    const sum = useDown ? down : up
    if (sum >= min && sum <= max && search.find(sum, lo, hi) !== undefined) return sum
    if (useDown) down -= g
    else up += g
  }
  // The slack's weight −g joins the legs of weight ±g as one unknown (`WeightGroups.ts`).
  const withSlack = new GroupedSearch([...a, -g], budget)
  const base = bigintFloorDiv(residual, g) * g
  const within = (m: bigint): boolean =>
    withSlack.find(
      base,
      [...lo, bigintCeilDiv(residual - m - base, g)],
      [...hi, bigintFloorDiv(residual + m - base, g)]
    ) !== undefined
  let mLow = 0n
  let mHigh = search.largestWeight
  while (mLow < mHigh) {
    const m = (mLow + mHigh) / 2n
    if (within(m)) mHigh = m
    else mLow = m + 1n
  }
  const lower = residual - mLow
  return lower % g === 0n && search.find(lower, lo, hi) !== undefined ? lower : residual + mLow
}

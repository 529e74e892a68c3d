import { bigintCeilDiv, bigintFloorDiv, bigintRoundDiv } from "./Decimal.js"

/**
 * Exact search for integers d₀…dₙ₋₁ inside a box [loᵢ, hiᵢ] with Σ aᵢ·dᵢ = sum (aᵢ ≠ 0), the
 * integer core of the leg-price rule (see LegPrices.ts and docs/algorithms.md).
 *
 * The search is complete: with more than three unknowns left it tries, for the next one, every
 * value that keeps the rest's range and gcd congruence satisfiable; three unknowns are decided
 * exactly by counting lattice points in a 2-D polygon with floor sums; two by the extended Euclidean
 * algorithm. Whether unknowns i… can make a given rest does not depend on how the earlier ones got
 * there, so failures are remembered per (i, rest). A step budget bounds the work; past it the search
 * throws `BudgetExhausted`.
 *
 * Over 300 lines on purpose: one algorithm whose cases (n > 3, 3, 2, 1 unknowns) share the memo
 * and the budget; split, they would need to export internals.
 */

/**
 * "tieBreak": each unknown nearest 0 first, the lower on a tie, so the first answer found is the
 * lexicographically first in that order. "balanced": nearest the value that puts every remaining
 * unknown at the same relative place in its box, which reaches some answer fastest.
 */
export type SearchOrder = "tieBreak" | "balanced"

export class BudgetExhausted {
  readonly _tag = "BudgetExhausted"
}

/** Search steps left, shared by every search of one computation. */
export class SearchBudget {
  constructor(private left: number) {}
  spend(): void {
    if (--this.left < 0) throw new BudgetExhausted()
  }
}

export const abs = (x: bigint): bigint => (x < 0n ? -x : x)
export const clamp = (x: bigint, lo: bigint, hi: bigint): bigint => (x < lo ? lo : x > hi ? hi : x)
/** Math.max for bigints (Math.max throws on them). */
export const bigMax = (first: bigint, ...rest: ReadonlyArray<bigint>): bigint => {
  let m = first
  for (const x of rest) if (x > m) m = x
  return m
}
/** Math.min for bigints. */
export const bigMin = (first: bigint, ...rest: ReadonlyArray<bigint>): bigint => {
  let m = first
  for (const x of rest) if (x < m) m = x
  return m
}
export const gcd = (x: bigint, y: bigint): bigint => {
  x = abs(x)
  y = abs(y)
  while (y !== 0n) [x, y] = [y, x % y]
  return x
}
const mod = (x: bigint, m: bigint): bigint => ((x % m) + m) % m

/** [g, u, v] with x·u + y·v = g = gcd(x, y), for any signs. */
const extendedGcd = (x: bigint, y: bigint): [bigint, bigint, bigint] => {
  let [r0, r1, u0, u1, v0, v1] = [abs(x), abs(y), 1n, 0n, 0n, 1n]
  while (r1 !== 0n) {
    const q = r0 / r1
    ;[r0, r1] = [r1, r0 - q * r1]
    ;[u0, u1] = [u1, u0 - q * u1]
    ;[v0, v1] = [v1, v0 - q * v1]
  }
  return [r0, x < 0n ? -u0 : u0, y < 0n ? -v0 : v0]
}

const modInverse = (x: bigint, m: bigint): bigint => mod(extendedGcd(mod(x, m), m)[1], m)

/** Σ_{i=0}^{n−1} ⌊(a·i + b)/m⌋ for m > 0 and any a, b (the classic Euclid-like floor sum). */
const floorSum = (n: bigint, m: bigint, a: bigint, b: bigint): bigint => {
  if (n <= 0n) return 0n
  const qa = bigintFloorDiv(a, m)
  const qb = bigintFloorDiv(b, m)
  let answer = (qa * n * (n - 1n)) / 2n + qb * n
  a -= qa * m
  b -= qb * m
  for (;;) {
    if (a >= m) {
      answer += ((n * (n - 1n)) / 2n) * (a / m)
      a %= m
    }
    if (b >= m) {
      answer += n * (b / m)
      b %= m
    }
    const yMax = a * n + b
    if (yMax < m) return answer
    n = yMax / m
    b = yMax % m
    ;[m, a] = [a, m]
  }
}

/** The rational line k ↦ (α·k + β)/γ, γ > 0. */
interface Line {
  readonly alpha: bigint
  readonly beta: bigint
  readonly gamma: bigint
}

/** line1(k) ≤ line2(k) ⟺ slope·k ≤ offset. */
const lineOrder = (l1: Line, l2: Line): [bigint, bigint] => [
  l1.alpha * l2.gamma - l2.alpha * l1.gamma,
  l2.beta * l1.gamma - l1.beta * l2.gamma
]

const lineAtMost = (l1: Line, l2: Line, k: bigint): boolean => {
  const [slope, offset] = lineOrder(l1, l2)
  return slope * k <= offset
}

/** Σ_{k=s}^{e} ⌊line(k)⌋. */
const sumFloor = (line: Line, s: bigint, e: bigint): bigint =>
  floorSum(e - s + 1n, line.gamma, line.alpha, line.alpha * s + line.beta)

/** Σ_{k=s}^{e} ⌈line(k)⌉ = −Σ ⌊−line(k)⌋. */
const sumCeil = (line: Line, s: bigint, e: bigint): bigint =>
  -floorSum(e - s + 1n, line.gamma, -line.alpha, -(line.alpha * s + line.beta))

/** The t-bounds ⌈lower(k)⌉ ≤ t ≤ ⌊upper(k)⌋ from lo ≤ P·k + Q + s·t ≤ hi (s ≠ 0). */
const strip = (p: bigint, q: bigint, s: bigint, lo: bigint, hi: bigint): { lower: Line; upper: Line } =>
  s > 0n
    ? { lower: { alpha: -p, beta: lo - q, gamma: s }, upper: { alpha: -p, beta: hi - q, gamma: s } }
    : { lower: { alpha: p, beta: q - hi, gamma: -s }, upper: { alpha: p, beta: q - lo, gamma: -s } }

/**
 * Counts integer points (k, t) with k in [k1, k2] and ⌈max lowers(k)⌉ ≤ t ≤ ⌊min uppers(k)⌋, each
 * family having two lines. Where every upper line lies above every lower line (an interval of k, as
 * min-of-uppers is concave and max-of-lowers convex) a column holds ⌊min⌋ − ⌈max⌉ + 1 ≥ 0 points;
 * elsewhere none. That interval splits into at most three pieces on which the min and the max are
 * each one line, and each piece is summed with floor sums.
 */
const countPoints = (
  lowers: readonly [Line, Line],
  uppers: readonly [Line, Line],
  k1: bigint,
  k2: bigint
): bigint => {
  let from = k1
  let to = k2
  for (const u of uppers) {
    for (const l of lowers) {
      // l(k) ≤ u(k) ⟺ slope·k ≤ offset
      const [slope, offset] = lineOrder(l, u)
      if (slope === 0n) {
        if (offset < 0n) return 0n
      } else if (slope > 0n) {
        const bound = bigintFloorDiv(offset, slope)
        if (bound < to) to = bound
      } else {
        const bound = bigintCeilDiv(offset, slope)
        if (bound > from) from = bound
      }
    }
  }
  if (from > to) return 0n
  const cuts = [lineOrder(uppers[0], uppers[1]), lineOrder(lowers[0], lowers[1])]
    .filter(([slope]) => slope !== 0n)
    .map(([slope, offset]) => bigintFloorDiv(offset, slope))
    .filter((c) => c >= from && c < to)
    .sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))
  let total = 0n
  let start = from
  for (const end of [...cuts, to]) {
    if (end < start) continue
    const upper = lineAtMost(uppers[0], uppers[1], start) ? uppers[0] : uppers[1]
    const lower = lineAtMost(lowers[0], lowers[1], start) ? lowers[1] : lowers[0]
    total += sumFloor(upper, start, end) - sumCeil(lower, start, end) + (end - start + 1n)
    start = end + 1n
  }
  return total
}

/**
 * a·x + b·y = sum with x and y in their boxes. All solutions are x = x0 + t·b/g, y = y0 − t·a/g;
 * the one kept has x nearest `anchor`, then the lower x, then y nearest 0, then the lower y.
 */
const solvePair = (
  a: bigint,
  b: bigint,
  sum: bigint,
  [xl, xu]: readonly [bigint, bigint],
  [yl, yu]: readonly [bigint, bigint],
  anchor: bigint
): Array<bigint> | undefined => {
  const [g, u, v] = extendedGcd(a, b)
  if (sum % g !== 0n) return undefined
  const x0 = u * (sum / g)
  const y0 = v * (sum / g)
  const xStep = b / g
  const yStep = -a / g
  const [txl, txu] = stepRange(x0, xStep, xl, xu)
  const [tyl, tyu] = stepRange(y0, yStep, yl, yu)
  const tl = bigMax(txl, tyl)
  const tu = bigMin(txu, tyu)
  if (tl > tu) return undefined
  // |x(t) − anchor| is convex in t: its minimum on [tl, tu] is at the clamped floor or ceiling of
  // the real t where x(t) = anchor.
  const ts = [bigintFloorDiv(anchor - x0, xStep), bigintCeilDiv(anchor - x0, xStep)].map((t) =>
    clamp(t, tl, tu)
  )
  const [best] = ts
    .map((t) => [x0 + xStep * t, y0 + yStep * t] as [bigint, bigint])
    .sort(([x1, y1], [x2, y2]) => compareNear(x1 - anchor, x2 - anchor) || compareNear(y1, y2))
  return best
}

/** Nearer 0 first, then the lower. */
const compareNear = (x: bigint, y: bigint): number => {
  const d = abs(x) - abs(y)
  return d !== 0n ? (d < 0n ? -1 : 1) : x === y ? 0 : x < y ? -1 : 1
}

/** t with lo ≤ base + step·t ≤ hi (step ≠ 0). */
const stepRange = (base: bigint, step: bigint, lo: bigint, hi: bigint): [bigint, bigint] =>
  step > 0n
    ? [bigintCeilDiv(lo - base, step), bigintFloorDiv(hi - base, step)]
    : [bigintCeilDiv(hi - base, step), bigintFloorDiv(lo - base, step)]

/** The values ≡ residue (mod q) in [from, to], nearest `anchor` first, the lower first on a tie. */
function* outward(from: bigint, to: bigint, residue: bigint, q: bigint, anchor: bigint): Generator<bigint> {
  if (from > to) return
  const start = clamp(anchor, from, to)
  let down = start - mod(start - residue, q)
  let up = down + q
  while (down >= from || up <= to) {
    if (down >= from && (up > to || anchor - down <= up - anchor)) {
      yield down
      down -= q
    } else {
      yield up
      up += q
    }
  }
}

/** For unknown j among those from i on: aⱼ·xⱼ ≡ rest (mod G), G the gcd of the others there. */
interface Congruence {
  /** gcd(aⱼ, G): rest must be a multiple of it. */
  readonly h: bigint
  /** xⱼ is fixed modulo q = G/h (0 when j is the only unknown left: then aⱼ·xⱼ = rest). */
  readonly q: bigint
  /** (aⱼ/h)⁻¹ modulo q. */
  readonly inverse: bigint
}

/** How many rounds of bound tightening a search node runs at most. */
const tighteningRounds = 4

export class BoxSearch {
  private readonly congruences: ReadonlyArray<ReadonlyArray<Congruence>>

  constructor(
    private readonly a: ReadonlyArray<bigint>,
    private readonly budget: SearchBudget
  ) {
    this.congruences = a.map((_, i) =>
      a.map((aj, j) => {
        if (j < i) return { h: 0n, q: 0n, inverse: 0n }
        const others = a.reduce((g, ak, k) => (k >= i && k !== j ? gcd(g, ak) : g), 0n)
        const h = gcd(aj, others)
        const q = others / h
        return { h, q, inverse: q > 1n ? modInverse(aj / h, q) : 0n }
      })
    )
  }

  get coefficients(): ReadonlyArray<bigint> {
    return this.a
  }

  /** gcd of the coefficients from index i on (0 when none). */
  gcdFrom(i: number): bigint {
    return this.a.slice(i).reduce((g, x) => gcd(g, x), 0n)
  }

  /** [min, max] of Σ_{j≥i} aⱼ·dⱼ over the box. */
  range(lo: ReadonlyArray<bigint>, hi: ReadonlyArray<bigint>, i = 0): [bigint, bigint] {
    let min = 0n
    let max = 0n
    for (let j = i; j < this.a.length; j++) {
      const [x, y] = this.contribution(j, lo, hi)
      min += x
      max += y
    }
    return [min, max]
  }

  /** Some d in the box with Σ aᵢ·dᵢ = sum, the first in `order`, or undefined when there is none. */
  find(
    sum: bigint,
    lo: ReadonlyArray<bigint>,
    hi: ReadonlyArray<bigint>,
    order: SearchOrder
  ): ReadonlyArray<bigint> | undefined {
    const n = this.a.length
    const failed = Array.from({ length: n }, () => new Set<bigint>())
    // A node's boxes are tightened from the original ones and its own rest only, so that whether it
    // fails depends on (i, rest) alone and can be remembered.
    const solve = (i: number, rest: bigint): Array<bigint> | undefined => {
      this.tick()
      if (failed[i]!.has(rest)) return undefined
      const box = this.tighten(i, rest, lo, hi)
      const answer = box === undefined ? undefined : this.branch(i, rest, box[0], box[1], order, solve)
      if (answer === undefined) failed[i]!.add(rest)
      return answer
    }
    return solve(0, sum)
  }

  private branch(
    i: number,
    rest: bigint,
    lo: ReadonlyArray<bigint>,
    hi: ReadonlyArray<bigint>,
    order: SearchOrder,
    solve: (i: number, rest: bigint) => Array<bigint> | undefined
  ): Array<bigint> | undefined {
    const anchor = (j: number, r: bigint): bigint =>
      order === "tieBreak" ? 0n : this.balancedMove(j, r, this.range(lo, hi, j), lo, hi)
    const ai = this.a[i]!
    switch (this.a.length - i) {
      case 1:
        return [lo[i]!]
      case 2:
        return solvePair(
          ai,
          this.a[i + 1]!,
          rest,
          [lo[i]!, hi[i]!],
          [lo[i + 1]!, hi[i + 1]!],
          anchor(i, rest)
        )
      case 3:
        return this.solveTriple(i, rest, lo, hi, anchor)
    }
    const { h, q, inverse } = this.congruences[i]![i]!
    const residue = q === 1n ? 0n : mod((rest / h) * inverse, q)
    for (const x of outward(lo[i]!, hi[i]!, residue, q, anchor(i, rest))) {
      const tail = solve(i + 1, rest - ai * x)
      if (tail !== undefined) return [x, ...tail]
    }
    return undefined
  }

  /**
   * Bound propagation for Σ_{j≥i} aⱼ·xⱼ = rest: each xⱼ must leave the others a reachable rest
   * (range) and must make aⱼ·xⱼ ≡ rest modulo the gcd of the others (congruence). Shrinks every box
   * to values that pass both, a few rounds; undefined when a box empties.
   */
  private tighten(
    i: number,
    rest: bigint,
    lo0: ReadonlyArray<bigint>,
    hi0: ReadonlyArray<bigint>
  ): [Array<bigint>, Array<bigint>] | undefined {
    const n = this.a.length
    const lo = lo0.slice()
    const hi = hi0.slice()
    let [min, max] = this.range(lo, hi, i)
    for (let round = 0; round < tighteningRounds; round++) {
      let changed = false
      for (let j = i; j < n; j++) {
        if (rest < min || rest > max) return undefined
        const aj = this.a[j]!
        const [cMin, cMax] = this.contribution(j, lo, hi)
        const othersMin = min - cMin
        const othersMax = max - cMax
        let [from, to] =
          aj > 0n
            ? [bigintCeilDiv(rest - othersMax, aj), bigintFloorDiv(rest - othersMin, aj)]
            : [bigintCeilDiv(rest - othersMin, aj), bigintFloorDiv(rest - othersMax, aj)]
        if (from < lo[j]!) from = lo[j]!
        if (to > hi[j]!) to = hi[j]!
        const { h, q, inverse } = this.congruences[i]![j]!
        if (q === 0n) {
          if (rest % aj !== 0n) return undefined
          const x = rest / aj
          if (x < from || x > to) return undefined
          from = x
          to = x
        } else {
          if (rest % h !== 0n) return undefined
          if (q > 1n) {
            const residue = mod((rest / h) * inverse, q)
            from += mod(residue - from, q)
            to -= mod(to - residue, q)
          }
        }
        if (from > to) return undefined
        if (from !== lo[j]! || to !== hi[j]!) {
          changed = true
          lo[j] = from
          hi[j] = to
          const [nMin, nMax] = this.contribution(j, lo, hi)
          min += nMin - cMin
          max += nMax - cMax
        }
      }
      if (!changed) break
    }
    return rest < min || rest > max ? undefined : [lo, hi]
  }

  /**
   * a·x + b·y + c·z = rest for unknowns i, i+1, i+2. x runs through x_c + q·k (the values that
   * leave b·y + c·z a multiple of g = gcd(b, c)); for each k the pair's solutions are
   * y = u·ρ(k) + c′·t, z = v·ρ(k) − b′·t with ρ(k) = (rest − a·x)/g linear in k. The boxes of y
   * and z bound t between lines in k, so "which k have a solution" is a lattice-point count in a
   * polygon; the k nearest the anchor is found by binary search on counts.
   */
  private solveTriple(
    i: number,
    rest: bigint,
    lo: ReadonlyArray<bigint>,
    hi: ReadonlyArray<bigint>,
    anchor: (i: number, rest: bigint) => bigint
  ): Array<bigint> | undefined {
    const [a, b, c] = [this.a[i]!, this.a[i + 1]!, this.a[i + 2]!]
    const g = gcd(b, c)
    const h = gcd(a, g)
    if (rest % h !== 0n) return undefined
    const q = g / h
    const xc = q === 1n ? 0n : mod((rest / h) * modInverse(a / h, q), q)
    const kLo = bigintCeilDiv(lo[i]! - xc, q)
    const kHi = bigintFloorDiv(hi[i]! - xc, q)
    if (kLo > kHi) return undefined
    const rho0 = (rest - a * xc) / g
    const m = (a * q) / g
    const [, u, v] = extendedGcd(b / g, c / g)
    const ys = strip(-u * m, u * rho0, c / g, lo[i + 1]!, hi[i + 1]!)
    const zs = strip(-v * m, v * rho0, -(b / g), lo[i + 2]!, hi[i + 2]!)
    const count = (k1: bigint, k2: bigint): bigint => {
      this.tick()
      return k1 > k2 ? 0n : countPoints([ys.lower, zs.lower], [ys.upper, zs.upper], k1, k2)
    }
    if (count(kLo, kHi) === 0n) return undefined
    // x_k ≤ anchor for k ≤ kMid, above it for k > kMid.
    const x = anchor(i, rest)
    const kMid = bigintFloorDiv(x - xc, q)
    const below = kMid >= kLo ? this.lastWith(count, kLo, bigMin(kMid, kHi)) : undefined
    const above = kMid + 1n <= kHi ? this.firstWith(count, bigMax(kMid + 1n, kLo), kHi) : undefined
    const pick =
      below === undefined
        ? above!
        : above === undefined
          ? below
          : compareNear(xc + q * below - x, xc + q * above - x) <= 0
            ? below
            : above
    const xValue = xc + q * pick
    const pair = this.solvePairAt(i + 1, rest - a * xValue, lo, hi, anchor)
    return pair === undefined ? undefined : [xValue, ...pair]
  }

  private solvePairAt(
    i: number,
    rest: bigint,
    lo: ReadonlyArray<bigint>,
    hi: ReadonlyArray<bigint>,
    anchor: (i: number, rest: bigint) => bigint
  ): Array<bigint> | undefined {
    return solvePair(
      this.a[i]!,
      this.a[i + 1]!,
      rest,
      [lo[i]!, hi[i]!],
      [lo[i + 1]!, hi[i + 1]!],
      anchor(i, rest)
    )
  }

  /** The largest k in [from, to] whose column holds a point, given that [from, to] holds one. */
  private lastWith(count: (k1: bigint, k2: bigint) => bigint, from: bigint, to: bigint): bigint | undefined {
    if (count(from, to) === 0n) return undefined
    let [low, high] = [from, to]
    while (low < high) {
      const mid = bigintCeilDiv(low + high, 2n)
      if (count(mid, to) > 0n) low = mid
      else high = mid - 1n
    }
    return low
  }

  /** The smallest k in [from, to] whose column holds a point. */
  private firstWith(count: (k1: bigint, k2: bigint) => bigint, from: bigint, to: bigint): bigint | undefined {
    if (count(from, to) === 0n) return undefined
    let [low, high] = [from, to]
    while (low < high) {
      const mid = bigintFloorDiv(low + high, 2n)
      if (count(from, mid) > 0n) high = mid
      else low = mid + 1n
    }
    return low
  }

  /** [min, max] of aⱼ·dⱼ over unknown j's box. */
  private contribution(j: number, lo: ReadonlyArray<bigint>, hi: ReadonlyArray<bigint>): [bigint, bigint] {
    const x = this.a[j]! * lo[j]!
    const y = this.a[j]! * hi[j]!
    return x < y ? [x, y] : [y, x]
  }

  /** dᵢ placing unknown i as far through its contribution range as `rest` is through [min, max]. */
  private balancedMove(
    i: number,
    rest: bigint,
    [min, max]: readonly [bigint, bigint],
    lo: ReadonlyArray<bigint>,
    hi: ReadonlyArray<bigint>
  ): bigint {
    if (max === min) return lo[i]!
    const [cMin, cMax] = this.contribution(i, lo, hi)
    return bigintRoundDiv(cMin * (max - min) + (cMax - cMin) * (rest - min), (max - min) * this.a[i]!)
  }

  private tick(): void {
    this.budget.spend()
  }
}

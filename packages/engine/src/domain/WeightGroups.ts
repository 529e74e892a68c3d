import { BoxSearch, bigMax, bigMin, type SearchBudget } from "./BoxSearch.js"

/**
 * Legs of one weight as one unknown, for the leg-price search's "is there a solution in this box"
 * questions (docs/algorithms.md, "Legs of one weight").
 *
 * Σ aᵢ·dᵢ depends on the legs whose |aᵢ| is the same only through w·Σ sᵢ·dᵢ (sᵢ the sign of aᵢ,
 * w = |aᵢ|), and every value of Σ sᵢ·dᵢ between its least and greatest over the legs' boxes is
 * reached by some choice of the legs (move them one at a time). So a question about the legs is
 * the same question about one unknown per distinct |aᵢ|, whose box is that range; the answer's
 * totals split back into moves that stay in each leg's own box. Three legs of weight 100 beside
 * two of weight 1 then search like two unknowns, not five, and a buy and a sell leg of one
 * weight like one (the search prunes by the gcd of the others, which a weight 1 leg makes 1).
 */
interface Groups {
  /** |a| of each group, in the order of the legs' first appearance (descending stays descending). */
  readonly weights: ReadonlyArray<bigint>
  /** The legs (indices into the weights given) of each group, in their order. */
  readonly members: ReadonlyArray<ReadonlyArray<number>>
  readonly signs: ReadonlyArray<1n | -1n>
}

const groupByMagnitude = (a: ReadonlyArray<bigint>): Groups => {
  const weights: Array<bigint> = []
  const members: Array<Array<number>> = []
  a.forEach((ai, i) => {
    const w = ai < 0n ? -ai : ai
    const g = weights.indexOf(w)
    if (g >= 0) members[g]!.push(i)
    else {
      weights.push(w)
      members.push([i])
    }
  })
  return { weights, members, signs: a.map((ai) => (ai < 0n ? -1n : 1n)) }
}

/** The search over one unknown per distinct |aᵢ|, answering in moves per leg. */
export class GroupedSearch {
  private readonly groups: Groups
  private readonly search: BoxSearch

  constructor(a: ReadonlyArray<bigint>, budget: SearchBudget) {
    this.groups = groupByMagnitude(a)
    this.search = new BoxSearch(this.groups.weights, budget)
  }

  /** gcd of every weight. */
  get gcd(): bigint {
    return this.search.gcdFrom(0)
  }

  /** The largest |aᵢ|. */
  get largestWeight(): bigint {
    return bigMax(0n, ...this.groups.weights)
  }

  /** [min, max] of Σ aᵢ·dᵢ over the box. */
  range(lo: ReadonlyArray<bigint>, hi: ReadonlyArray<bigint>): [bigint, bigint] {
    const [low, high] = this.boxes(lo, hi)
    return this.search.range(low, high)
  }

  /** Some moves in the box with Σ aᵢ·dᵢ = sum, or undefined when there are none. */
  find(sum: bigint, lo: ReadonlyArray<bigint>, hi: ReadonlyArray<bigint>): ReadonlyArray<bigint> | undefined {
    const [low, high] = this.boxes(lo, hi)
    const totals = this.search.find(sum, low, high, "balanced")
    return totals === undefined ? undefined : this.split(totals, lo, hi)
  }

  /** Each group's range of Σ sᵢ·dᵢ. */
  private boxes(lo: ReadonlyArray<bigint>, hi: ReadonlyArray<bigint>): [Array<bigint>, Array<bigint>] {
    const { members, signs } = this.groups
    const low = members.map((legs) => legs.reduce((s, i) => s + (signs[i] === 1n ? lo[i]! : -hi[i]!), 0n))
    const high = members.map((legs) => legs.reduce((s, i) => s + (signs[i] === 1n ? hi[i]! : -lo[i]!), 0n))
    return [low, high]
  }

  /** Moves per leg from each group's total: every leg from its least sᵢ·dᵢ, raised in order. */
  private split(
    totals: ReadonlyArray<bigint>,
    lo: ReadonlyArray<bigint>,
    hi: ReadonlyArray<bigint>
  ): ReadonlyArray<bigint> {
    const { members, signs } = this.groups
    const moves = lo.map(() => 0n)
    members.forEach((legs, g) => {
      const least = (i: number) => (signs[i] === 1n ? lo[i]! : -hi[i]!)
      let left = totals[g]! - legs.reduce((s, i) => s + least(i), 0n)
      for (const i of legs) {
        const room = hi[i]! - lo[i]!
        const raise = bigMin(left, room)
        moves[i] = signs[i]! * (least(i) + raise)
        left -= raise
      }
    })
    return moves
  }
}

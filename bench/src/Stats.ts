/** Latency samples in milliseconds, kept whole: the runs are short enough that exact percentiles are cheap. */
export class Samples {
  private values = new Float64Array(1024)
  private length = 0

  add(value: number): void {
    if (this.length === this.values.length) {
      const grown = new Float64Array(this.values.length * 2)
      grown.set(this.values)
      this.values = grown
    }
    this.values[this.length++] = value
  }

  get count(): number {
    return this.length
  }

  summary(): LatencySummary {
    return summarize(this.values.subarray(0, this.length))
  }
}

export interface LatencySummary {
  readonly count: number
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly mean: number
}

/** Nearest-rank percentile of ascending values (p in 0..100). */
export const percentile = (sorted: ArrayLike<number>, p: number): number => {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!
}

export const summarize = (values: ArrayLike<number>): LatencySummary => {
  const sorted = Float64Array.from(values).sort()
  let sum = 0
  for (const v of sorted) sum += v
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]!,
    mean: sorted.length === 0 ? Number.NaN : sum / sorted.length
  }
}

export const round = (value: number, digits = 2): number => {
  const f = 10 ** digits
  return Math.round(value * f) / f
}

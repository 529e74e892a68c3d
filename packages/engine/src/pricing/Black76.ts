/**
 * Black-76: the price of a European option on a forward. Floating point on purpose: this is the
 * model behind simulated marks, not money; callers round its output to a decimal before any
 * money arithmetic sees it.
 */

export type OptionType = "call" | "put"

export interface Black76Input {
  readonly type: OptionType
  /** Forward (or futures) price of the underlying at expiry. */
  readonly forward: number
  readonly strike: number
  /** Time to expiry in years. */
  readonly years: number
  /** Annualised volatility, 0.55 for 55 %. */
  readonly volatility: number
  /** Discount factor to the premium payment date; 1 when premiums are not discounted. */
  readonly discount?: number
}

/**
 * Standard normal cumulative distribution. Hart's double-precision rational approximation as
 * given by G. West, "Better approximations to cumulative normal functions" (2005): absolute error
 * about 1e-15, which a 1e-7 approximation (Abramowitz–Stegun 26.2.17) is not for 8-decimal marks.
 * N(−x) is computed as the same tail as 1 − N(x), so put-call parity holds to rounding.
 */
export const normalCdf = (x: number): number => {
  const z = Math.abs(x)
  let tail: number
  if (z > 37) {
    tail = 0
  } else {
    const e = Math.exp((-z * z) / 2)
    if (z < 7.07106781186547) {
      let n = 3.52624965998911e-2 * z + 0.700383064443688
      n = n * z + 6.37396220353165
      n = n * z + 33.912866078383
      n = n * z + 112.079291497871
      n = n * z + 221.213596169931
      n = n * z + 220.206867912376
      let d = 8.83883476483184e-2 * z + 1.75566716318264
      d = d * z + 16.064177579207
      d = d * z + 86.7807322029461
      d = d * z + 296.564248779674
      d = d * z + 637.333633378831
      d = d * z + 793.826512519948
      d = d * z + 440.413735824752
      tail = (e * n) / d
    } else {
      let d = z + 0.65
      d = z + 4 / d
      d = z + 3 / d
      d = z + 2 / d
      d = z + 1 / d
      tail = e / d / 2.506628274631
    }
  }
  return x > 0 ? 1 - tail : tail
}

/**
 * Black-76 premium: df·(F·N(d1) − K·N(d2)) for a call, df·(K·N(−d2) − F·N(−d1)) for a put. At or
 * past expiry, or with no volatility, the option is worth its discounted intrinsic value.
 */
export const black76 = (input: Black76Input): number => {
  const { forward: f, strike: k, years: t, volatility: v, type } = input
  const df = input.discount ?? 1
  if (!(f > 0) || !(k > 0)) throw new RangeError(`black76 needs forward and strike > 0, got ${f} and ${k}`)
  if (t <= 0 || v <= 0) return df * Math.max(type === "call" ? f - k : k - f, 0)
  const sd = v * Math.sqrt(t)
  const d1 = (Math.log(f / k) + (sd * sd) / 2) / sd
  const d2 = d1 - sd
  return type === "call"
    ? df * (f * normalCdf(d1) - k * normalCdf(d2))
    : df * (k * normalCdf(-d2) - f * normalCdf(-d1))
}

/**
 * Black-76 forward delta: ∂premium/∂forward per unit of the underlying, N(d1) for a call and
 * N(d1) − 1 for a put (undiscounted, like the premiums here). At or past expiry, or with no
 * volatility, the intrinsic value's slope: 1 / −1 in the money, 0 out of it.
 */
export const black76Delta = (input: Omit<Black76Input, "discount">): number => {
  const { forward: f, strike: k, years: t, volatility: v, type } = input
  if (!(f > 0) || !(k > 0))
    throw new RangeError(`black76Delta needs forward and strike > 0, got ${f} and ${k}`)
  if (t <= 0 || v <= 0) return type === "call" ? (f > k ? 1 : 0) : f < k ? -1 : 0
  const sd = v * Math.sqrt(t)
  const d1 = (Math.log(f / k) + (sd * sd) / 2) / sd
  return type === "call" ? normalCdf(d1) : normalCdf(d1) - 1
}

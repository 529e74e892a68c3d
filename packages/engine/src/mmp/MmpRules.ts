import { BigDecimal } from "effect"
import type { BaseCurrency } from "../domain/Primitives.js"

/**
 * Market-maker protection as pure rules on values: which fills a window counts, when a window has
 * reached a limit, whether a desk is frozen at an instant, and from which fill a thaw starts the
 * window again. The store (`SqlMmpStore.ts`) sums the window in SQL under the desk's lock; the tests
 * check it against `windowOf` here.
 */

/** One desk's protection in one base currency, as configured. */
export interface MmpConfig {
  readonly baseCurrency: BaseCurrency
  /** The rolling window: a fill counts while less than this many ms have passed since it. */
  readonly intervalMs: number
  /** How long a trip freezes the desk; 0: until a reset. */
  readonly frozenMs: number
  readonly amountLimit?: BigDecimal.BigDecimal | undefined
  readonly deltaLimit?: BigDecimal.BigDecimal | undefined
  readonly tradeCountLimit?: number | undefined
}

/** The state kept with the config: the freeze, and which fills no longer count. */
export interface MmpState {
  /** When the desk tripped; undefined when it is not frozen (or was thawed). */
  readonly frozenAt?: number | undefined
  /** When the freeze ends; undefined with `frozenAt` set: until a reset. */
  readonly frozenUntil?: number | undefined
  /** The fill that tripped: once the freeze has passed, it and the fills before it no longer count. */
  readonly tripFillId?: number | undefined
  /** Fills with an id up to this one no longer count (a reset, or a thaw written down). */
  readonly clearedThrough: number
  /**
   * The desk's quotes in this currency last put (created or updated) before this instant never
   * trade (`fillBarred`): set by each trip, lowered by a reset, kept through thaws. Undefined: the
   * desk never tripped in this currency.
   */
  readonly staleBefore?: number | undefined
}

export type MmpConfigState = MmpConfig & MmpState

/** The longest interval and freeze: a day. Fills older than a day never count and are pruned. */
export const MAX_INTERVAL_MS = 86_400_000
export const MAX_FROZEN_MS = 86_400_000

/** What the window holds: traded amount, absolute delta and fills. */
export interface WindowFigures {
  readonly amount: BigDecimal.BigDecimal
  readonly delta: BigDecimal.BigDecimal
  readonly trades: number
}

export type MmpLimit = "amount" | "delta" | "tradeCount"

/** A fill as the window sees it: its id (admission order), time, and what it counts. */
export interface CountedFill {
  readonly id: number
  readonly at: number
  /** The traded amount: the planned amount until settled, then the filled amount (0 if none). */
  readonly amount: BigDecimal.BigDecimal
  /** The absolute delta of the fill, in base currency, scaled like `amount`. */
  readonly delta: BigDecimal.BigDecimal
}

const zero = BigDecimal.unsafeFromString("0")

/** Frozen at `now`: tripped, and the freeze not yet over (a freeze without end lasts until a reset). */
export const isFrozenAt = (state: MmpState, now: number): boolean =>
  state.frozenAt !== undefined && (state.frozenUntil === undefined || now < state.frozenUntil)

/**
 * Whether a fill of a quote last put at `quotePutAt` must be refused at `now`: while the desk is
 * frozen, every fill; after, a fill of a quote put before the end of the desk's last freeze
 * (`staleBefore`). Such a quote is one the trip should have cancelled (it was active at the trip)
 * or one the freeze should have refused (put on a host that had not yet heard of the trip). The
 * cancellations after a trip (`MmpEnforcer.ts`) are told by a notice that a crash or a missed bus
 * message can lose; this rule, decided under the desk's lock in SQL, is what keeps such a quote from
 * trading after the thaw whatever was lost. Instants are compared as the hosts' clocks gave them.
 */
export const fillBarred = (state: MmpState, quotePutAt: number, now: number): boolean =>
  isFrozenAt(state, now) || (state.staleBefore !== undefined && quotePutAt < state.staleBefore)

/**
 * `staleBefore` as a trip writes it: a fill stamped `at` trips under the desk's lock at `decidedAt`.
 * Quotes put up to the decision are stale (those put after, on a host that had not heard, too:
 * while frozen nothing fills, and a freeze with an end covers them up to `frozenUntil`).
 */
export const staleBeforeOfTrip = (at: number, decidedAt: number, frozenUntil: number | undefined): number =>
  Math.max(frozenUntil ?? 0, Math.max(at, decidedAt) + 1)

/**
 * `staleBefore` after a reset at `now`: a reset of a frozen desk ends the freeze now, so quotes put
 * from now on trade (a freeze with an end would otherwise still bar those put before its end). At
 * least one millisecond past the trip: a quote put in the trip's own millisecond stays barred. A
 * reset of a desk that is not frozen changes nothing.
 */
export const staleBeforeOfReset = (state: MmpState, now: number): number | undefined =>
  isFrozenAt(state, now) && state.frozenAt !== undefined
    ? Math.max(now, state.frozenAt + 1)
    : state.staleBefore

/**
 * The fills up to this id do not count at `now`: those cleared by a reset, and, once a freeze has
 * passed, those up to the tripping fill (a thaw starts an empty window; while frozen, the window
 * still shows the fills that tripped it).
 */
export const countedAfter = (state: MmpState, now: number): number =>
  state.frozenAt !== undefined && !isFrozenAt(state, now) && state.tripFillId !== undefined
    ? Math.max(state.clearedThrough, state.tripFillId)
    : state.clearedThrough

/**
 * Whether `fill` is in the window at `now`. A fill that traded nothing counts nowhere. A fill
 * admitted earlier counts even when its instant is after `now`: each accept takes its instant in
 * its own RFQ's mailbox, possibly on another host, before it takes the desk's lock, so admission
 * order and instants can cross by a few milliseconds, and a fill admitted before this one is
 * before it (counting only instants up to `now` let a fourth fill through a limit of three).
 */
export const inWindow = (fill: CountedFill, now: number, intervalMs: number, after: number): boolean =>
  fill.id > after && now - fill.at < intervalMs

/** The window at `now`: the sums over the fills it counts (the model the SQL sums are checked with). */
export const windowOf = (
  fills: ReadonlyArray<CountedFill>,
  now: number,
  intervalMs: number,
  after: number
): WindowFigures => {
  let amount = zero
  let delta = zero
  let trades = 0
  for (const fill of fills) {
    if (!inWindow(fill, now, intervalMs, after) || !BigDecimal.isPositive(fill.amount)) continue
    amount = BigDecimal.sum(amount, fill.amount)
    delta = BigDecimal.sum(delta, fill.delta)
    trades++
  }
  return { amount: BigDecimal.normalize(amount), delta: BigDecimal.normalize(delta), trades }
}

/** The first limit the window has reached (reaching is enough: `>=`), if any. */
export const limitReached = (config: MmpConfig, window: WindowFigures): MmpLimit | undefined => {
  if (config.amountLimit !== undefined && BigDecimal.greaterThanOrEqualTo(window.amount, config.amountLimit))
    return "amount"
  if (config.deltaLimit !== undefined && BigDecimal.greaterThanOrEqualTo(window.delta, config.deltaLimit))
    return "delta"
  if (config.tradeCountLimit !== undefined && window.trades >= config.tradeCountLimit) return "tradeCount"
  return undefined
}

/** When a trip at `now` ends: undefined for a freeze until reset (`frozenMs` 0). */
export const frozenUntilOf = (config: Pick<MmpConfig, "frozenMs">, now: number): number | undefined =>
  config.frozenMs === 0 ? undefined : now + config.frozenMs

/**
 * A fill's share of a planned fill: what it counts once settled. A partial fill counts its filled
 * amount and its delta in proportion; a wholly failed one counts nothing.
 */
export const settledFigures = (
  planned: { readonly amount: BigDecimal.BigDecimal; readonly delta: BigDecimal.BigDecimal },
  filled: BigDecimal.BigDecimal
): { readonly amount: BigDecimal.BigDecimal; readonly delta: BigDecimal.BigDecimal } => {
  if (!BigDecimal.isPositive(filled) || !BigDecimal.isPositive(planned.amount))
    return { amount: zero, delta: zero }
  if (BigDecimal.greaterThanOrEqualTo(filled, planned.amount)) return planned
  const delta = BigDecimal.round(
    BigDecimal.unsafeDivide(BigDecimal.multiply(planned.delta, filled), planned.amount),
    {
      scale: DELTA_DECIMALS,
      mode: "half-even"
    }
  )
  return { amount: filled, delta: BigDecimal.normalize(delta) }
}

/** Deltas are kept to this many decimals of the base currency. */
export const DELTA_DECIMALS = 8

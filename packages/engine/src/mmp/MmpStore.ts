import type { BigDecimal, Effect, Option } from "effect"
import { Context } from "effect"
import type { BaseCurrency } from "../domain/Primitives.js"
import type { MmpConfig, MmpConfigState, MmpLimit, WindowFigures } from "./MmpRules.js"

/** A fill about to be executed against a maker desk: what it trades and its delta, as planned. */
export interface PlannedFill {
  readonly deskId: number
  readonly baseCurrency: BaseCurrency
  readonly tradeId: number
  readonly rfqId: number
  readonly at: number
  /** When the filled quote was last put (created or updated): a stale quote is refused. */
  readonly quotePutAt: number
  readonly amount: BigDecimal.BigDecimal
  /** The fill's absolute delta in base currency. */
  readonly delta: BigDecimal.BigDecimal
}

/** What the desk's lock decided about a fill. */
export type Admission =
  /** The desk has no protection in this currency: nothing was recorded. */
  | { readonly _tag: "Unprotected" }
  /**
   * Frozen, or the quote is stale (put before the end of the desk's last freeze,
   * `MmpRules.ts#fillBarred`): nothing was recorded; the fill must not execute.
   */
  | { readonly _tag: "Frozen" }
  /**
   * Recorded. `thawed`: a freeze that had passed was written down first (its thaw not yet told).
   * `tripped`: this fill reached a limit, and the desk is frozen from `at` on.
   */
  | {
      readonly _tag: "Admitted"
      readonly thawed: boolean
      readonly tripped?:
        | {
            readonly limit: MmpLimit
            readonly window: WindowFigures
            readonly frozenUntil?: number | undefined
          }
        | undefined
    }

/** A desk's freeze with an end, for the thaw timers. */
export interface TimedFreeze {
  readonly deskId: number
  readonly baseCurrency: BaseCurrency
  readonly frozenAt: number
  readonly frozenUntil: number
}

/**
 * Storage of the protection: configs with their state, and the fills of each window. Every fill of
 * a protected desk is decided under the lock of the desk's row in that currency (`admit`), so
 * fills racing a trip, on any host, are decided one after the other and none after the tripping one
 * executes. `SqlMmpStore.ts` is the implementation.
 */
export interface MmpStoreService {
  readonly configs: (deskId: number) => Effect.Effect<ReadonlyArray<MmpConfigState>>
  /** Creates or replaces the config; a freeze in progress and the window stay. */
  readonly putConfig: (deskId: number, config: MmpConfig, now: number) => Effect.Effect<MmpConfigState>
  /** Removes the config, its state and its fills; whether there was one. */
  readonly deleteConfig: (deskId: number, baseCurrency: BaseCurrency) => Effect.Effect<boolean>
  /**
   * Ends any freeze and empties the window (fills so far no longer count). None when the desk has
   * no config in that currency; else whether it was frozen at `now`.
   */
  readonly reset: (
    deskId: number,
    baseCurrency: BaseCurrency,
    now: number
  ) => Effect.Effect<Option.Option<{ readonly wasFrozen: boolean }>>
  /** The window's figures at `now`, counting fills after fill id `after`. */
  readonly window: (
    deskId: number,
    baseCurrency: BaseCurrency,
    intervalMs: number,
    after: number,
    now: number
  ) => Effect.Effect<WindowFigures>
  /** Decides and records a fill under the desk's lock (see `Admission`). */
  readonly admit: (fill: PlannedFill) => Effect.Effect<Admission>
  /** Corrects a recorded fill to what it traded (0: it failed); nothing for an unknown trade. */
  readonly settle: (tradeId: number, filled: BigDecimal.BigDecimal) => Effect.Effect<void>
  /**
   * Writes down the end of the freeze that began at `frozenAt` if it is over at `now` and still the
   * desk's freeze; whether this call did (exactly one of several hosts' timers does).
   */
  readonly thaw: (
    deskId: number,
    baseCurrency: BaseCurrency,
    frozenAt: number,
    now: number
  ) => Effect.Effect<boolean>
  /** Every freeze that ends by itself (the timers to arm at start). */
  readonly timedFreezes: Effect.Effect<ReadonlyArray<TimedFreeze>>
}

export class MmpStore extends Context.Tag("rfq/MmpStore")<MmpStore, MmpStoreService>() {}

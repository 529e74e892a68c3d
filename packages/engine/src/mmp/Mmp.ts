import { BigDecimal, Clock, Context, Duration, Effect, FiberMap, Layer, Option, Queue } from "effect"
import type { MmpConfigRequest, MmpCurrencyRequest } from "../api/MmpRequests.js"
import { requireRole } from "../auth/Roles.js"
import { type ApiError, apiError } from "../domain/Errors.js"
import type { BaseCurrency } from "../domain/Primitives.js"
import { dec } from "../rfq/Dec.js"
import type { Caller, Dec, QuoteRecord, RfqRecord } from "../rfq/RfqRecord.js"
import type { Json } from "../rfq/RfqView.js"
import type { Pricing } from "../services/Pricing.js"
import type { Venues } from "../services/Venues.js"
import { ReadCache } from "../storage/ReadCache.js"
import { fillDelta } from "./FillDelta.js"
import { type MmpNotice, MmpNotices } from "./MmpNotices.js"
import { countedAfter, isFrozenAt, type MmpConfigState, type WindowFigures } from "./MmpRules.js"
import { MmpStore } from "./MmpStore.js"

/** How long a desk's configs are remembered: other hosts' changes reach here on the bus, or after this. */
export const MMP_CACHE_TTL_MS = 5_000

/**
 * Market-maker protection, the engine's side: the desk's endpoints (config, reset, status), the
 * check a quote put makes (`refuseIfFrozen`, answered from memory: a desk without protection costs
 * no SQL per quote), the admission of each fill before its venue call (`admitFill`, under the
 * desk's lock in storage), the correction after settlement (`settleFill`), and the thaw timers. A
 * trip is announced (`MmpNotices`): every host then clears its cache, arms the thaw timer and
 * cancels the desk's quotes on the RFQs it owns (`MmpEnforcer.ts`); sessions hear it on `mmp.maker`.
 */
export interface MmpService {
  readonly getConfig: (caller: Caller) => Effect.Effect<Array<Json>, ApiError>
  readonly setConfig: (caller: Caller, req: MmpConfigRequest) => Effect.Effect<Json, ApiError>
  readonly deleteConfig: (
    caller: Caller,
    req: MmpCurrencyRequest
  ) => Effect.Effect<{ message: string }, ApiError>
  readonly reset: (caller: Caller, req: MmpCurrencyRequest) => Effect.Effect<Json, ApiError>
  readonly status: (caller: Caller) => Effect.Effect<Array<Json>, ApiError>
  /** 400 `mmp frozen` when the desk is frozen in the currency now. */
  readonly refuseIfFrozen: (deskId: number, baseCurrency: BaseCurrency) => Effect.Effect<void, ApiError>
  /**
   * Decides a fill of `quote` (its whole amount) before the venue is called: `Frozen` means it
   * must not execute. Records it for a protected desk and trips the desk when it reaches a limit.
   */
  readonly admitFill: (
    rfq: RfqRecord,
    quote: QuoteRecord,
    tradeId: number,
    at: number
  ) => Effect.Effect<"Admitted" | "Frozen", never, Pricing | Venues>
  /** The desk's protection per currency (`MmpEnforcer.ts`): cached, or `fresh` from storage. */
  readonly protection: (deskId: number, fresh: boolean) => Effect.Effect<ReadonlyArray<MmpConfigState>>
  /** Corrects the recorded fill to its filled amount once settled ("0" when it failed wholly). */
  readonly settleFill: (
    fill: { readonly makerDeskId: number; readonly id: number; readonly filledAmount: Dec },
    baseCurrency: BaseCurrency
  ) => Effect.Effect<void>
}

export class Mmp extends Context.Tag("rfq/Mmp")<Mmp, MmpService>() {}

const num = (d: BigDecimal.BigDecimal) => BigDecimal.unsafeToNumber(d)
const windowJson = (w: WindowFigures) => ({ amount: num(w.amount), delta: num(w.delta), trades: w.trades })
const decimalString = (d: BigDecimal.BigDecimal) => BigDecimal.format(BigDecimal.normalize(d))

const configJson = (c: MmpConfigState): Json => ({
  baseCurrency: c.baseCurrency,
  intervalMs: c.intervalMs,
  frozenMs: c.frozenMs,
  ...(c.amountLimit === undefined ? {} : { amountLimit: num(c.amountLimit) }),
  ...(c.deltaLimit === undefined ? {} : { deltaLimit: num(c.deltaLimit) }),
  ...(c.tradeCountLimit === undefined ? {} : { tradeCountLimit: c.tradeCountLimit })
})

/** Only a maker desk has protection to configure. */
const requireMakerDesk = (caller: Caller, access: "write") =>
  Effect.zipRight(
    requireRole(caller, access),
    caller.makerId === undefined
      ? Effect.fail(apiError("insufficientPermissions", "market-maker protection is for maker desks"))
      : Effect.void
  )

const make = Effect.gen(function* () {
  const store = yield* MmpStore
  const notices = yield* MmpNotices
  const scope = yield* Effect.scope
  const cache = new ReadCache<number, ReadonlyArray<MmpConfigState>>(MMP_CACHE_TTL_MS, 10_000)
  const timers = yield* FiberMap.make<string>()
  const configsOf = (deskId: number) => cache.get(deskId, store.configs(deskId))
  const announce = (...list: ReadonlyArray<MmpNotice>) =>
    Effect.forEach(list, notices.announce, { discard: true }).pipe(Effect.forkIn(scope), Effect.asVoid)

  /** At `frozenUntil`, writes the thaw down (one host's timer does) and tells everyone. */
  const armThaw = (deskId: number, baseCurrency: BaseCurrency, frozenAt: number, frozenUntil: number) =>
    FiberMap.run(
      timers,
      `${deskId}:${baseCurrency}`,
      Effect.gen(function* () {
        // A timer may wake a millisecond early by the wall clock: sleep again until it is due.
        let at = yield* Clock.currentTimeMillis
        while (at < frozenUntil) {
          yield* Effect.sleep(Duration.millis(frozenUntil - at))
          at = yield* Clock.currentTimeMillis
        }
        if (yield* store.thaw(deskId, baseCurrency, frozenAt, at)) {
          cache.clear()
          yield* notices.announce({ type: "mmp", event: "thawed", deskId, baseCurrency, at, by: "time" })
        }
      }).pipe(Effect.catchAllCause((cause) => Effect.logError("mmp thaw failed", cause)))
    ).pipe(Effect.asVoid)

  // Every host hears every notice (its own included): caches cleared, thaw timers armed.
  const heard = yield* notices.subscribe
  yield* Queue.take(heard).pipe(
    Effect.flatMap((notice) =>
      Effect.suspend(() => {
        cache.clear()
        if (notice.event === "tripped" && notice.frozenUntil !== undefined)
          return armThaw(notice.deskId, notice.baseCurrency, notice.at, notice.frozenUntil)
        if (notice.event === "thawed")
          return FiberMap.remove(timers, `${notice.deskId}:${notice.baseCurrency}`)
        return Effect.void
      })
    ),
    Effect.forever,
    Effect.forkScoped
  )
  // Freezes that end by themselves survive a restart: their timers are armed again.
  for (const freeze of yield* store.timedFreezes)
    yield* armThaw(freeze.deskId, freeze.baseCurrency, freeze.frozenAt, freeze.frozenUntil)

  const statusOf = (deskId: number, c: MmpConfigState, now: number) =>
    Effect.map(store.window(deskId, c.baseCurrency, c.intervalMs, countedAfter(c, now), now), (window) => {
      const frozen = isFrozenAt(c, now)
      return {
        baseCurrency: c.baseCurrency,
        frozen,
        ...(frozen && c.frozenUntil !== undefined ? { frozenUntil: c.frozenUntil } : {}),
        window: windowJson(window)
      } as Json
    })

  const service: MmpService = {
    getConfig: (caller) =>
      Effect.zipRight(
        requireRole(caller, "read"),
        caller.makerId === undefined
          ? Effect.succeed([])
          : Effect.map(store.configs(caller.deskId), (list) => list.map(configJson))
      ),

    setConfig: (caller, req) =>
      Effect.gen(function* () {
        yield* requireMakerDesk(caller, "write")
        const stored = yield* store.putConfig(caller.deskId, req, yield* Clock.currentTimeMillis)
        cache.clear()
        yield* announce({ type: "mmp", event: "changed", deskId: caller.deskId })
        return configJson(stored)
      }),

    deleteConfig: (caller, req) =>
      Effect.gen(function* () {
        yield* requireMakerDesk(caller, "write")
        const now = yield* Clock.currentTimeMillis
        const before = (yield* store.configs(caller.deskId)).find((c) => c.baseCurrency === req.baseCurrency)
        if (!(yield* store.deleteConfig(caller.deskId, req.baseCurrency)))
          return yield* Effect.fail(apiError("recordNotFound", `no mmp config for ${req.baseCurrency}`))
        cache.clear()
        // No protection is no freeze: a frozen desk that drops its config is thawed.
        const thawed: ReadonlyArray<MmpNotice> =
          before !== undefined && isFrozenAt(before, now)
            ? [
                {
                  type: "mmp",
                  event: "thawed",
                  deskId: caller.deskId,
                  baseCurrency: req.baseCurrency,
                  at: now,
                  by: "delete"
                }
              ]
            : []
        yield* announce(...thawed, { type: "mmp", event: "changed", deskId: caller.deskId })
        return { message: `mmp config for ${req.baseCurrency} deleted` }
      }),

    reset: (caller, req) =>
      Effect.gen(function* () {
        yield* requireMakerDesk(caller, "write")
        const now = yield* Clock.currentTimeMillis
        const done = yield* store.reset(caller.deskId, req.baseCurrency, now)
        if (Option.isNone(done))
          return yield* Effect.fail(apiError("recordNotFound", `no mmp config for ${req.baseCurrency}`))
        cache.clear()
        const deskId = caller.deskId
        yield* announce(
          ...(done.value.wasFrozen
            ? [
                {
                  type: "mmp",
                  event: "thawed",
                  deskId,
                  baseCurrency: req.baseCurrency,
                  at: now,
                  by: "reset"
                } as const
              ]
            : []),
          { type: "mmp", event: "changed", deskId }
        )
        const config = (yield* store.configs(deskId)).find((c) => c.baseCurrency === req.baseCurrency)
        if (config === undefined)
          return yield* Effect.fail(apiError("recordNotFound", `no mmp config for ${req.baseCurrency}`))
        return yield* statusOf(deskId, config, now)
      }),

    status: (caller) =>
      Effect.gen(function* () {
        yield* requireRole(caller, "read")
        // A desk that is not a maker has no protection: nothing to show (a write is refused).
        if (caller.makerId === undefined) return []
        const now = yield* Clock.currentTimeMillis
        const configs = yield* store.configs(caller.deskId)
        return yield* Effect.forEach(configs, (c) => statusOf(caller.deskId, c, now))
      }),

    refuseIfFrozen: (deskId, baseCurrency) =>
      Effect.flatMap(configsOf(deskId), (configs) => {
        const config = configs.find((c) => c.baseCurrency === baseCurrency)
        if (config === undefined || config.frozenAt === undefined) return Effect.void
        return Effect.flatMap(Clock.currentTimeMillis, (now) =>
          isFrozenAt(config, now)
            ? Effect.fail(
                apiError(
                  "mmpFrozen",
                  config.frozenUntil === undefined
                    ? `market-maker protection froze the desk in ${baseCurrency} until reset`
                    : `market-maker protection froze the desk in ${baseCurrency} until ${config.frozenUntil}`
                )
              )
            : Effect.void
        )
      }),

    admitFill: (rfq, quote, tradeId, at) =>
      Effect.gen(function* () {
        const configs = yield* configsOf(quote.makerDeskId)
        if (!configs.some((c) => c.baseCurrency === rfq.baseCurrency)) return "Admitted" as const
        const amount = dec(quote.amount)
        const delta = yield* fillDelta(rfq, quote, amount)
        const deskId = quote.makerDeskId
        const baseCurrency = rfq.baseCurrency
        const admission = yield* store.admit({
          deskId,
          baseCurrency,
          tradeId,
          rfqId: rfq.id,
          at,
          quotePutAt: quote.updatedAt,
          amount,
          delta
        })
        if (admission._tag !== "Admitted") {
          cache.clear()
          return admission._tag === "Frozen" ? ("Frozen" as const) : ("Admitted" as const)
        }
        if (admission.thawed || admission.tripped !== undefined) cache.clear()
        const told: Array<MmpNotice> = []
        if (admission.thawed)
          told.push({ type: "mmp", event: "thawed", deskId, baseCurrency, at, by: "time" })
        const tripped = admission.tripped
        if (tripped !== undefined) {
          told.push({
            type: "mmp",
            event: "tripped",
            deskId,
            baseCurrency,
            at,
            frozenUntil: tripped.frozenUntil,
            limit: tripped.limit,
            window: {
              amount: decimalString(tripped.window.amount),
              delta: decimalString(tripped.window.delta),
              trades: tripped.window.trades
            }
          })
        }
        yield* announce(...told)
        return "Admitted" as const
      }),

    protection: (deskId, fresh) => (fresh ? store.configs(deskId) : configsOf(deskId)),

    settleFill: (trade, baseCurrency) =>
      Effect.flatMap(configsOf(trade.makerDeskId), (configs) =>
        configs.some((c) => c.baseCurrency === baseCurrency)
          ? store.settle(trade.id, dec(trade.filledAmount))
          : Effect.void
      ).pipe(Effect.catchAllCause((cause) => Effect.logError("mmp: settled fill not recorded", cause)))
  }
  return service
})

/** Arms the thaw timers of stored freezes while it is built; they stop with its scope. */
export const MmpLive: Layer.Layer<Mmp, never, MmpStore | MmpNotices> = Layer.scoped(Mmp, make)

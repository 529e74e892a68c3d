import { Context, Effect, Layer, Option, PubSub, Queue, type Scope } from "effect"
import { ClusterBus, type JsonValue } from "../cluster/ClusterBus.js"
import { BaseCurrency } from "../domain/Primitives.js"

/**
 * News of market-maker protection that every host must act on: a desk tripped (its quotes on the
 * RFQs each host owns are cancelled, its sessions told, thaw timers armed), thawed (sessions told),
 * or its config changed (caches cleared). Also what the `mmp.maker` channel carries, so the notice
 * is the live event itself (`type: "mmp"`).
 */
export type MmpNotice =
  | {
      readonly type: "mmp"
      readonly event: "tripped"
      readonly deskId: number
      readonly baseCurrency: BaseCurrency
      readonly at: number
      /** Absent: frozen until a reset. */
      readonly frozenUntil?: number | undefined
      readonly limit: "amount" | "delta" | "tradeCount"
      /** Decimal strings, exact. */
      readonly window: { readonly amount: string; readonly delta: string; readonly trades: number }
    }
  | {
      readonly type: "mmp"
      readonly event: "thawed"
      readonly deskId: number
      readonly baseCurrency: BaseCurrency
      readonly at: number
      /** What ended it: its time passed, a reset, or the config deleted. */
      readonly by: "time" | "reset" | "delete"
    }
  | { readonly type: "mmp"; readonly event: "changed"; readonly deskId: number }

export interface MmpNoticesService {
  /** Tells every host (this one included); done once sent, not once acted on. */
  readonly announce: (notice: MmpNotice) => Effect.Effect<void>
  /** The notices announced from now on, by any host, for as long as the scope lives. */
  readonly subscribe: Effect.Effect<Queue.Dequeue<MmpNotice>, never, Scope.Scope>
}

export class MmpNotices extends Context.Tag("rfq/MmpNotices")<MmpNotices, MmpNoticesService>() {}

/** The bus topic of the notices between hosts. */
export const MMP_NOTICES_TOPIC = "mmp.notices"

const isNotice = (value: JsonValue): value is MmpNotice & JsonValue => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false
  const v = value as Record<string, JsonValue>
  if (v.type !== "mmp" || typeof v.deskId !== "number") return false
  if (v.event === "changed") return true
  return (
    (v.event === "tripped" || v.event === "thawed") && BaseCurrency.literals.some((c) => c === v.baseCurrency)
  )
}

/**
 * One host: a `PubSub` in memory. Several hosts (a `ClusterBus` in context): each notice is
 * broadcast on the bus, and every host, the sender's included, hears it from the bus. The bus
 * delivers at most once: a host cut off from NATS at that moment misses the notice. What protects
 * the money does not depend on it (fills are decided under the desk's lock in SQL, and a quote the
 * trip should have cancelled is refused there even after the thaw, `MmpRules.ts#fillBarred`, and
 * closed at the next restore or take-over); its caches are bounded by time and its quote refusals
 * follow within that bound.
 */
export const MmpNoticesLive: Layer.Layer<MmpNotices> = Layer.scoped(
  MmpNotices,
  Effect.gen(function* () {
    const hub = yield* Effect.acquireRelease(PubSub.unbounded<MmpNotice>(), PubSub.shutdown)
    const bus = yield* Effect.serviceOption(ClusterBus)
    if (Option.isNone(bus)) {
      return { announce: (n) => PubSub.publish(hub, n).pipe(Effect.asVoid), subscribe: PubSub.subscribe(hub) }
    }
    const heard = yield* bus.value.subscribe(MMP_NOTICES_TOPIC)
    yield* Queue.take(heard).pipe(
      Effect.flatMap((value) =>
        isNotice(value) ? PubSub.publish(hub, value) : Effect.logWarning("mmp: unreadable notice on the bus")
      ),
      Effect.forever,
      Effect.forkScoped
    )
    return {
      announce: (n) => bus.value.broadcast(MMP_NOTICES_TOPIC, n as unknown as JsonValue),
      subscribe: PubSub.subscribe(hub)
    }
  })
)

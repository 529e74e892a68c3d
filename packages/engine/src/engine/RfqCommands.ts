import { createHash } from "node:crypto"
import { BigDecimal, Clock, Context, Effect, Layer, Option, RcMap } from "effect"
import type { CreateRfqRequest } from "../api/RfqRequests.js"
import { requireRole } from "../auth/Roles.js"
import { type ApiError, apiError } from "../domain/Errors.js"
import { decString } from "../rfq/Dec.js"
import { RfqActors } from "../rfq/RfqActors.js"
import type { Caller } from "../rfq/RfqRecord.js"
import { RfqStore } from "../rfq/RfqStore.js"
import { viewOf } from "../rfq/StepEvents.js"
import { isTaker } from "../rfq/Visibility.js"
import { waitSpan } from "../services/WaitProbe.js"
import { ActorAccess, type ActorServices } from "./ActorAccess.js"
import { buildRfq } from "./CreateRfq.js"

/** The taker's commands on its RFQs. */
export interface RfqCommandsService {
  /**
   * Creates an RFQ. A non-zero `requestId` makes it idempotent per user: the same body again
   * answers the RFQ created first, another body under the same id is refused.
   */
  readonly createRfq: (
    caller: Caller,
    req: CreateRfqRequest,
    options?: CreateRfqOptions
  ) => Effect.Effect<{ rfqId: number }, ApiError>
  readonly cancelRfq: (caller: Caller, rfqId: number) => Effect.Effect<{ id: number }, ApiError>
  readonly deleteRfq: (caller: Caller, rfqId: number) => Effect.Effect<{ rfqId: number }, ApiError>
}

export interface CreateRfqOptions {
  /**
   * The id of the new RFQ, taken beforehand (several hosts: the host that took the request takes
   * the id, which names the RFQ's owner, and forwards the create there). Taken here when absent.
   */
  readonly id?: number | undefined
}

export class RfqCommands extends Context.Tag("rfq/RfqCommands")<RfqCommands, RfqCommandsService>() {}

/** A stable hash of a decoded request, decimals in canonical form, for request-id idempotency. */
const hashRequest = (value: unknown): string =>
  createHash("sha256")
    .update(
      JSON.stringify(value, (_k, v) =>
        BigDecimal.isBigDecimal(v)
          ? `dec:${decString(v)}`
          : v !== null && typeof v === "object" && !Array.isArray(v)
            ? Object.fromEntries(
                Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1))
              )
            : v
      )
    )
    .digest("hex")

const make = (config: { readonly rfqTtlMs: number }) =>
  Effect.gen(function* () {
    const store = yield* RfqStore
    const actors = yield* RfqActors
    const access = yield* ActorAccess
    const context = yield* Effect.context<ActorServices>()
    const now = () => Clock.currentTimeMillis
    // One lock per (user, request id) while a create under it runs, dropped when none does.
    const requestLocks = yield* RcMap.make({ lookup: (_key: string) => Effect.makeSemaphore(1) })

    const createRfq = Effect.fnUntraced(function* (
      caller: Caller,
      req: CreateRfqRequest,
      options?: CreateRfqOptions
    ) {
      yield* requireRole(caller, "write")
      const bodyHash = req.requestId === 0 ? "" : hashRequest(req)
      // The answer to a create whose request id an RFQ already holds: a retry's.
      const answerEarlier = (earlier: { readonly rfqId: number; readonly bodyHash: string }) =>
        earlier.bodyHash === bodyHash
          ? Effect.succeed({ rfqId: earlier.rfqId })
          : Effect.fail(
              apiError(
                "invalidRequest",
                `id: request id ${req.requestId} was already used with a different body`
              )
            )
      const create = Effect.gen(function* () {
        if (req.requestId !== 0) {
          const earlier = yield* store.findByRequestId(caller.userId, req.requestId)
          if (Option.isSome(earlier)) return yield* answerEarlier(earlier.value)
        }
        const id = options?.id ?? (yield* store.nextRfqId)
        const record = yield* buildRfq(caller, req, { id, now: yield* now(), ttlMs: config.rfqTtlMs }).pipe(
          Effect.provide(context)
        )
        // An insert that failed may still commit (a stalled database): its expiry is due either way.
        // One refused for its request id wrote nothing: a create of the same request (on another
        // host, past this host's lock, waitSpan("Engine.createRfq")) committed first, and this one answers as a retry would.
        const inserted = yield* store.insertRfq(record, bodyHash).pipe(
          Effect.as(true),
          Effect.catchTag("RequestIdTaken", () => Effect.succeed(false)),
          Effect.onError(() => access.scheduleExpiry(record.id, record.expiresAt))
        )
        if (!inserted) {
          const earlier = yield* store.findByRequestId(caller.userId, req.requestId)
          if (Option.isNone(earlier))
            return yield* Effect.dieMessage(`request id ${req.requestId} is taken, yet no RFQ holds it`)
          return yield* answerEarlier(earlier.value)
        }
        const actor = actors.register({ rfq: record, quotes: {} })
        yield* access.scheduleExpiry(record.id, record.expiresAt)
        yield* actors.announce(actor, [
          { type: "rfq", event: "created", seq: 1, view: viewOf(actor.value, actor.state) }
        ])
        return { rfqId: record.id }
      })
      if (req.requestId === 0) return yield* create
      // One create per (user, request id) at a time on this host, so a retry racing the original
      // finds it; across hosts, the request id's unique index decides (above).
      return yield* Effect.scoped(
        Effect.flatMap(RcMap.get(requestLocks, `${caller.userId}:${req.requestId}`), (lock) =>
          lock.withPermits(1)(create)
        )
      )
    })

    const cancelRfq = Effect.fnUntraced(function* (caller: Caller, rfqId: number) {
      yield* requireRole(caller, "write")
      return yield* access.visibleActor(caller, rfqId, (actor) =>
        Effect.gen(function* () {
          if (!isTaker(actor.state.rfq, caller))
            return yield* Effect.fail(apiError("insufficientPermissions"))
          const changed = yield* access.step(actor, { type: "CANCEL", now: yield* now() })
          if (!changed)
            return yield* Effect.fail(
              apiError(actor.value === "expired" ? "rfqExpired" : "canOnlyCancelInProgress")
            )
          return { id: rfqId }
        })
      )
    }, waitSpan("Engine.cancelRfq"))

    const deleteRfq = Effect.fnUntraced(function* (caller: Caller, rfqId: number) {
      yield* requireRole(caller, "write")
      return yield* access.visibleActor(caller, rfqId, (actor) =>
        Effect.gen(function* () {
          if (!isTaker(actor.state.rfq, caller))
            return yield* Effect.fail(apiError("insufficientPermissions"))
          const changed = yield* access.step(actor, { type: "DELETE", now: yield* now() })
          if (!changed) return yield* Effect.fail(apiError("canOnlyDeleteDraftOrCancelled"))
          return { rfqId }
        })
      )
    }, waitSpan("Engine.deleteRfq"))

    const service: RfqCommandsService = { createRfq, cancelRfq, deleteRfq }
    return service
  })

export const RfqCommandsLive = (config: {
  readonly rfqTtlMs: number
}): Layer.Layer<RfqCommands, never, RfqStore | RfqActors | ActorAccess | ActorServices> =>
  Layer.scoped(RfqCommands, make(config))

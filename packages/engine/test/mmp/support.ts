import { Context, Effect, Either, Queue, type Scope } from "effect"
import { decodeRequest } from "../../src/api/Decode.js"
import { MmpConfigRequest } from "../../src/api/MmpRequests.js"
import { ListQuotesQuery } from "../../src/api/Queries.js"
import type { ApiError } from "../../src/domain/Errors.js"
import { type MmpNotice, MmpNotices } from "../../src/mmp/MmpNotices.js"
import type { Caller } from "../../src/rfq/RfqRecord.js"
import { type EngineEvent, Events } from "../../src/services/Events.js"
import type { RunningEngine } from "../model/RfqSystem.js"

/** Helpers of the engine-level MMP tests. */

export const configure = (running: RunningEngine, caller: Caller, body: Record<string, unknown>) =>
  Effect.flatMap(decodeRequest(MmpConfigRequest, body), (req) => running.engine.setMmpConfig(caller, req))

/** The error message, or "ok". */
export const outcome = <A, R>(effect: Effect.Effect<A, ApiError, R>) =>
  Effect.map(Effect.either(effect), (r) => (Either.isLeft(r) ? r.left.message : "ok"))

/** The engine's notices and step events from now on (subscribed in the current scope). */
export const listen = (running: RunningEngine) =>
  Effect.gen(function* () {
    const context = running.context as unknown as Context.Context<MmpNotices | Events>
    const notices = yield* Context.get(context, MmpNotices).subscribe
    const events = yield* Context.get(context, Events).subscribe
    return { notices, events }
  })

/** Takes notices until one of `event` arrives (the others are skipped). */
export const nextNotice = <K extends MmpNotice["event"]>(queue: Queue.Dequeue<MmpNotice>, event: K) =>
  Effect.gen(function* () {
    for (;;) {
      const notice = yield* Queue.take(queue)
      if (notice.event === event) return notice as Extract<MmpNotice, { event: K }>
    }
  })

/** Takes step events until every quote of `ids` was seen closed as `cancelled`. */
export const awaitCancelled = (queue: Queue.Dequeue<EngineEvent>, ids: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const left = new Set(ids)
    while (left.size > 0) {
      const event = yield* Queue.take(queue)
      if (event.type === "quote" && event.quote.status === "cancelled") left.delete(event.quote.id)
    }
  })

/** The status of each of the caller's quotes on `rfqId`. */
export const quoteStatuses = (running: RunningEngine, caller: Caller, rfqId: number) =>
  Effect.gen(function* () {
    const page = yield* running.engine.listQuotes(caller, yield* decodeRequest(ListQuotesQuery, { rfqId }))
    return Object.fromEntries(
      (page as unknown as { results: Array<{ rfqQuoteId: number; status: string }> }).results.map((q) => [
        q.rfqQuoteId,
        q.status
      ])
    )
  })

export type Scoped<A> = Effect.Effect<A, never, Scope.Scope>

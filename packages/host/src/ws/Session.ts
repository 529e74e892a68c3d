import { type ApiError, apiError, withRequestBudget } from "@rfq/engine"
import { Cause, Clock, Effect, Fiber, Queue } from "effect"
import type { AuthenticatedCaller } from "../auth/Tokens.js"
import { isDatabaseUnreachable } from "../RequestHandler.js"
import type { ChannelSubscription } from "./Channels.js"
import {
  authenticationRequired,
  errorReply,
  methodNotFound,
  parseFrame,
  RpcCode,
  type RpcCall,
  type RpcEntry,
  type RpcError,
  type RpcFrame,
  type RpcReply,
  rateLimitExceeded,
  resultReply,
  rpcErrorOf,
  subscriptionNotificationText
} from "./JsonRpc.js"
import { type MethodContext, sessionMethods } from "./SessionMethods.js"
import {
  CloseCode,
  revokedReason,
  type Session,
  type SessionEnvironment,
  type SessionTransport
} from "./SessionEnvironment.js"
import type { Subscriber } from "./SubscriptionHub.js"

/** Methods that need no authentication and are not rate limited. */
const OPEN_METHODS = new Set(["auth", "heartbeat"])
/** Rate-limit exemptions of the spec besides the open methods. */
const UNLIMITED_METHODS = new Set(["auth/refresh"])

const utf8 = new TextDecoder("utf-8", { fatal: true })

const decodeFrame = (frame: string | Uint8Array): string | undefined => {
  if (typeof frame === "string") return frame
  try {
    return utf8.decode(frame)
  } catch {
    return undefined
  }
}

const callsOf = (frame: RpcFrame): ReadonlyArray<RpcEntry> =>
  frame._tag === "Single" ? [frame.entry] : frame._tag === "Batch" ? frame.entries : []

const internalError: RpcError = {
  code: RpcCode.internalError,
  message: "internal server error",
  data: { status: 500, reason: [] }
}

/** A defect showing an unreachable database is answered like REST answers it: 503, retryable. */
const databaseUnreachable: RpcError = rpcErrorOf(apiError("serviceUnavailable", "database is not reachable"))

export const makeSession = (transport: SessionTransport, env: SessionEnvironment): Effect.Effect<Session> =>
  Effect.gen(function* () {
    let state: "open" | "closing" | "closed" = "open"
    let caller: AuthenticatedCaller | undefined
    let expiresAt = Number.POSITIVE_INFINITY
    let lastHeartbeatAt = yield* Clock.currentTimeMillis
    let seq = 0
    let pendingBytes = 0
    let cancelOnDisconnectUser: AuthenticatedCaller | undefined
    /** Set when a call found the session's token revoked: the frame's replies go out, then 4003. */
    let revokedBy: ApiError | undefined
    const subscriptions = new Map<string, ChannelSubscription>()
    const inbox = yield* Queue.unbounded<{
      readonly frame: RpcFrame
      readonly bytes: number
      readonly receivedAt: number
    }>()

    const terminate = (code: number, reason: string) => {
      if (state !== "open") return
      state = "closing"
      transport.close(code, reason)
    }

    const send = (message: unknown) => {
      if (state !== "open") return
      let text: string
      try {
        text = JSON.stringify(message)
      } catch {
        text = JSON.stringify(errorReply(null, undefined, internalError))
      }
      transport.send(text)
    }

    const subscriber: Subscriber = {
      caller: () => caller,
      subscriptions: () => subscriptions.values(),
      deliver: (channel, rendered) => {
        if (state !== "open") return
        // A session whose token REST refuses hears nothing more either (no database read here).
        const standing = caller === undefined ? undefined : env.auth.cachedStanding(caller, Date.now())
        if (standing !== undefined && standing !== "unknown") return revoke(standing)
        seq += 1
        // The data's JSON is made once for every session that sees the event alike.
        transport.send(subscriptionNotificationText(channel, seq, rendered.json))
      }
    }

    // One fiber watches both deadlines; heartbeats only move its deadline later, so it re-reads
    // them on waking. A new token may shorten the session, so adopting one re-arms it.
    const watchdog = Effect.gen(function* () {
      while (state === "open") {
        const now = yield* Clock.currentTimeMillis
        const heartbeatDeadline = lastHeartbeatAt + env.heartbeatTimeoutMs
        if (now >= heartbeatDeadline) return terminate(CloseCode.heartbeatTimeout, "heartbeat timeout")
        if (now >= expiresAt) return terminate(CloseCode.tokenExpired, "token expired")
        yield* Effect.sleep(Math.min(heartbeatDeadline, expiresAt) - now)
      }
    })
    let watchdogFiber = yield* Effect.forkDaemon(watchdog)
    const rearmWatchdog = Effect.gen(function* () {
      yield* Fiber.interruptFork(watchdogFiber)
      watchdogFiber = yield* Effect.forkDaemon(watchdog)
    })

    const context: MethodContext = {
      env,
      remoteAddress: transport.remoteAddress,
      caller: () => caller,
      adopt: (next) =>
        Effect.gen(function* () {
          if (cancelOnDisconnectUser !== undefined) cancelOnDisconnectUser = next
          caller = next
          expiresAt = next.tokenExpiresAt
          yield* rearmWatchdog
        }),
      subscriptions,
      subscribed: () => (subscriptions.size > 0 ? env.hub.add(subscriber) : env.hub.remove(subscriber)),
      cancelOnDisconnect: (enabled) => {
        if (caller === undefined) return
        if (enabled && cancelOnDisconnectUser === undefined) {
          env.cancelOnDisconnect.enable(caller.userId)
          cancelOnDisconnectUser = caller
        } else if (!enabled && cancelOnDisconnectUser !== undefined) {
          env.cancelOnDisconnect.disable(cancelOnDisconnectUser.userId)
          cancelOnDisconnectUser = undefined
        }
      }
    }
    const methods = sessionMethods(context)

    /** The outcome of one call: its result, or the error to answer with. */
    const dispatch = (call: RpcCall, now: number, receivedAt: number): Effect.Effect<unknown, RpcError> => {
      // Spec: the time the heartbeat was received, even if calls queued before it took a while.
      if (call.method === "heartbeat") return Effect.succeed({ time: receivedAt })
      // Found revoked earlier in this frame: nothing more runs, `auth` included; 4003 follows.
      if (revokedBy !== undefined) return Effect.fail(rpcErrorOf(revokedBy))
      const method = methods.get(call.method)
      if (method !== undefined && OPEN_METHODS.has(call.method)) return method(call.params)
      if (caller === undefined) {
        return Effect.fail(method === undefined ? methodNotFound(call.method) : authenticationRequired)
      }
      const current = caller
      const proceed = (): Effect.Effect<unknown, RpcError> => {
        // Every message of a user counts, a call of an unknown method included.
        if (!UNLIMITED_METHODS.has(call.method)) {
          const decision = env.limiter.take(`user:${current.userId}`, now)
          if (!decision.allowed) {
            return Effect.fail(rateLimitExceeded(decision.limit, env.limiter.windowMs, decision.reset))
          }
        }
        return method === undefined ? Effect.fail(methodNotFound(call.method)) : method(call.params)
      }
      // The token still stands (client and user active, family not revoked), by the status cache
      // that REST uses: the session never acts on a token REST refuses.
      const standing = env.auth.cachedStanding(current, now)
      if (standing === undefined) return proceed()
      const check = standing === "unknown" ? env.auth.checkStanding(current) : Effect.fail(standing)
      return Effect.matchEffect(check, {
        onFailure: (refusal) => {
          revokedBy = refusal
          return Effect.fail(rpcErrorOf(refusal))
        },
        onSuccess: proceed
      })
    }

    const handleEntry = (entry: RpcEntry, receivedAt: number): Effect.Effect<RpcReply | undefined> =>
      Effect.gen(function* () {
        if (entry._tag === "Invalid") return errorReply(entry.id, entry.method, entry.error)
        const now = yield* Clock.currentTimeMillis
        // The watchdog wakes on a timer; a call that arrives past the expiry must not run first.
        if (caller !== undefined && now >= expiresAt && !OPEN_METHODS.has(entry.method)) {
          terminate(CloseCode.tokenExpired, "token expired")
          return undefined
        }
        // One database budget per call, like a REST request.
        const outcome = yield* withRequestBudget(dispatch(entry, now, receivedAt)).pipe(
          Effect.either,
          Effect.catchAllCause((cause) =>
            Cause.isInterruptedOnly(cause)
              ? Effect.failCause(cause as Cause.Cause<never>)
              : isDatabaseUnreachable(cause)
                ? Effect.logWarning("database unreachable", cause).pipe(
                    Effect.annotateLogs({ method: entry.method }),
                    Effect.as({ _tag: "Left" as const, left: databaseUnreachable })
                  )
                : Effect.logError("JSON-RPC call failed", cause).pipe(
                    Effect.annotateLogs({ method: entry.method }),
                    Effect.as({ _tag: "Left" as const, left: internalError })
                  )
          ),
          // No stack capture per call: spans here are for timing, and the capture dominated the cost.
          // An unknown method gets one span name, so a client cannot mint span names at will.
          Effect.withSpan(
            methods.has(entry.method) || entry.method === "heartbeat"
              ? `RPC ${entry.method}`
              : "RPC (unknown method)",
            {
              captureStackTrace: false
            }
          )
        )
        if (entry.id === undefined) return undefined
        return outcome._tag === "Right"
          ? resultReply(entry.id, entry.method, outcome.right)
          : errorReply(entry.id, entry.method, outcome.left)
      })

    const handleFrame = (frame: RpcFrame, receivedAt: number) =>
      Effect.gen(function* () {
        if (frame._tag === "Rejected") return send(errorReply(null, undefined, frame.error))
        const replies: Array<RpcReply> = []
        for (const entry of callsOf(frame)) {
          if (state !== "open") return
          const reply = yield* handleEntry(entry, receivedAt)
          if (reply !== undefined) replies.push(reply)
        }
        if (state !== "open") return
        // JSON-RPC: a batch of notifications only gets no reply at all, never an empty array.
        if (frame._tag === "Single") {
          if (replies[0] !== undefined) send(replies[0])
        } else if (replies.length > 0) send(replies)
        if (revokedBy !== undefined) terminate(CloseCode.revoked, revokedReason(revokedBy))
      })

    const processor = yield* Effect.forkDaemon(
      Effect.forever(
        Effect.flatMap(Queue.take(inbox), ({ frame, bytes, receivedAt }) =>
          handleFrame(frame, receivedAt).pipe(Effect.ensuring(Effect.sync(() => (pendingBytes -= bytes))))
        )
      )
    )

    const receive = (input: string | Uint8Array) =>
      Effect.gen(function* () {
        if (state !== "open") return
        const text = decodeFrame(input)
        const frame: RpcFrame =
          text === undefined
            ? { _tag: "Rejected", error: { code: RpcCode.parseError, message: "Parse error" } }
            : parseFrame(text, env.maxBatch)
        const receivedAt = yield* Clock.currentTimeMillis
        // A heartbeat counts when it arrives, even if calls queued before it are still running.
        if (callsOf(frame).some((entry) => entry._tag === "Call" && entry.method === "heartbeat")) {
          lastHeartbeatAt = receivedAt
        }
        const bytes = text?.length ?? input.length
        if (pendingBytes + bytes > env.maxPendingBytes) {
          return terminate(CloseCode.policyViolation, "too many pending requests")
        }
        pendingBytes += bytes
        yield* Queue.offer(inbox, { frame, bytes, receivedAt })
      })

    const closed = Effect.gen(function* () {
      if (state === "closed") return
      state = "closed"
      env.hub.remove(subscriber)
      subscriptions.clear()
      yield* Fiber.interrupt(watchdogFiber)
      yield* Fiber.interrupt(processor)
      yield* Queue.shutdown(inbox)
      const protectedCaller = cancelOnDisconnectUser
      cancelOnDisconnectUser = undefined
      if (protectedCaller !== undefined) yield* env.cancelOnDisconnect.release(protectedCaller)
    }).pipe(Effect.uninterruptible)

    const revoke = (error: ApiError) => {
      revokedBy ??= error
      terminate(CloseCode.revoked, revokedReason(revokedBy))
    }

    return { receive, closed, caller: () => caller, revoke } satisfies Session
  })

import { apiError, type EngineService } from "@rfq/engine"
import { Cause, Clock, Effect, Fiber, Queue } from "effect"
import type { AuthService } from "../auth/AuthService.js"
import type { AuthenticatedCaller } from "../auth/Tokens.js"
import type { Operation } from "../Operations.js"
import type { RateLimiter } from "../RateLimiter.js"
import { isDatabaseUnreachable } from "../RequestHandler.js"
import type { CancelOnDisconnect } from "./CancelOnDisconnect.js"
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
import type { Subscriber, SubscriptionHub } from "./SubscriptionHub.js"

/** What a session needs of its connection; the uWS adapter and the tests' fake both provide it. */
export interface SessionTransport {
  /** Sends one text frame at once (never waits; the transport enforces its own buffer cap). */
  readonly send: (frame: string) => void
  /** Ends the connection with a close frame; the transport then runs `Session.closed`. */
  readonly close: (code: number, reason: string) => void
}

export interface SessionEnvironment {
  readonly auth: Pick<AuthService, "verifyToken" | "clientCredentials" | "refresh" | "requireRole">
  readonly engine: EngineService
  /** The shared operation table by JSON-RPC method name. */
  readonly operations: ReadonlyMap<string, Operation>
  /** Per user, shared by all sessions of the endpoint (`WS_RATE_LIMIT_PER_MINUTE`). */
  readonly limiter: RateLimiter
  readonly hub: SubscriptionHub
  readonly cancelOnDisconnect: CancelOnDisconnect
  readonly heartbeatTimeoutMs: number
  readonly maxBatch: number
  /** Frames received but not yet answered, in bytes of text; past it the connection is closed. */
  readonly maxPendingBytes: number
}

export const CloseCode = {
  normal: 1000,
  goingAway: 1001,
  policyViolation: 1008,
  heartbeatTimeout: 4000,
  tokenExpired: 4001,
  backpressure: 4002
} as const

export interface Session {
  /**
   * A frame from the client. Decodes and parses it before returning (so a transport may pass a
   * view of a buffer it reuses), then queues it: frames are handled one at a time, in order.
   */
  readonly receive: (frame: string | Uint8Array) => Effect.Effect<void>
  /**
   * The connection has ended, for whatever reason. Stops the timers, drops the subscriptions,
   * interrupts the call in progress and waits for it, then runs cancel-on-disconnect (so no call
   * of this session can create a quote after the cancel).
   */
  readonly closed: Effect.Effect<void>
}

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
      const method = methods.get(call.method)
      if (method !== undefined && OPEN_METHODS.has(call.method)) return method(call.params)
      if (caller === undefined) {
        return Effect.fail(method === undefined ? methodNotFound(call.method) : authenticationRequired)
      }
      // Every message of a user counts, a call of an unknown method included.
      if (!UNLIMITED_METHODS.has(call.method)) {
        const decision = env.limiter.take(`user:${caller.userId}`, now)
        if (!decision.allowed) {
          return Effect.fail(rateLimitExceeded(decision.limit, env.limiter.windowMs, decision.reset))
        }
      }
      return method === undefined ? Effect.fail(methodNotFound(call.method)) : method(call.params)
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
        const outcome = yield* dispatch(entry, now, receivedAt).pipe(
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
          Effect.withSpan(`RPC ${entry.method}`, { captureStackTrace: false })
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

    return { receive, closed } satisfies Session
  })

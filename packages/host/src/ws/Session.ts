import type { ApiError } from "@rfq/engine"
import { Effect } from "effect"
import type { AuthenticatedCaller } from "../auth/Tokens.js"
import type { ChannelSubscription } from "./Channels.js"
import {
  CloseCode,
  revokedReason,
  type Session,
  type SessionEnvironment,
  type SessionTransport
} from "./SessionEnvironment.js"
import { startFraming } from "./SessionFraming.js"
import { type MethodContext, sessionMethods } from "./SessionMethods.js"
import { startWatchdog } from "./SessionWatchdog.js"
import type { Subscriber } from "./SubscriptionHub.js"

/**
 * One JSON-RPC session, transport-agnostic: its state (who it acts as, its subscriptions, whether
 * cancel-on-disconnect protects its user, whether its token was found revoked) and how it ends.
 * The work is done by its parts: `SessionFraming` (frames in, replies out, back-pressure),
 * `SessionWatchdog` (heartbeat and token expiry) and `SessionMethods` (the call pipeline).
 */
export const makeSession = (transport: SessionTransport, env: SessionEnvironment): Effect.Effect<Session> =>
  Effect.gen(function* () {
    let state: "open" | "closing" | "closed" = "open"
    let caller: AuthenticatedCaller | undefined
    let seq = 0
    let cancelOnDisconnectUser: AuthenticatedCaller | undefined
    /** Set when a call found the session's token revoked: the frame's replies go out, then 4003. */
    let revokedBy: ApiError | undefined
    const subscriptions = new Map<string, ChannelSubscription>()
    const isOpen = () => state === "open"

    const terminate = (code: number, reason: string) => {
      if (state !== "open") return
      state = "closing"
      transport.close(code, reason)
    }

    const revoke = (error: ApiError) => {
      revokedBy ??= error
      terminate(CloseCode.revoked, revokedReason(revokedBy))
    }

    const subscriber: Subscriber = {
      caller: () => caller,
      subscriptions: () => subscriptions.values(),
      deliver: (frame, now) => {
        if (state !== "open") return
        // A session whose token REST refuses hears nothing more either (no database read here).
        const standing = caller === undefined ? undefined : env.auth.cachedStanding(caller, now)
        if (standing !== undefined && standing !== "unknown") return revoke(standing)
        seq += 1
        // The frame is serialised once for every session that sees the event alike; only seq differs.
        transport.send(frame.bytes(seq))
      }
    }

    const watchdog = yield* startWatchdog(env.heartbeatTimeoutMs, isOpen, terminate)
    const clock = yield* Effect.clock

    const context: MethodContext = {
      env,
      remoteAddress: transport.remoteAddress,
      caller: () => caller,
      adopt: (next) =>
        Effect.suspend(() => {
          if (cancelOnDisconnectUser !== undefined) cancelOnDisconnectUser = next
          caller = next
          // The hub indexes sessions by what they see, which the caller decides.
          if (subscriptions.size > 0) env.hub.add(subscriber)
          return watchdog.expireAt(next.tokenExpiresAt)
        }),
      subscriptions,
      subscribed: () => (subscriptions.size > 0 ? env.hub.add(subscriber) : env.hub.remove(subscriber)),
      cancelOnDisconnect: (enabled) => {
        if (caller === undefined) return
        if (enabled && cancelOnDisconnectUser === undefined) {
          env.cancelOnDisconnect.enable(caller.userId, caller)
          cancelOnDisconnectUser = caller
        } else if (!enabled && cancelOnDisconnectUser !== undefined) {
          env.cancelOnDisconnect.disable(cancelOnDisconnectUser.userId)
          cancelOnDisconnectUser = undefined
        }
      },
      revoked: () => revokedBy,
      markRevoked: (refusal) => {
        revokedBy = refusal
      }
    }
    const methods = sessionMethods(context)

    const framing = yield* startFraming({
      transport,
      maxBatch: env.maxBatch,
      maxPendingBytes: env.maxPendingBytes,
      isOpen,
      terminate,
      onHeartbeat: watchdog.heartbeat,
      reply: (call, receivedAt) => {
        const now = clock.unsafeCurrentTimeMillis()
        // The watchdog wakes on a timer; a call that arrives past the expiry must not run first.
        if (watchdog.expired(now) && !methods.isOpen(call.method)) {
          terminate(CloseCode.tokenExpired, "token expired")
          return undefined
        }
        return methods.reply(call, now, receivedAt)
      },
      afterFrame: () => {
        if (revokedBy !== undefined) terminate(CloseCode.revoked, revokedReason(revokedBy))
      }
    })

    const closed = Effect.gen(function* () {
      if (state === "closed") return
      state = "closed"
      env.hub.remove(subscriber)
      subscriptions.clear()
      yield* watchdog.stop
      yield* framing.stop
      const protectedCaller = cancelOnDisconnectUser
      cancelOnDisconnectUser = undefined
      if (protectedCaller !== undefined) yield* env.cancelOnDisconnect.release(protectedCaller)
    }).pipe(Effect.uninterruptible)

    return {
      receive: framing.receive,
      receiveNow: framing.receiveNow,
      closed,
      caller: () => caller,
      revoke
    } satisfies Session
  })

import {
  API_ACCESS_TOKEN_SECONDS,
  type ApiError,
  apiError,
  decodeRequestEither,
  isApiError,
  WsAuthParams,
  WsAuthRefreshParams,
  waitProfiling,
  waitSpan,
  withRequestBudget
} from "@rfq/engine"
import { Effect, Either, Schema } from "effect"
import type { AuthenticatedCaller } from "../auth/Tokens.js"
import type { RateDecision } from "../RateLimiter.js"
import { startCall, startOperation } from "../CallPipeline.js"
import {
  answerOfCause,
  authenticationRequired,
  methodNotFound,
  rateLimitExceeded,
  type RpcRefusal,
  rpcErrorOfRefusal
} from "../ErrorTable.js"
import { type ChannelSubscription, ChannelsParams, parseChannel } from "./Channels.js"
import { errorReply, type RpcCall, type RpcReply, resultReply } from "./JsonRpc.js"
import type { SessionEnvironment } from "./SessionEnvironment.js"

/**
 * The session's method dispatch: the call pipeline (`CallPipeline.ts`) for JSON-RPC. Every call
 * but `heartbeat` and `auth` needs the session authenticated and its token still standing, then
 * counts against the user's rate limit (`auth/refresh` excepted), then runs its method: `auth`,
 * `auth/refresh`, the channel methods, `v1/cancel-on-disconnect`, or an operation of the shared
 * table (same access rules, schemas and messages as REST). Failures are answered from
 * `ErrorTable.ts`.
 */

/** What the methods may see and change of their session. */
export interface MethodContext {
  readonly env: SessionEnvironment
  /** The peer's address, for the limit of failed client-secret checks. */
  readonly remoteAddress: string | undefined
  readonly caller: () => AuthenticatedCaller | undefined
  /** Makes `caller` the session's identity; its token's expiry becomes the session's. */
  readonly adopt: (caller: AuthenticatedCaller) => Effect.Effect<void>
  readonly subscriptions: Map<string, ChannelSubscription>
  /** Tells the session its subscriptions changed. */
  readonly subscribed: () => void
  readonly cancelOnDisconnect: (enabled: boolean) => void
  /** The refusal that found the session's token revoked; nothing more runs once it is set. */
  readonly revoked: () => ApiError | undefined
  readonly markRevoked: (refusal: ApiError) => void
}

/**
 * A call's reply as soon as it is known: at once (a reply, or `undefined` for a notification) when
 * no step of the call needs a fiber, else the Effect that makes it.
 */
export type ReplyNow = RpcReply | undefined | Effect.Effect<RpcReply | undefined>

export interface SessionMethods {
  /** Whether the method needs no authentication (and is not rate limited). */
  readonly isOpen: (method: string) => boolean
  /**
   * The reply to one call received at `receivedAt` (`undefined` for a notification). Synchronous
   * up to the method's own work: a heartbeat, a refusal (authentication, standing, rate limit,
   * role, params) or a session method is answered at once; an operation's engine call, `auth` and
   * a standing not in the cache are the Effect. Never throws.
   */
  readonly reply: (call: RpcCall, now: number, receivedAt: number) => ReplyNow
}

/**
 * A method's outcome; an `Either` when it is known at once (an `Either` is an Effect too: the
 * dispatch checks `Either.isEither` to answer it without a fiber).
 */
type Method = (params: unknown, caller: AuthenticatedCaller) => Effect.Effect<unknown, RpcRefusal>

/** Rate-limit exemption of the spec besides the open methods. */
const UNLIMITED_METHODS = new Set(["auth/refresh"])

/** `v1/cancel-on-disconnect`'s params, and its result (also published in `AsyncApiSession.ts`). */
export const CancelOnDisconnectParams = Schema.Struct({ enabled: Schema.Boolean }).annotations({
  identifier: "CancelOnDisconnect",
  description: "Params and result of `v1/cancel-on-disconnect`."
})

/** JSON-RPC params are by name here: absent means `{}`, a positional array is refused. */
const paramsObject = (params: unknown): Either.Either<unknown, ApiError> =>
  params === undefined
    ? Either.right({})
    : Array.isArray(params)
      ? Either.left(apiError("invalidRequest", "params: must be an object (parameters by name)"))
      : Either.right(params)

const decodeParams = <A, I>(schema: Schema.Schema<A, I>, params: unknown) =>
  Either.flatMap(paramsObject(params), (value) => decodeRequestEither(schema, value))

const anotherUser = apiError(
  "invalidRequest",
  "the session is authenticated as another user; open a new connection to change users"
)

export const sessionMethods = (context: MethodContext): SessionMethods => {
  const { env } = context
  const { auth } = env

  /** A session belongs to one user; a token of the same user renews it. */
  const adoptSameUser = (next: AuthenticatedCaller) =>
    Effect.suspend(() => {
      const current = context.caller()
      return current !== undefined && current.userId !== next.userId
        ? Effect.fail(anotherUser)
        : context.adopt(next)
    })

  const authenticate = (params: unknown) =>
    Effect.gen(function* () {
      const request = yield* decodeParams(WsAuthParams, params)
      if ("token" in request) {
        yield* adoptSameUser(yield* auth.verifyToken(request.token))
        return { success: true }
      }
      // Spec: with client credentials the result carries a new access token, usable on REST.
      const issued = yield* auth.clientCredentials(
        request.clientId,
        request.clientSecret,
        API_ACCESS_TOKEN_SECONDS,
        false,
        context.remoteAddress
      )
      yield* adoptSameUser(yield* auth.verifyToken(issued.access_token))
      return { success: true, token: issued.access_token }
    })

  const refresh: Method = (params, caller) =>
    Effect.gen(function* () {
      const request = yield* decodeParams(WsAuthRefreshParams, params)
      if ("refreshToken" in request) {
        // The session has proven its client, so the secret is not asked again (Auth.refresh).
        if (caller.clientId === undefined) return yield* Effect.fail(apiError("invalidClientId"))
        const issued = yield* auth.refresh(request.refreshToken, caller.clientId)
        const next = yield* auth.verifyToken(issued.access_token)
        yield* adoptSameUser(next)
        return {
          success: true,
          token: issued.access_token,
          ...(issued.refresh_token === undefined ? {} : { refreshToken: issued.refresh_token }),
          expiresAt: next.tokenExpiresAt
        }
      }
      const next = yield* auth.verifyToken(request.token)
      yield* adoptSameUser(next)
      return { success: true, expiresAt: next.tokenExpiresAt }
    })

  // The session's own methods change only the session: done at once, when the call's turn comes.
  const channels =
    (status: "subscribed" | "unsubscribed"): Method =>
    (params, caller) =>
      startCall(
        caller,
        "read",
        ChannelsParams,
        () => paramsObject(params),
        (request) => {
          const names = [...new Set(request.channels)]
          for (const name of names) {
            const subscription = parseChannel(name)
            if (subscription === undefined) continue
            if (status === "subscribed") context.subscriptions.set(name, subscription)
            else context.subscriptions.delete(name)
          }
          context.subscribed()
          return Either.right({ status, channels: names })
        }
      )

  const cancelOnDisconnect: Method = (params, caller) =>
    startCall(
      caller,
      "write",
      CancelOnDisconnectParams,
      () => paramsObject(params),
      ({ enabled }) => {
        context.cancelOnDisconnect(enabled)
        return Either.right({ enabled })
      }
    )

  const methods = new Map<string, Method>([
    ["auth/refresh", refresh],
    ["v1/subscribe", channels("subscribed")],
    ["v1/unsubscribe", channels("unsubscribed")],
    ["v1/cancel-on-disconnect", cancelOnDisconnect]
  ])
  for (const [name, op] of env.operations) {
    if (name === "auth" || methods.has(name)) continue
    methods.set(name, (params, caller) => startOperation(op, env.engine, caller, () => paramsObject(params)))
  }
  const isOpen = (method: string) => method === "auth" || method === "heartbeat"

  /** The call if the user's rate limit let it through, else the refusal. */
  const limited = (decision: RateDecision, run: () => Effect.Effect<unknown, RpcRefusal>) =>
    decision.allowed
      ? run()
      : Either.left(rateLimitExceeded(decision.limit, env.limiter.windowMs, decision.reset))

  /**
   * Authenticate → rate limit → method; the outcome of one call, or what refused it. Each step is
   * plain code while it can answer at once: the outcome is then an `Either`.
   */
  const dispatch = (call: RpcCall, now: number, receivedAt: number): Effect.Effect<unknown, RpcRefusal> => {
    // Spec: the time the heartbeat was received, even if calls queued before it took a while.
    if (call.method === "heartbeat") return Either.right({ time: receivedAt })
    // Found revoked earlier in this frame: nothing more runs, `auth` included; 4003 follows.
    const revoked = context.revoked()
    if (revoked !== undefined) return Either.left(revoked)
    if (call.method === "auth") return authenticate(call.params)
    const method = methods.get(call.method)
    const caller = context.caller()
    if (caller === undefined)
      return Either.left(method === undefined ? methodNotFound(call.method) : authenticationRequired)
    const proceed = (): Effect.Effect<unknown, RpcRefusal> => {
      const run = () =>
        method === undefined ? Either.left(methodNotFound(call.method)) : method(call.params, caller)
      // Every message of a user counts, a call of an unknown method included.
      if (UNLIMITED_METHODS.has(call.method)) return run()
      const decision = env.limiter.take(`user:${caller.userId}`, now)
      return Effect.isEffect(decision)
        ? Effect.flatMap(decision, (d) => limited(d, run))
        : limited(decision, run)
    }
    // The token still stands (client and user active, family not revoked), by the status cache
    // that REST uses: the session never acts on a token REST refuses.
    const standing = auth.cachedStanding(caller, now)
    if (standing === undefined) return proceed()
    if (standing !== "unknown") {
      context.markRevoked(standing)
      return Either.left(standing)
    }
    return Effect.matchEffect(auth.checkStanding(caller), {
      onFailure: (refusal) => {
        context.markRevoked(refusal)
        return Effect.fail(refusal)
      },
      onSuccess: proceed
    })
  }

  const replyOf = (call: RpcCall, outcome: Either.Either<unknown, RpcRefusal>): RpcReply | undefined =>
    call.id === undefined
      ? undefined
      : Either.isRight(outcome)
        ? resultReply(call.id, call.method, outcome.right)
        : errorReply(call.id, call.method, rpcErrorOfRefusal(outcome.left))

  /** The reply made by a fiber: the outcome's Effect with its budget, defects answered and logged. */
  const replyLater = (call: RpcCall, outcome: Effect.Effect<unknown, RpcRefusal>) =>
    // One database budget per call, like a REST request.
    withRequestBudget(outcome).pipe(
      Effect.either,
      Effect.catchAllCause((cause) =>
        answerOfCause(cause, isApiError, "JSON-RPC call failed").pipe(
          Effect.annotateLogs({ method: call.method }),
          Effect.map(Either.left)
        )
      ),
      Effect.map((answer) => replyOf(call, answer)),
      // A span per call only under a wait profile (`waitSpan`): even without a tracer a span costs
      // 10–20 µs, more than a heartbeat. An unknown method gets one span name, so a client cannot
      // mint span names at will.
      waitSpan(
        isOpen(call.method) || methods.has(call.method) ? `RPC ${call.method}` : "RPC (unknown method)"
      )
    )

  const reply = (call: RpcCall, now: number, receivedAt: number): ReplyNow => {
    let outcome: Effect.Effect<unknown, RpcRefusal>
    try {
      outcome = dispatch(call, now, receivedAt)
    } catch (error) {
      // What the fiber made of a throw before: a defect, answered and logged by `replyLater`.
      return replyLater(call, Effect.die(error))
    }
    // Known at once: no fiber, unless a wait profile wants the call's span.
    return Either.isEither(outcome) && !waitProfiling()
      ? replyOf(call, outcome as Either.Either<unknown, RpcRefusal>)
      : replyLater(call, outcome)
  }

  return { isOpen, reply }
}

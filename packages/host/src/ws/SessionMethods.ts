import {
  type ApiError,
  apiError,
  decodeRequest,
  isApiError,
  WsAuthParams,
  WsAuthRefreshParams
} from "@rfq/engine"
import { Effect, Schema } from "effect"
import { API_ACCESS_TOKEN_SECONDS } from "../auth/AuthService.js"
import { LoginThrottled } from "../auth/LoginThrottle.js"
import type { AuthenticatedCaller } from "../auth/Tokens.js"
import { type ChannelSubscription, ChannelsParams, parseChannel } from "./Channels.js"
import { authenticationRequired, type RpcError, rateLimitExceeded, rpcErrorOf } from "./JsonRpc.js"
import type { SessionEnvironment } from "./SessionEnvironment.js"

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
}

export type Method = (params: unknown) => Effect.Effect<unknown, RpcError>

const CancelOnDisconnectParams = Schema.Struct({ enabled: Schema.Boolean })

/** JSON-RPC params are by name here: absent means `{}`, a positional array is refused. */
const paramsObject = (params: unknown): Effect.Effect<unknown, ApiError> =>
  params === undefined
    ? Effect.succeed({})
    : Array.isArray(params)
      ? Effect.fail(apiError("invalidRequest", "params: must be an object (parameters by name)"))
      : Effect.succeed(params)

const decodeParams = <A, I>(schema: Schema.Schema<A, I>, params: unknown) =>
  Effect.flatMap(paramsObject(params), (value) => decodeRequest(schema, value))

/** Too many failed secret checks: the spec's rate-limit error, with the login limit's numbers. */
const toRpcError = (error: ApiError | RpcError | LoginThrottled): RpcError =>
  isApiError(error)
    ? rpcErrorOf(error)
    : error instanceof LoginThrottled
      ? rateLimitExceeded(error.decision.limit, error.windowMs, error.decision.reset)
      : error

const anotherUser = apiError(
  "invalidRequest",
  "the session is authenticated as another user; open a new connection to change users"
)

/**
 * The session's methods besides `heartbeat`: `auth`, `auth/refresh`, the channel methods,
 * `v1/cancel-on-disconnect`, and every operation of the shared table (same access rules, schemas
 * and messages as REST). The session checks authentication and the rate limit before calling.
 */
export const sessionMethods = (context: MethodContext): ReadonlyMap<string, Method> => {
  const { env } = context
  const { auth } = env

  const currentCaller = Effect.suspend(() => {
    const caller = context.caller()
    return caller === undefined ? Effect.fail(authenticationRequired) : Effect.succeed(caller)
  })

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

  const refresh = (params: unknown) =>
    Effect.gen(function* () {
      const caller = yield* currentCaller
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

  const channels = (status: "subscribed" | "unsubscribed") => (params: unknown) =>
    Effect.gen(function* () {
      yield* auth.requireRole(yield* currentCaller, "read")
      const request = yield* decodeParams(ChannelsParams, params)
      const names = [...new Set(request.channels)]
      for (const name of names) {
        const subscription = parseChannel(name)
        if (subscription === undefined) continue
        if (status === "subscribed") context.subscriptions.set(name, subscription)
        else context.subscriptions.delete(name)
      }
      context.subscribed()
      return { status, channels: names }
    })

  const cancelOnDisconnect = (params: unknown) =>
    Effect.gen(function* () {
      yield* auth.requireRole(yield* currentCaller, "write")
      const { enabled } = yield* decodeParams(CancelOnDisconnectParams, params)
      context.cancelOnDisconnect(enabled)
      return { enabled }
    })

  const methods = new Map<
    string,
    (params: unknown) => Effect.Effect<unknown, ApiError | RpcError | LoginThrottled>
  >([
    ["auth", authenticate],
    ["auth/refresh", refresh],
    ["v1/subscribe", channels("subscribed")],
    ["v1/unsubscribe", channels("unsubscribed")],
    ["v1/cancel-on-disconnect", cancelOnDisconnect]
  ])
  for (const [name, op] of env.operations) {
    if (methods.has(name)) continue
    methods.set(name, (params) =>
      Effect.gen(function* () {
        const caller = yield* currentCaller
        yield* auth.requireRole(caller, op.access)
        const input = yield* decodeParams(op.input, params)
        return yield* op.run(env.engine, caller, input)
      })
    )
  }
  return new Map(
    [...methods].map(([name, method]) => [name, (params) => Effect.mapError(method(params), toRpcError)])
  )
}

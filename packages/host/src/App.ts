import {
  type ApiError,
  demoClientLogins,
  Engine,
  Ownership,
  makeDatabaseLayer,
  makeEngineLayer,
  apiError,
  seedDemoData,
  SecretBoxLive
} from "@rfq/engine"
import { Effect, Layer, Option, Redacted } from "effect"
import { serveHostAdmin } from "./admin/HostAdmin.js"
import { Auth, AuthLive } from "./auth/AuthService.js"
import { authRoutes } from "./auth/AuthRoutes.js"
import { demoScryptParams, hashSecret } from "./auth/SecretHash.js"
import type { HostInput } from "./Host.js"
import { type Operation, operations } from "./Operations.js"
import { type RateDecision, type RateLimit, RateLimiter, rateLimitHeaders } from "./RateLimiter.js"
import { SharedState } from "./shared/SharedState.js"
import { forgetReferenceDataWhenStale } from "./shared/StaleReferenceData.js"
import { SharedStateRedis } from "./shared/RedisSharedState.js"
import { ClusterUnavailable } from "./ClusterConfig.js"
import type { AnyAround, AroundNow } from "./RouteDispatch.js"
import type { RouteRequest, RouteResponse } from "./Router.js"
import { errorResponse } from "./ErrorTable.js"
import { restRoutes } from "./RestRoutes.js"
import { ownerHints } from "./OwnerHints.js"
import { docsRoutes } from "./DocsPage.js"
import { consoleRoutes } from "./ConsoleRoutes.js"
import type { HttpServer } from "./HttpServer.js"
import { attachWebSocket, webSocketOptions } from "./ws/WebSocketEndpoint.js"
import { healthRoutes } from "./HealthRoutes.js"
import { Metrics } from "./Metrics.js"
import { contractRoutes } from "./ContractRoutes.js"
import { sharedEngineLayer } from "./cluster/SharedEngine.js"
import { version } from "@rfq/engine"

/** The key ring (`ENCRYPTION_KEYS`, or `ENCRYPTION_KEY` / the key file as version 1), copied. */
const encryptionKeysOf = (input: HostInput) =>
  new Map(
    [...Redacted.value(input.secrets.encryptionKeys)].map(([version, key]) => [version, new Uint8Array(key)])
  )

/**
 * Seeds the demo data on an empty database when DEMO=1 and prints the demo clients. Answers the
 * demo venue accounts to register on every start (the taker's `dbt-flaky` fails every execution).
 */
const seedIfDemo = (input: HostInput) =>
  Effect.gen(function* () {
    if (!input.config.demo) return []
    const result = yield* seedDemoData({ hashSecret: (secret) => hashSecret(secret, demoScryptParams) }).pipe(
      Effect.provide(SecretBoxLive(encryptionKeysOf(input)))
    )
    if (result.seeded) {
      yield* Effect.logInfo("demo data seeded").pipe(
        Effect.annotateLogs({ clients: result.clients.map((c) => `${c.clientId} (${c.role})`).join(", ") })
      )
    }
    process.stdout.write(
      `demo clients (clientId / clientSecret): ${demoClientLogins.map((c) => `${c.clientId} / ${c.clientSecret}`).join(", ")}\n`
    )
    return result.venueAccounts
  })

/**
 * The application over its database: migrations, demo data, the engine (restoring live RFQs and
 * reconciling interrupted settlements as it starts) and authentication.
 */
const metricsByHost = new WeakMap<HostInput, Metrics>()
/** One metrics registry per host start (tests start several hosts in one process). */
export const metricsOf = (input: HostInput): Metrics => {
  let metrics = metricsByHost.get(input)
  if (metrics === undefined) {
    metrics = new Metrics()
    metricsByHost.set(input, metrics)
  }
  return metrics
}

export const appLayer = (input: HostInput) => {
  const cluster = Option.getOrUndefined(input.config.cluster)
  // One host is the one engine on its database: a previous process's sessions end at start. One
  // host among several must leave the others' sessions alone.
  const database = makeDatabaseLayer(
    input.database.kind === "postgres"
      ? { ...input.database, exclusive: cluster === undefined }
      : input.database
  )
  const engine = Layer.unwrapEffect(
    Effect.gen(function* () {
      const venueAccounts = yield* seedIfDemo(input)
      const options = {
        rfqTtlMs: input.config.rfqTtlSeconds * 1000,
        encryptionKeys: encryptionKeysOf(input),
        venueAccounts,
        onVenueCall: metricsOf(input).onVenueCall
      }
      if (cluster === undefined || input.database.kind !== "postgres") return makeEngineLayer(options)
      const shared = sharedEngineLayer(cluster, input.database, options)
      // It provides every service the host uses (all but Recovery, which stays inside).
      return shared as unknown as ReturnType<typeof makeEngineLayer>
    })
  )
  const auth = AuthLive({
    jwtSecret: input.secrets.jwtSecret,
    loginThrottle: {
      perAddress: input.config.loginFailuresPerMinute,
      perClient: 5 * input.config.loginFailuresPerMinute
    },
    onSecretVerified: metricsOf(input).onSecretVerified
  })
  const app = Layer.mergeAll(engine, auth).pipe(Layer.provideMerge(database))
  if (cluster === undefined) return app
  // Several hosts: rate limits, the login throttle, cancel-on-disconnect counts and invalidation
  // notices are shared in Redis; auth, the request limits and the WebSocket endpoint find it here.
  const shared = SharedStateRedis({
    redisUrl: cluster.redisUrl,
    namespace: cluster.namespace,
    hostId: `${cluster.runnerHost}:${cluster.runnerPort}`
  }).pipe(Layer.mapError((e) => new ClusterUnavailable(e.message)))
  return app.pipe(Layer.provideMerge(shared)) as unknown as typeof app
}

/** The WebSocket endpoint, with its session count reported to the metrics of this host. */
export const appOnListening = (input: HostInput, server: HttpServer) =>
  Effect.gen(function* () {
    const endpoint = yield* attachWebSocket(server.app, webSocketOptions(input.config))
    metricsOf(input).webSocketSessions = endpoint.connections
    // `npm run admin` beside the running host (embedded mode): its commands arrive here.
    yield* serveHostAdmin(input)
    yield* forgetReferenceDataWhenStale
  })

export type AppServices = Layer.Layer.Success<ReturnType<typeof appLayer>>

/** The host's routes; `ops` is the operation table (tests give one without `peek`, to compare). */
export const appRoutes = (input: HostInput, ops: ReadonlyArray<Operation> = operations) =>
  Effect.gen(function* () {
    const engine = yield* Engine
    const auth = yield* Auth
    const clock = yield* Effect.clock
    const ownership = yield* Ownership
    const metrics = metricsOf(input)
    metrics.openRfqs = engine.liveCount
    return [
      ...authRoutes,
      ...restRoutes(ops, engine, auth, () => clock.unsafeCurrentTimeMillis(), ownerHints(ownership)),
      ...contractRoutes({ operations: ops, version, listen: input.config }),
      metrics.route(),
      ...docsRoutes(),
      ...consoleRoutes()
    ]
  })

/**
 * Rate limits around every request, 404s, 413s and the 503 of a server shutting down included: per
 * user id when the bearer token verifies, per peer address otherwise (the token endpoints
 * included). The headers go on every response.
 */
/** Metrics outside, rate limits inside: a 429 is counted and timed like any answer. */
export const appAround = (input: HostInput) =>
  Effect.gen(function* () {
    const limit = yield* rateLimitAround(input)
    const routes = yield* appRoutes(input)
    // Health routes are served by the host itself; listed here so metrics label them too.
    const timed = metricsOf(input).around([...routes, ...healthRoutes(Effect.void)])
    const limitNow = limit.now
    const timedNow = timed.now
    const now: AroundNow | undefined =
      limitNow === undefined || timedNow === undefined
        ? undefined
        : (request, next) => timedNow(request, () => limitNow(request, next))
    const around: AnyAround = Object.assign(
      <R>(request: RouteRequest, next: Effect.Effect<RouteResponse, ApiError, R>) =>
        timed(request, limit(request, next)),
      { now }
    )
    return around
  })

/**
 * An answer with the request limit's headers. A route's own X-RateLimit-* (the login limit's 429)
 * wins over the request limit's. A plain answer (nearly always) is rebuilt field by field: on the
 * read path that is cheaper than two spreads.
 */
const withLimitHeaders = (response: RouteResponse, headers: Record<string, string>): RouteResponse =>
  response.headers === undefined && response.text === undefined
    ? { status: response.status, body: response.body, headers }
    : { ...response, headers: response.headers === undefined ? headers : { ...headers, ...response.headers } }

export const rateLimitAround = (input: HostInput) =>
  Effect.gen(function* () {
    const auth = yield* Auth
    // Several hosts count in one place (`SharedState`, multi-host mode); one host counts here.
    const shared = yield* Effect.serviceOption(SharedState)
    const limiter: RateLimit = Option.isSome(shared)
      ? shared.value.rateLimit("http", input.config.rateLimitPerMinute)
      : new RateLimiter(input.config.rateLimitPerMinute)
    const decided = <R>(
      decision: RateDecision,
      next: Effect.Effect<RouteResponse, ApiError, R>
    ): Effect.Effect<RouteResponse, ApiError, R> => {
      const headers = rateLimitHeaders(decision)
      if (!decision.allowed)
        return Effect.succeed({ ...errorResponse(apiError("rateLimitExceeded")), headers })
      return Effect.matchEffect(next, {
        onFailure: (e) => Effect.succeed({ ...errorResponse(e), headers }),
        onSuccess: (response) => Effect.succeed(withLimitHeaders(response, headers))
      })
    }
    // Once per request: synchronous while the caller's token is already known (nearly always)
    // and the count is this host's own.
    const limited = <R>(
      key: string,
      now: number,
      next: Effect.Effect<RouteResponse, ApiError, R>
    ): Effect.Effect<RouteResponse, ApiError, R> => {
      const decision = limiter.take(key, now)
      return Effect.isEffect(decision)
        ? Effect.flatMap(decision, (d) => decided(d, next))
        : decided(decision, next)
    }
    // A caller comes from the token caches, the same object request after request: its key is made once.
    const userKeys = new WeakMap<{ readonly userId: number }, string>()
    const keyOf = (caller: { readonly userId: number } | undefined, request: RouteRequest) => {
      if (caller === undefined) return `ip:${request.remoteAddress}`
      let key = userKeys.get(caller)
      if (key === undefined) {
        key = `user:${caller.userId}`
        userKeys.set(caller, key)
      }
      return key
    }
    const clock = yield* Effect.clock
    // A request answered without a fiber: only with a caller known from the caches and a count kept
    // here (several hosts count in Redis, through a fiber). The route's answer is made first (it
    // changes nothing), then the request is counted, so an undefined answer counts nothing.
    const now: AroundNow | undefined = !(limiter instanceof RateLimiter)
      ? undefined
      : (request, next) => {
          const header = request.headers.authorization
          if (header === undefined) return undefined
          const at = clock.unsafeCurrentTimeMillis()
          const caller = auth.knownCaller(header, at)
          if (caller === undefined) return undefined
          const answer = next(caller)
          if (answer === undefined) return undefined
          const decision = limiter.take(keyOf(caller, request), at)
          const headers = rateLimitHeaders(decision)
          if (!decision.allowed) return { ...errorResponse(apiError("rateLimitExceeded")), headers }
          return withLimitHeaders(answer, headers)
        }
    const aroundEffect = <R>(request: RouteRequest, next: Effect.Effect<RouteResponse, ApiError, R>) =>
      Effect.clockWith((clock) => {
        const now = clock.unsafeCurrentTimeMillis()
        const header = request.headers.authorization
        if (header === undefined) return limited(keyOf(undefined, request), now, next)
        const known = auth.knownCaller(header, now)
        if (known !== undefined) return limited(keyOf(known, request), now, next)
        return Effect.flatMap(
          Effect.option(auth.authenticate(header)),
          (caller): Effect.Effect<RouteResponse, ApiError, R> =>
            limited(keyOf(Option.getOrUndefined(caller), request), now, next)
        )
      })
    const around: AnyAround = Object.assign(aroundEffect, { now })
    return around
  })

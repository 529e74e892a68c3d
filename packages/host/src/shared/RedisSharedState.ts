import { Effect, Layer, type Scope } from "effect"
import { defineCancelScripts, makeRedisCancelOnDisconnect } from "./RedisCancelOnDisconnect.js"
import { connectRedis, keyPrefix, makeWarn, SharedStateUnavailable, shownUrl } from "./RedisConnection.js"
import { makeRedisInvalidation } from "./RedisInvalidation.js"
import { defineLoginScripts, makeRedisLoginThrottle } from "./RedisLoginThrottle.js"
import { defineTakeScript, makeRedisRateLimit } from "./RedisRateLimiter.js"
import { SharedState, type SharedStateService } from "./SharedState.js"

/**
 * `SharedState` in Redis: the state several hosts hold together (multi-host mode). Keys start with
 * `rfq:<namespace>:`, so services (and test runs) sharing one Redis never meet. One Redis (a
 * primary, possibly behind Sentinel), version 7 or later (`PEXPIRETIME`, `PEXPIRE NX`, `SET GET`);
 * not Redis Cluster (scripts touch keys they compute).
 *
 * Redis is needed to start: an unreachable Redis is the one-line start error
 * `cannot reach Redis at <url>: <reason>`.
 *
 * WHEN REDIS GOES AWAY AT RUN TIME, THE SERVICE STAYS UP ("fail open, to this host's limits").
 * Redis holds no truth (PostgreSQL does), only counts that make limits exact across hosts; losing
 * them must not take the venue down, so nothing answers 503 because of Redis:
 * - Rate limits (REST and WebSocket): each request Redis cannot count within the command timeout
 *   (1 s) is counted by this host's own fixed-window limiter. A user gets at most `limit` per
 *   host per window (N hosts: N × limit) until Redis answers again; then the shared count resumes.
 * - Failed-secret throttle: likewise this host's own `LoginThrottle`, so a guesser gets at most
 *   the per-host limits on each host; a refusal still costs no scrypt.
 * - Cancel-on-disconnect: a host's own count decides while the user has other protected sessions
 *   on it; when the user's last one there ends and Redis cannot say whether other hosts have one,
 *   the quotes are cancelled (cancelling early is safe, leaving quotes behind is not). Counts are
 *   written again once Redis is back.
 * - Invalidation notices: lost while Redis is away; a host whose subscription broke drops all its
 *   cached account standing when it is back, and until then the caches' own lifetime (5 s) and the
 *   sessions' recheck (1 s) bound staleness, as on a single host.
 * Each kind of failure is logged as a warning at most every 10 s.
 */

export interface SharedStateOptions {
  /** `REDIS_URL`, e.g. `redis://127.0.0.1:6379`. */
  readonly redisUrl: string
  /** Names this service's keys (`rfq:<namespace>:`); tests pass a random one. */
  readonly namespace: string
  /** This host, unique among running hosts (the runner address serves). */
  readonly hostId: string
  /** How long a host's protected sessions count after its last heartbeat (default 6 s). */
  readonly hostTtlMs?: number | undefined
  /** How often a host beats and sweeps dead hosts (default a third of `hostTtlMs`). */
  readonly heartbeatMs?: number | undefined
}

/**
 * The shared implementations over two Redis connections (commands, and pub/sub), open for the
 * scope's lifetime. Fails with `SharedStateUnavailable` (the one-line start error).
 */
export const makeSharedState = (
  options: SharedStateOptions
): Effect.Effect<SharedStateService, SharedStateUnavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const warn = yield* makeWarn()
    const redis = yield* connectRedis(options.redisUrl, `rfq-${options.hostId}`)
    const subscriber = yield* connectRedis(options.redisUrl, `rfq-${options.hostId}-notices`)
    // From now on a broken connection is logged and retried by ioredis, not fatal.
    redis.on("error", (error: unknown) => warn("connection failed", error))
    subscriber.on("error", (error: unknown) => warn("notice connection failed", error))
    const prefix = keyPrefix(options.namespace)
    const take = defineTakeScript(redis)
    const loginScripts = defineLoginScripts(redis)
    const cancelScripts = defineCancelScripts(redis)
    // Scripts are loaded on first use; a Redis older than 7 is refused here rather than then.
    const version = yield* Effect.tryPromise(() => redis.info("server")).pipe(
      Effect.map((info) => /redis_version:(\d+)/.exec(info)?.[1]),
      Effect.orElseSucceed(() => undefined)
    )
    if (version !== undefined && Number(version) < 7) {
      return yield* new SharedStateUnavailable({
        message: `Redis at ${shownUrl(options.redisUrl)} is version ${version}; version 7 or later is needed`
      })
    }
    const invalidation = yield* makeRedisInvalidation({
      redis,
      subscriber,
      prefix,
      hostId: options.hostId,
      warn
    })
    return {
      rateLimit: (name, limit, windowMs) => makeRedisRateLimit({ take, prefix, name, limit, windowMs, warn }),
      loginThrottle: (limits) =>
        makeRedisLoginThrottle({ redis, scripts: loginScripts, prefix, warn, limits }),
      cancelOnDisconnect: (cancel) =>
        makeRedisCancelOnDisconnect({
          redis,
          scripts: cancelScripts,
          prefix,
          hostId: options.hostId,
          hostTtlMs: options.hostTtlMs,
          heartbeatMs: options.heartbeatMs,
          warn,
          cancel
        }),
      invalidation
    } satisfies SharedStateService
  })

/** `SharedState` in Redis for the layer's lifetime (multi-host mode). */
export const SharedStateRedis = (
  options: SharedStateOptions
): Layer.Layer<SharedState, SharedStateUnavailable> => Layer.scoped(SharedState, makeSharedState(options))

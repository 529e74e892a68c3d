import { Effect, Schema } from "effect"
import type { Redis } from "ioredis"
import { type RateDecision, type RateLimit, RateLimiter } from "../RateLimiter.js"
import { defineScript, type Warn } from "./RedisConnection.js"

/**
 * A fixed-window rate limit counted in Redis, so that it holds exactly across hosts: one user's
 * requests spread over three hosts get exactly `limit` per window, whatever the order and the
 * concurrency. One atomic script per request: it counts the request if the window has room
 * (INCR, and PEXPIRE NX when the key is new, so the window starts with its first request) and
 * answers whether it was counted, the count, and the window's end as Redis keeps it
 * (PEXPIRETIME, Redis 7), so every host sends the same `X-RateLimit-Reset` for one window.
 * Refused requests are not counted, as in the local limiter.
 *
 * The window starts at the key's first request rather than on the minute as the local
 * `RateLimiter`'s does; either is a fixed window of `windowMs`.
 *
 * When Redis cannot answer (down, or slower than the command timeout), the request is judged by
 * this host's own `RateLimiter` instead: the service stays up, and a user gets at most `limit`
 * per host until Redis is back (see `RedisSharedState.ts`).
 */

const TAKE_LUA = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
local counted = 0
if n < tonumber(ARGV[1]) then
  n = redis.call('INCR', KEYS[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[2], 'NX')
  counted = 1
end
return {counted, n, redis.call('PEXPIRETIME', KEYS[1])}
`

/** counted (0/1), the window's count, the window's end in unix ms (negative: no window). */
const TakeReply = Schema.Tuple(Schema.Literal(0, 1), Schema.Number, Schema.Number)
const decodeTakeReply = Schema.decodeUnknown(TakeReply)

/** The script on a connection, shared by every limit made over it. */
export type TakeScript = ReturnType<typeof defineTakeScript>

export const defineTakeScript = (redis: Redis) => defineScript(redis, "rfqRateTake", TAKE_LUA)

export interface RedisRateLimitOptions {
  readonly take: TakeScript
  /** `rfq:<namespace>:`. */
  readonly prefix: string
  /** Names the limit in its keys (`rfq:<namespace>:rate:<name>:<key>`). */
  readonly name: string
  readonly limit: number
  readonly windowMs?: number | undefined
  readonly warn: Warn
}

export const makeRedisRateLimit = (options: RedisRateLimitOptions): RateLimit => {
  const { limit, take, warn } = options
  const windowMs = options.windowMs ?? 60_000
  const keyPrefix = `${options.prefix}rate:${options.name}:`
  const fallback = new RateLimiter(limit, windowMs)
  const decide = (key: string, now: number): Effect.Effect<RateDecision> =>
    Effect.tryPromise(() => take([keyPrefix + key], [limit, windowMs])).pipe(
      Effect.flatMap(decodeTakeReply),
      Effect.map(
        ([counted, count, end]): RateDecision => ({
          allowed: counted === 1,
          limit,
          remaining: Math.max(0, limit - count),
          reset: Math.ceil((end > 0 ? end : now + windowMs) / 1000)
        })
      ),
      Effect.catchAll((error) =>
        Effect.sync(() => {
          warn(`rate limit "${options.name}" counted on this host only`, error)
          return fallback.take(key, now)
        })
      )
    )
  return { limit, windowMs, take: decide }
}

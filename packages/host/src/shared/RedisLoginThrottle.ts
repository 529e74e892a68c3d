import { Effect, Schema } from "effect"
import type { Redis } from "ioredis"
import {
  addressKey,
  DEFAULT_FAILED_LOGINS_PER_ADDRESS,
  DEFAULT_FAILED_LOGINS_PER_CLIENT,
  type LoginAttempt,
  type LoginLimiter,
  LoginThrottle,
  LoginThrottled,
  type LoginThrottleOptions
} from "../auth/LoginThrottle.js"
import { defineScript, type Warn } from "./RedisConnection.js"

/**
 * The failed-secret throttle of `auth/LoginThrottle.ts` with its counts in Redis, so that
 * guesses spread over several hosts meet one limit: the same keys (per address, per client id,
 * per trusted address and client pair), the same reserve-then-refund rule, and the trusted pairs
 * shared too (a client that logged in through one host is trusted from that address on all).
 *
 * An attempt is one script: it picks the keys (the pair's alone when the pair is trusted), checks
 * every one has room, and only then counts on all of them, so a refusal takes nothing and no
 * refund is ever needed for it. Each counted key is a fixed window that starts with its first
 * count (PEXPIRE NX); the attempt remembers each window's end (PEXPIRETIME), and a refund gives
 * back only into that same window, as the local throttle's does.
 *
 * Refunds and the trust mark are sent without being waited for (the grant has its verdict; Redis
 * runs them in order on the connection). When Redis cannot answer an attempt, this host's own
 * `LoginThrottle` decides it (see `RedisSharedState.ts`).
 */

const ATTEMPT_LUA = `
local trusted = ARGV[4] == '1' and redis.call('EXISTS', KEYS[1]) == 1
local counted, limits = {}, {}
if trusted then
  counted[1] = KEYS[2]; limits[1] = tonumber(ARGV[2])
else
  if #KEYS >= 4 then counted[#counted + 1] = KEYS[4]; limits[#limits + 1] = tonumber(ARGV[2]) end
  counted[#counted + 1] = KEYS[3]; limits[#limits + 1] = tonumber(ARGV[3])
end
for i, key in ipairs(counted) do
  if tonumber(redis.call('GET', key) or '0') >= limits[i] then
    return {0, limits[i], redis.call('PEXPIRETIME', key)}
  end
end
local taken = {1, trusted and 1 or 0}
for _, key in ipairs(counted) do
  redis.call('INCR', key)
  redis.call('PEXPIRE', key, ARGV[1], 'NX')
  taken[#taken + 1] = redis.call('PEXPIRETIME', key)
end
return taken
`

const REFUND_LUA = `
for i, key in ipairs(KEYS) do
  if redis.call('PEXPIRETIME', key) == tonumber(ARGV[i]) and tonumber(redis.call('GET', key) or '0') > 0 then
    redis.call('DECR', key)
  end
end
return 0
`

/** Refused: [0, the limit met, its window's end]; reserved: [1, trusted (0/1), ...windows' ends]. */
const AttemptReply = Schema.Union(
  Schema.Tuple(Schema.Literal(0), Schema.Number, Schema.Number),
  Schema.Tuple([Schema.Literal(1), Schema.Literal(0, 1)], Schema.Number)
)
const decodeAttemptReply = Schema.decodeUnknown(AttemptReply)

/** The scripts on a connection, shared by every throttle made over it. */
export const defineLoginScripts = (redis: Redis) => ({
  attempt: defineScript(redis, "rfqLoginAttempt", ATTEMPT_LUA),
  refund: defineScript(redis, "rfqLoginRefund", REFUND_LUA)
})

export interface RedisLoginThrottleOptions {
  readonly redis: Redis
  readonly scripts: ReturnType<typeof defineLoginScripts>
  /** `rfq:<namespace>:`. */
  readonly prefix: string
  readonly warn: Warn
  readonly limits?: LoginThrottleOptions | undefined
}

export const makeRedisLoginThrottle = (options: RedisLoginThrottleOptions): LoginLimiter => {
  const { redis, scripts, warn } = options
  const limits = options.limits ?? {}
  const windowMs = limits.windowMs ?? 60_000
  const perAddress = limits.perAddress ?? DEFAULT_FAILED_LOGINS_PER_ADDRESS
  const perClient = limits.perClient ?? DEFAULT_FAILED_LOGINS_PER_CLIENT
  const trustedMillis = limits.trustedMillis ?? 24 * 3_600_000
  const fallback = new LoginThrottle(limits)
  const key = (kind: string, id: string) => `${options.prefix}login:${kind}:${id}`

  const sent = (what: string, reply: Promise<unknown>) => {
    reply.catch((error: unknown) => warn(what, error))
  }

  const shared = (clientId: string, address: string | undefined, now: number) => {
    const place = address === undefined ? undefined : addressKey(address)
    const pair = place === undefined ? "" : `${place}\u0000${clientId}`
    const keys = [key("trusted", pair), key("pair", pair), key("client", clientId)]
    if (place !== undefined) keys.push(key("ip", place))
    const args = [windowMs, perAddress, perClient, place === undefined ? "0" : "1"]
    return Effect.tryPromise(() => scripts.attempt(keys, args)).pipe(
      Effect.flatMap(decodeAttemptReply),
      Effect.flatMap((reply): Effect.Effect<LoginAttempt, LoginThrottled> => {
        if (reply[0] === 0) {
          const [, limit, end] = reply
          const reset = Math.ceil((end > 0 ? end : now + windowMs) / 1000)
          return Effect.fail(
            new LoginThrottled({ decision: { allowed: false, limit, remaining: 0, reset }, windowMs })
          )
        }
        const [, trusted, ...ends] = reply
        // The keys in the script's order: the pair's alone, or the address's then the client's.
        const counted = trusted === 1 ? [keys[1]!] : place === undefined ? [keys[2]!] : [keys[3]!, keys[2]!]
        const giveBack = () => sent("login refund", scripts.refund(counted, ends))
        return Effect.succeed({
          settle: (matched) => {
            if (!matched) return
            giveBack()
            if (place !== undefined) sent("login trust", redis.set(keys[0]!, "1", "PX", trustedMillis))
          },
          release: giveBack
        })
      })
    )
  }

  return {
    windowMs,
    attempt: (clientId, address, now) =>
      shared(clientId, address, now).pipe(
        Effect.catchIf(
          (error) => !(error instanceof LoginThrottled),
          (error) =>
            Effect.suspend(() => {
              warn("failed-secret throttle counted on this host only", error)
              const local = fallback.attempt(clientId, address, now)
              return local instanceof LoginThrottled ? Effect.fail(local) : Effect.succeed(local)
            })
        )
      )
  }
}

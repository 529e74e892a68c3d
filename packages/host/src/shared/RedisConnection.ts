import { Cause, Data, Effect, Runtime, type Scope } from "effect"
import { Redis } from "ioredis"

/**
 * Connections to Redis for the state several hosts share (`RedisSharedState.ts`), with the
 * pieces every Redis-backed concern uses: the key prefix, Lua scripts, and rate-limited warnings.
 *
 * A connection never queues commands while Redis is away (`enableOfflineQueue: false`) and gives
 * up on a command after `commandTimeout`: a caller learns at once that Redis cannot answer and
 * takes its fallback, instead of holding a request for as long as the outage lasts. ioredis keeps
 * reconnecting in the background, and the shared path is used again as soon as it is back.
 */

/** Redis could not be reached at start: `cannot reach Redis at <url>: <reason>`. */
export class SharedStateUnavailable extends Data.TaggedError("SharedStateUnavailable")<{
  readonly message: string
}> {}

/** How long a command may take before its caller falls back (ms). */
export const REDIS_COMMAND_TIMEOUT_MS = 1_000
const CONNECT_TIMEOUT_MS = 3_000

/** Every key of a service starts with this: `rfq:<namespace>:`. */
export const keyPrefix = (namespace: string): string => `rfq:${namespace}:`

/** The URL as it may be printed: without user name and password. */
export const shownUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    parsed.username = ""
    parsed.password = ""
    return parsed.toString()
  } catch {
    return "(unparsable REDIS_URL)"
  }
}

/** The message of `error`, or of its cause when it only wraps one (Effect's `UnknownException`). */
const describe = (error: unknown): string => {
  const inner = Cause.isUnknownException(error) ? error.error : error
  return inner instanceof Error ? inner.message : String(inner)
}

/**
 * An open connection for the scope's lifetime, or the one-line start error. `name` is the
 * connection's name in Redis's `CLIENT LIST`.
 */
export const connectRedis = (
  url: string,
  name: string
): Effect.Effect<Redis, SharedStateUnavailable, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<Redis, SharedStateUnavailable>((resume) => {
      let redis: Redis
      const failed = (error: unknown) =>
        resume(
          Effect.fail(
            new SharedStateUnavailable({
              message: `cannot reach Redis at ${shownUrl(url)}: ${describe(error)}`
            })
          )
        )
      try {
        redis = new Redis(url, {
          lazyConnect: true,
          enableOfflineQueue: false,
          connectTimeout: CONNECT_TIMEOUT_MS,
          commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
          maxRetriesPerRequest: 1,
          connectionName: name,
          // Commands issued in one turn of the event loop (the rate-limit checks of the requests
          // that arrived together) go out in one write, in order.
          enableAutoPipelining: true
        })
      } catch (error) {
        failed(error)
        return
      }
      // `connect()` rejects with "Connection is closed"; the reason came as an error event.
      let reason: unknown
      const onError = (error: unknown) => {
        reason = error
      }
      redis.on("error", onError)
      redis.connect().then(
        () => {
          redis.off("error", onError)
          resume(Effect.succeed(redis))
        },
        (error: unknown) => {
          redis.disconnect()
          failed(reason ?? error)
        }
      )
      return Effect.sync(() => redis.disconnect())
    }),
    (redis) =>
      Effect.tryPromise(() => redis.quit()).pipe(
        Effect.timeout(REDIS_COMMAND_TIMEOUT_MS),
        Effect.ignore,
        Effect.ensuring(Effect.sync(() => redis.disconnect()))
      )
  )

/** A Lua script run with EVALSHA (EVAL the first time): `keys` are its KEYS, `args` its ARGV. */
export type Script = (keys: ReadonlyArray<string>, args: ReadonlyArray<string | number>) => Promise<unknown>

/** Registers `lua` on the connection under `name` (once per connection and name). */
export const defineScript = (redis: Redis, name: string, lua: string): Script => {
  // Without `numberOfKeys` the command takes the key count first: scripts with optional keys.
  redis.defineCommand(name, { lua })
  const command = (redis as unknown as Record<string, (...args: Array<string | number>) => Promise<unknown>>)[
    name
  ]!
  return (keys, args) => command.call(redis, keys.length, ...keys, ...args)
}

/**
 * Logs a Redis failure as a warning, at most once per `everyMs` per `what`: during an outage every
 * request would otherwise log one.
 */
export type Warn = (what: string, error: unknown) => void

export const makeWarn = (everyMs = 10_000): Effect.Effect<Warn> =>
  Effect.map(Effect.runtime<never>(), (runtime) => {
    const runFork = Runtime.runFork(runtime)
    const last = new Map<string, number>()
    return (what, error) => {
      // The wall clock, only to space the log lines out.
      const now = Date.now()
      const previous = last.get(what)
      if (previous !== undefined && now - previous < everyMs) return
      last.set(what, now)
      runFork(Effect.logWarning(`Redis: ${what}`).pipe(Effect.annotateLogs({ error: describe(error) })))
    }
  })

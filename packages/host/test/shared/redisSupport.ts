import { randomBytes } from "node:crypto"
import { Effect, type Scope } from "effect"
import { Redis } from "ioredis"
import { makeSharedState, type SharedStateOptions } from "../../src/shared/RedisSharedState.js"
import type { SharedStateService } from "../../src/shared/SharedState.js"

/**
 * The real Redis of the machine (`TEST_REDIS_URL`, default 127.0.0.1:6379) for the shared-state
 * tests. Each test file works in a namespace of its own, and deletes its keys when done.
 */

export const testRedisUrl: string = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379"

export const testNamespace = (): string => `test-${randomBytes(6).toString("hex")}`

/** A plain connection for looking at (and cleaning) the keys, closed with the scope. */
export const inspector: Effect.Effect<Redis, never, Scope.Scope> = Effect.acquireRelease(
  Effect.promise(async () => {
    const redis = new Redis(testRedisUrl, { lazyConnect: true })
    await redis.connect()
    return redis
  }),
  (redis) => Effect.promise(() => redis.quit())
)

/** Every key of `namespace`. */
export const keysOf = (redis: Redis, namespace: string): Effect.Effect<ReadonlyArray<string>> =>
  Effect.promise(async () => {
    const keys: Array<string> = []
    let cursor = "0"
    do {
      const [next, batch] = await redis.scan(cursor, "MATCH", `rfq:${namespace}:*`, "COUNT", 1000)
      cursor = next
      keys.push(...batch)
    } while (cursor !== "0")
    return keys
  })

/** Deletes every key of `namespace` when the scope closes. */
export const cleanUpNamespace = (namespace: string): Effect.Effect<void, never, Scope.Scope> =>
  Effect.flatMap(inspector, (redis) =>
    Effect.addFinalizer(() =>
      Effect.flatMap(keysOf(redis, namespace), (keys) =>
        keys.length === 0 ? Effect.void : Effect.asVoid(Effect.promise(() => redis.del(...keys)))
      )
    )
  )

/** One "host": the shared state under `hostId`, in `namespace`. */
export const host = (
  namespace: string,
  hostId: string,
  options: Partial<SharedStateOptions> = {}
): Effect.Effect<SharedStateService, never, Scope.Scope> =>
  Effect.orDie(makeSharedState({ redisUrl: testRedisUrl, namespace, hostId, ...options }))

/** Runs `check` until it holds (the tests wait for deliveries this way, never for a time). */
export const eventually = <E, R>(check: Effect.Effect<boolean, E, R>): Effect.Effect<void, E, R> =>
  Effect.flatMap(check, (ok) => (ok ? Effect.void : Effect.zipRight(Effect.sleep(10), eventually(check))))

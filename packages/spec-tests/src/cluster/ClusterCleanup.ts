import { JetStreamApiCodes, JetStreamApiError, jetstreamManager } from "@nats-io/jetstream"
import { connect } from "@nats-io/transport-node"
import { Redis } from "ioredis"
import { dropSchema } from "../reliability/DatabaseReader.js"

/**
 * Removes what a multi-host test run left behind under its namespace: the PostgreSQL schema (the
 * service's tables and the cluster's), the NATS stream and the Redis keys. It reaches NATS and
 * Redis with their own clients and the naming the service documents (stream
 * `RFQ_EVENTS_<namespace>`, keys `rfq:<namespace>:*`), not through the service's code, so a test
 * cleans up even when that code is what failed. Best effort: leftovers only cost space, and an
 * unreachable NATS or Redis must not fail a test that did not use them.
 */

/** Where NATS and Redis are for the tests: `NATS_URL` / `REDIS_URL`, else the local defaults. */
export const testNatsUrl = (): string => process.env.NATS_URL || "nats://127.0.0.1:4222"
export const testRedisUrl = (): string => process.env.REDIS_URL || "redis://127.0.0.1:6379"

/** The JetStream stream of a namespace's events. */
export const eventStreamName = (namespace: string): string => `RFQ_EVENTS_${namespace}`

/** The prefix of every Redis key of a namespace. */
export const redisKeyPrefix = (namespace: string): string => `rfq:${namespace}:`

/** Deletes the namespace's event stream; true if there was one. */
export const deleteEventStream = async (namespace: string, natsUrl = testNatsUrl()): Promise<boolean> => {
  const nc = await connect({ servers: natsUrl, timeout: 2_000, reconnect: false })
  try {
    const jsm = await jetstreamManager(nc, { timeout: 2_000 })
    return await jsm.streams.delete(eventStreamName(namespace)).catch((error: unknown) => {
      if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound) return false
      throw error
    })
  } finally {
    await nc.close()
  }
}

/** Deletes every Redis key of the namespace; answers how many. */
export const deleteRedisKeys = async (namespace: string, redisUrl = testRedisUrl()): Promise<number> => {
  const redis = new Redis(redisUrl, {
    lazyConnect: true,
    connectTimeout: 2_000,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null
  })
  try {
    await redis.connect()
    let deleted = 0
    // `*` and `?` cannot occur in a namespace (a lower-case SQL identifier), so the prefix is literal.
    for await (const keys of redis.scanStream({ match: `${redisKeyPrefix(namespace)}*`, count: 500 })) {
      const batch = keys as Array<string>
      if (batch.length > 0) deleted += await redis.unlink(...batch)
    }
    return deleted
  } finally {
    redis.disconnect()
  }
}

/** Drops the schema, the stream and the keys of `namespace`; never fails. */
export const dropNamespace = async (
  namespace: string,
  options: { readonly nats: boolean; readonly redis: boolean } = { nats: true, redis: true }
): Promise<void> => {
  await Promise.allSettled([
    dropSchema(namespace),
    options.nats ? deleteEventStream(namespace) : Promise.resolve(false),
    options.redis ? deleteRedisKeys(namespace) : Promise.resolve(0)
  ])
}

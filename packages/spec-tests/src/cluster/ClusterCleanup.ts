import { natsNames } from "@rfq/engine"
import { deleteEventStream, deleteRedisKeys, keyPrefix } from "@rfq/host"
import { dropSchema } from "../reliability/DatabaseReader.js"

/**
 * Removes what a multi-host test run left behind under its namespace: the PostgreSQL schema (the
 * service's tables and the cluster's), the NATS stream and the Redis keys. It reaches NATS and
 * Redis with their own clients (`@rfq/host`'s `NamespaceTools.ts`), by the names the service
 * uses, so a test cleans up even when the service's code is what failed. Best effort: leftovers only cost space, and an
 * unreachable NATS or Redis must not fail a test that did not use them.
 */

/** Where NATS and Redis are for the tests: `NATS_URL` / `REDIS_URL`, else the local defaults. */
export const testNatsUrl = (): string => process.env.NATS_URL || "nats://127.0.0.1:4222"
export const testRedisUrl = (): string => process.env.REDIS_URL || "redis://127.0.0.1:6379"

/** The JetStream stream of a namespace's events (the engine's name for it). */
export const eventStreamName = (namespace: string): string => natsNames(namespace).stream

/** The prefix of every Redis key of a namespace (the host's). */
export const redisKeyPrefix = keyPrefix

/** Drops the schema, the stream and the keys of `namespace`; never fails. */
export const dropNamespace = async (
  namespace: string,
  options: { readonly nats: boolean; readonly redis: boolean } = { nats: true, redis: true }
): Promise<void> => {
  await Promise.allSettled([
    dropSchema(namespace),
    options.nats ? deleteEventStream(namespace, testNatsUrl()) : Promise.resolve(false),
    options.redis ? deleteRedisKeys(namespace, testRedisUrl()) : Promise.resolve(0)
  ])
}

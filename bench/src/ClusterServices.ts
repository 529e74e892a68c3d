import { jetstreamManager } from "@nats-io/jetstream"
import { connect } from "@nats-io/transport-node"
import { deleteEventStream, deleteRedisKeys, HAPROXY_BIN, haproxyInstalled } from "@rfq/host"
import { Redis } from "ioredis"

/**
 * What multi-host mode needs besides PostgreSQL (NATS JetStream, Redis, and HAProxy in front),
 * checked before the multi-host scenario starts anything, and removed again after it: the
 * namespace's NATS stream and Redis keys, under the names the service documents (stream
 * `RFQ_EVENTS_<namespace>`, keys `rfq:<namespace>:*`).
 */

/** `NATS_URL`, else the host's default. */
export const benchNatsUrl = (): string => process.env.NATS_URL || "nats://127.0.0.1:4222"
/** `REDIS_URL`, else the host's default. */
export const benchRedisUrl = (): string => process.env.REDIS_URL || "redis://127.0.0.1:6379"

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

const redisClient = (url: string) =>
  new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2_000,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null
  })

/** Whether NATS with JetStream answers; the reason when it does not. */
const natsProblem = async (url: string): Promise<string | undefined> => {
  try {
    const nc = await connect({ servers: url, timeout: 2_000, reconnect: false })
    try {
      await (await jetstreamManager(nc, { timeout: 2_000 })).getAccountInfo()
      return undefined
    } finally {
      await nc.close()
    }
  } catch (error) {
    return `NATS JetStream at ${url} does not answer (${messageOf(error)})`
  }
}

/** Whether Redis answers a PING; the reason when it does not. */
const redisProblem = async (url: string): Promise<string | undefined> => {
  const redis = redisClient(url)
  try {
    await redis.connect()
    await redis.ping()
    return undefined
  } catch (error) {
    return `Redis at ${url} does not answer (${messageOf(error)})`
  } finally {
    redis.disconnect()
  }
}

/** Why multi-host mode cannot run here (HAProxy, NATS or Redis missing), or undefined when it can. */
export const clusterServicesMissing = async (): Promise<string | undefined> => {
  const problems = [
    haproxyInstalled() ? undefined : `HAProxy is not installed (${HAPROXY_BIN}; apt-get install haproxy)`,
    ...(await Promise.all([natsProblem(benchNatsUrl()), redisProblem(benchRedisUrl())]))
  ].filter((problem) => problem !== undefined)
  return problems.length === 0 ? undefined : problems.join("; ")
}

/** Deletes the namespace's event stream and Redis keys; best effort, never fails. */
export const dropClusterNamespace = async (namespace: string): Promise<void> => {
  await Promise.allSettled([
    deleteEventStream(namespace, benchNatsUrl()),
    deleteRedisKeys(namespace, benchRedisUrl())
  ])
}

import * as net from "node:net"
import { JetStreamApiCodes, JetStreamApiError, jetstreamManager } from "@nats-io/jetstream"
import { connect } from "@nats-io/transport-node"
import { natsNames } from "@rfq/engine"
import { Redis } from "ioredis"
import { keyPrefix } from "../shared/RedisConnection.js"

/**
 * Tools for whatever starts several hosts on a throwaway namespace (the multi-host tests, the
 * bench): free ports for them, and removing the namespace's NATS stream and Redis keys afterwards.
 * The names come from their one home (`natsNames`, `keyPrefix`), so a cleanup cannot miss what the
 * hosts created. Plain promises with their own short-lived clients: a cleanup must work even when
 * the service's code is what failed.
 */

/** `count` distinct free TCP ports on 127.0.0.1 (held together while chosen, so none repeats). */
export const freePorts = async (count: number): Promise<Array<number>> => {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const server = net.createServer()
          server.once("error", reject)
          server.listen(0, "127.0.0.1", () => resolve(server))
        })
    )
  )
  const ports = servers.map((server) => (server.address() as net.AddressInfo).port)
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))))
  return ports
}

/** Deletes the namespace's event stream; true if there was one. */
export const deleteEventStream = async (namespace: string, natsUrl: string): Promise<boolean> => {
  const nc = await connect({ servers: natsUrl, timeout: 2_000, reconnect: false })
  try {
    const jsm = await jetstreamManager(nc, { timeout: 2_000 })
    return await jsm.streams.delete(natsNames(namespace).stream).catch((error: unknown) => {
      if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound) return false
      throw error
    })
  } finally {
    await nc.close()
  }
}

/** Deletes every Redis key of the namespace; answers how many. */
export const deleteRedisKeys = async (namespace: string, redisUrl: string): Promise<number> => {
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
    for await (const keys of redis.scanStream({ match: `${keyPrefix(namespace)}*`, count: 500 })) {
      const batch = keys as Array<string>
      if (batch.length > 0) deleted += await redis.unlink(...batch)
    }
    return deleted
  } finally {
    redis.disconnect()
  }
}

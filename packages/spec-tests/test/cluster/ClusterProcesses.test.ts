import { jetstreamManager } from "@nats-io/jetstream"
import { connect } from "@nats-io/transport-node"
import { haproxyInstalled } from "@rfq/host"
import { Redis } from "ioredis"
import { describe, expect, it } from "vitest"
import {
  dropNamespace,
  eventStreamName,
  redisKeyPrefix,
  testNatsUrl,
  testRedisUrl
} from "../../src/cluster/ClusterCleanup.js"
import { withCluster } from "../../src/cluster/ClusterProcesses.js"
import { openDatabase } from "../../src/reliability/DatabaseReader.js"
import { randomSchema } from "../../src/reliability/HostProcess.js"

/** The multi-host harness itself: its start, kill, restart and clean-up, on one plain host. */

const status = async (url: string): Promise<number> => (await fetch(url)).status

const schemaExists = async (schema: string): Promise<boolean> => {
  const db = await openDatabase("postgres", { dataDir: "", schema: "public" })
  try {
    const rows = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = $1",
      [schema]
    )
    return rows[0]?.n === 1
  } finally {
    await db.close()
  }
}

describe("cluster harness", () => {
  it("starts a host on a fresh schema, survives SIGKILL and restart, drops the schema at the end", async () => {
    const withHaproxy = haproxyInstalled()
    let namespace = ""
    await withCluster({ hosts: 1, multiHost: false, withHaproxy }, async (cluster) => {
      namespace = cluster.namespace
      expect(await schemaExists(namespace)).toBe(true)
      expect(await status(`${cluster.baseUrl(0)}/readyz`)).toBe(200)
      if (withHaproxy) expect(await status(`${cluster.proxy!.url}/readyz`)).toBe(200)

      const exit = await cluster.kill(0, "SIGKILL")
      expect(exit.signal).toBe("SIGKILL")
      expect(cluster.process(0)).toBeUndefined()
      await expect(status(`${cluster.baseUrl(0)}/readyz`)).rejects.toThrow()

      await cluster.restart(0)
      expect(await status(`${cluster.baseUrl(0)}/readyz`)).toBe(200)
      // The demo data is there and the secrets are the same: a demo login works after the restart.
      const token = await fetch(`${cluster.baseUrl(0)}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=client_credentials&client_id=demo-taker&client_secret=demo-taker-secret"
      })
      expect(token.status).toBe(200)
    })
    expect(await schemaExists(namespace)).toBe(false)
  })

  it("drops a namespace's NATS stream and Redis keys, and only that namespace's", async () => {
    const [mine, other] = [randomSchema("cl"), randomSchema("cl")]
    const nc = await connect({ servers: testNatsUrl() })
    const redis = new Redis(testRedisUrl())
    try {
      const jsm = await jetstreamManager(nc)
      for (const ns of [mine, other]) {
        await jsm.streams.add({ name: eventStreamName(ns), subjects: [`harness-test.${ns}.>`] })
        await redis.set(`${redisKeyPrefix(ns)}a`, "1")
        await redis.set(`${redisKeyPrefix(ns)}b:c`, "2")
      }
      await dropNamespace(mine)
      const streams = async (ns: string) =>
        jsm.streams.info(eventStreamName(ns)).then(
          () => 1,
          () => 0
        )
      expect([await streams(mine), await streams(other)]).toEqual([0, 1])
      expect((await redis.keys(`${redisKeyPrefix(mine)}*`)).length).toBe(0)
      expect((await redis.keys(`${redisKeyPrefix(other)}*`)).sort()).toEqual([
        `${redisKeyPrefix(other)}a`,
        `${redisKeyPrefix(other)}b:c`
      ])
      // Dropping again (nothing left) is fine.
      await dropNamespace(mine)
    } finally {
      await dropNamespace(other)
      redis.disconnect()
      await nc.close()
    }
  })
})

import type { ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { freePorts, spawnHaproxy, waitUntilReady, writeHaproxyConfig } from "@rfq/host"
import type { BenchContext } from "./BenchContext.js"
import type { BenchHost } from "./BenchHost.js"
import { benchNatsUrl, benchRedisUrl, dropClusterNamespace } from "./ClusterServices.js"
import { dropSchema, freshSchemaName, withPgClient } from "./Postgres.js"

/**
 * Several bench hosts as one service in multi-host mode (`RUNNER_ADDRESS` each, one PostgreSQL
 * schema, NATS, Redis, the same secrets), behind HAProxy configured from the repository's
 * `deploy/haproxy.cfg` (through `@rfq/host`'s helpers, as `npm run cluster` does). The hosts are
 * started by the bench context exactly like its other hosts (same variables, `--profile` and
 * `BENCH_COMPILED` apply), so a one-host figure and a cluster figure differ only by the cluster.
 */
export interface BenchCluster {
  /** The hosts, each reachable directly. */
  readonly hosts: ReadonlyArray<BenchHost>
  /** HAProxy in front: `http://127.0.0.1:<port>`, its WebSocket endpoint, its process id. */
  readonly proxy: { readonly url: string; readonly wsUrl: string; readonly pid: number | undefined }
  /** The PostgreSQL schema, also the namespace of the NATS stream and the Redis keys. */
  readonly namespace: string
  /** Stops HAProxy and the hosts, then drops the schema, the stream and the keys. */
  readonly stop: () => Promise<void>
}

/** How many shards each runner holds (`cluster_locks`, written by `@effect/cluster`). */
const shardHolders = (url: string, schema: string): Promise<Map<string, number>> =>
  withPgClient(url, async (client) => {
    const { rows } = await client.query<{ address: string; shards: string }>(
      `SELECT address, count(*)::text AS shards FROM ${schema}.cluster_locks GROUP BY address`
    )
    return new Map(rows.map((row) => [row.address, Number(row.shards)]))
  }).catch(() => new Map<string, number>())

/**
 * Waits until every runner holds shards and the holdings stayed the same for `stableMs`, so that
 * a create lands on a host that keeps the new RFQ (no shard moves during a measurement).
 */
const awaitSettledShards = async (
  url: string,
  schema: string,
  runners: ReadonlyArray<string>,
  timeoutMs = 120_000,
  stableMs = 3_000
): Promise<Map<string, number>> => {
  const deadline = Date.now() + timeoutMs
  let last = ""
  let since = Date.now()
  for (;;) {
    const holders = await shardHolders(url, schema)
    const key = runners.map((runner) => holders.get(runner) ?? 0).join(",")
    if (key !== last) {
      last = key
      since = Date.now()
    }
    const everyone = runners.every((runner) => (holders.get(runner) ?? 0) > 0)
    if (everyone && Date.now() - since >= stableMs) return holders
    if (Date.now() > deadline)
      throw new Error(`the cluster's shards did not settle within ${timeoutMs} ms (held: ${key})`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

/**
 * Which process answered: the host tags its own request ids `<process tag>-<counter>`. Undefined
 * when the answer carries no such id.
 */
const answeredBy = async (url: string): Promise<string | undefined> => {
  const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) })
  await response.arrayBuffer()
  return /^([a-z0-9]+)-[a-z0-9]+$/.exec(response.headers.get("x-request-id") ?? "")?.[1]
}

/**
 * Which of the hosts requests through HAProxy reached, by their 1-based numbers, asking until all
 * were seen or `attempts` requests went out (HAProxy takes a host in once its health check passed).
 */
const reachedThroughProxy = async (
  proxyUrl: string,
  hostUrls: ReadonlyArray<string>,
  attempts = 50
): Promise<Array<number>> => {
  const tags = await Promise.all(hostUrls.map(answeredBy))
  const seen = new Set<number>()
  for (let i = 0; i < attempts && seen.size < hostUrls.length; i++) {
    const tag = await answeredBy(proxyUrl)
    const index = tag === undefined ? -1 : tags.indexOf(tag)
    if (index >= 0 && !seen.has(index + 1)) seen.add(index + 1)
    else await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return [...seen].sort()
}

/** Starts `size` hosts on PostgreSQL at `postgresUrl` and HAProxy in front; resolves once the shards have settled. */
export const startBenchCluster = async (
  ctx: BenchContext,
  postgresUrl: string,
  size: number,
  label: string
): Promise<BenchCluster> => {
  const namespace = freshSchemaName("bench_cluster")
  const [proxyPort, ...runnerPorts] = await freePorts(size + 1)
  const runners = runnerPorts.map((port) => `127.0.0.1:${port}`)
  const shared = {
    JWT_SECRET: randomBytes(32).toString("base64url"),
    ENCRYPTION_KEY: randomBytes(32).toString("hex"),
    NATS_URL: benchNatsUrl(),
    REDIS_URL: benchRedisUrl()
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rfq-bench-cluster-"))
  const hosts: Array<BenchHost> = []
  let haproxy: ChildProcess | undefined
  let haproxyOutput = ""
  const stop = async () => {
    if (haproxy !== undefined && haproxy.exitCode === null && haproxy.signalCode === null) {
      const closed = new Promise((resolve) => haproxy!.once("close", resolve))
      haproxy.kill("SIGTERM")
      await closed
    }
    await Promise.allSettled(hosts.splice(0).map((host) => ctx.stopHost(host)))
    await Promise.allSettled([dropSchema(postgresUrl, namespace), dropClusterNamespace(namespace)])
    fs.rmSync(dir, { recursive: true, force: true })
  }
  try {
    const started = await Promise.allSettled(
      runners.map((runner, index) =>
        ctx.startHost({ kind: "postgres", url: postgresUrl }, `${label}-${index + 1}`, {
          schema: namespace,
          env: { ...shared, RUNNER_ADDRESS: runner }
        })
      )
    )
    for (const result of started) if (result.status === "fulfilled") hosts.push(result.value)
    const failed = started.find((result) => result.status === "rejected")
    if (failed !== undefined) throw failed.reason
    await Promise.all(hosts.map((host) => waitUntilReady(host.url, 120_000)))
    const held = await awaitSettledShards(postgresUrl, namespace, runners)
    ctx.log(
      `  shards held: ${runners.map((runner, i) => `host ${i + 1} ${held.get(runner) ?? 0}`).join(", ")}`
    )

    const bind = `127.0.0.1:${proxyPort}`
    const servers = hosts.map((host, index) => ({
      name: `host${index + 1}`,
      address: new URL(host.url).host
    }))
    haproxy = spawnHaproxy(writeHaproxyConfig(path.join(dir, "haproxy.cfg"), { bind, servers }))
    for (const stream of [haproxy.stdout, haproxy.stderr])
      stream?.setEncoding("utf8").on("data", (chunk: string) => {
        haproxyOutput = (haproxyOutput + chunk).slice(-20_000)
      })
    const proxy = haproxy
    await waitUntilReady(`http://${bind}`, 30_000, () => proxy.exitCode !== null).catch((error: Error) => {
      throw new Error(`HAProxy did not come up: ${error.message}\n${haproxyOutput}`)
    })
    const reached = await reachedThroughProxy(
      `http://${bind}`,
      hosts.map((host) => host.url)
    )
    ctx.log(
      `  HAProxy on http://${bind} in front of ${hosts.map((h) => h.url).join(", ")}; ` +
        (reached.length === hosts.length
          ? "requests through it reach every host"
          : `requests through it reached host(s) ${reached.join(", ") || "none that could be told apart"} only`)
    )
    return {
      hosts,
      proxy: { url: `http://${bind}`, wsUrl: `ws://${bind}/ws/v1`, pid: proxy.pid },
      namespace,
      stop
    }
  } catch (error) {
    await stop()
    throw error
  }
}

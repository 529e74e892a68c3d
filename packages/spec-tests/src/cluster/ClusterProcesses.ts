import * as fs from "node:fs"
import { freePorts, waitUntilReady } from "@rfq/host"
import {
  type HostExit,
  hostEnv,
  makeTempDir,
  randomSchema,
  type RunningHost,
  startHost
} from "../reliability/HostProcess.js"
import { dropNamespace, testNatsUrl, testRedisUrl } from "./ClusterCleanup.js"
import { type FrontProxy, startFrontProxy } from "./FrontProxy.js"

/**
 * Several real host processes on one fresh namespace, for black-box tests of multi-host mode: one
 * random PostgreSQL schema (also the namespace of the NATS stream and the Redis keys), fixed free
 * ports per host (so a restarted host comes back where HAProxy and the others expect it), the same
 * secrets everywhere, the demo data. Hosts are started the way `npm start` starts them
 * (`HostProcess.ts`) and may be killed (SIGKILL too) and restarted one by one.
 */

export interface ClusterOptions {
  /** How many hosts; default 3. */
  readonly hosts?: number
  /**
   * Multi-host mode (`RUNNER_ADDRESS` per host, `NATS_URL`, `REDIS_URL`); default true. False
   * starts each as a plain single host on the shared PostgreSQL schema (N=1: today's host).
   */
  readonly multiHost?: boolean
  /** HAProxy in front (`deploy/haproxy.cfg`, as `npm run cluster` runs it); default false. */
  readonly withHaproxy?: boolean
  /** More variables for every host, or per host (index from 0); they win over the harness's. */
  readonly env?: Readonly<Record<string, string>> | ((index: number) => Readonly<Record<string, string>>)
  /** How long a host may take to become ready; default 180 s. */
  readonly startTimeoutMs?: number
}

export interface ClusterProcesses {
  /** The PostgreSQL schema, and the namespace of the NATS stream and Redis keys. */
  readonly namespace: string
  readonly size: number
  /** `http://127.0.0.1:<port>` of host `index`, the same across restarts. */
  readonly baseUrl: (index: number) => string
  /** The JSON-RPC WebSocket of host `index`. */
  readonly wsUrl: (index: number) => string
  /** `host:port` at which the other hosts reach host `index` (its `RUNNER_ADDRESS`). */
  readonly runnerAddress: (index: number) => string
  /** HAProxy in front, when asked for: its `url` and `wsUrl` reach any host. */
  readonly proxy: FrontProxy | undefined
  /** The environment host `index` runs with (for a tool run beside it: the admin command). */
  readonly environment: (index: number) => Record<string, string>
  /** Host `index`'s process while it runs (pid, output), undefined once killed. */
  readonly process: (index: number) => RunningHost | undefined
  /** Sends `signal` (default SIGTERM: drain and leave) to host `index` and waits for its exit. */
  readonly kill: (index: number, signal?: NodeJS.Signals) => Promise<HostExit>
  /** Starts host `index` again with the same variables (stopping it first if it runs); waits until ready. */
  readonly restart: (index: number) => Promise<void>
  /** Stops every host and HAProxy, then drops the namespace (schema, stream, keys). Idempotent. */
  readonly stop: () => Promise<void>
}

/** Starts the hosts (and HAProxy) and resolves once every one is ready. */
export const startCluster = async (options: ClusterOptions = {}): Promise<ClusterProcesses> => {
  const size = options.hosts ?? 3
  const multiHost = options.multiHost ?? true
  const namespace = randomSchema("cl")
  const dataDir = makeTempDir("rfq-cluster-")
  const ports = await freePorts(2 * size + 1)
  const httpPort = (index: number) => ports[index]!
  const runnerAddress = (index: number) => `127.0.0.1:${ports[size + index]!}`
  const baseUrl = (index: number) => `http://127.0.0.1:${httpPort(index)}`
  const extra = (index: number) =>
    typeof options.env === "function" ? options.env(index) : (options.env ?? {})
  const envOf = (index: number): Record<string, string> =>
    hostEnv(
      "postgres",
      { dataDir: `${dataDir}/host${index}`, schema: namespace },
      {
        PORT: `${httpPort(index)}`,
        ...(multiHost
          ? { RUNNER_ADDRESS: runnerAddress(index), NATS_URL: testNatsUrl(), REDIS_URL: testRedisUrl() }
          : {}),
        ...extra(index)
      }
    )

  const hosts: Array<RunningHost | undefined> = Array.from({ length: size }, () => undefined)
  const timeoutMs = options.startTimeoutMs ?? 180_000
  const launch = async (index: number): Promise<void> => {
    const host = await startHost(envOf(index), timeoutMs)
    hosts[index] = host
    await waitUntilReady(
      baseUrl(index),
      timeoutMs,
      () => host.child.exitCode !== null || host.child.signalCode !== null
    )
  }
  const kill = async (index: number, signal: NodeJS.Signals = "SIGTERM"): Promise<HostExit> => {
    const host = hosts[index]
    if (host === undefined) throw new Error(`host ${index} is not running`)
    const exit = await host.stop(signal)
    hosts[index] = undefined
    return exit
  }

  let proxy: FrontProxy | undefined
  let stopped: Promise<void> | undefined
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      await Promise.allSettled([
        ...hosts.flatMap((host, index) => (host === undefined ? [] : [kill(index)])),
        ...(proxy === undefined ? [] : [proxy.stop()])
      ])
      await dropNamespace(namespace, { nats: multiHost, redis: multiHost })
      fs.rmSync(dataDir, { recursive: true, force: true })
    })())

  try {
    // Every start is awaited, failed or not, so that `stop` sees every process that came up.
    const started = await Promise.allSettled(hosts.map((_, index) => launch(index)))
    const failure = started.find((result) => result.status === "rejected")
    if (failure !== undefined) throw failure.reason
    if (options.withHaproxy === true) {
      const servers = hosts.map((_, index) => ({
        name: `host${index}`,
        address: `127.0.0.1:${httpPort(index)}`
      }))
      proxy = await startFrontProxy(dataDir, ports[2 * size]!, servers)
    }
  } catch (error) {
    await stop()
    throw error
  }

  return {
    namespace,
    size,
    baseUrl,
    wsUrl: (index) => `ws://127.0.0.1:${httpPort(index)}/ws/v1`,
    runnerAddress,
    environment: envOf,
    proxy,
    process: (index) => hosts[index],
    kill,
    restart: async (index) => {
      if (hosts[index] !== undefined) await kill(index)
      await launch(index)
    },
    stop
  }
}

/** Runs `use` against a fresh cluster and always stops it and drops its namespace afterwards. */
export const withCluster = async <A>(
  options: ClusterOptions,
  use: (cluster: ClusterProcesses) => Promise<A>
): Promise<A> => {
  const cluster = await startCluster(options)
  try {
    return await use(cluster)
  } finally {
    await cluster.stop()
  }
}

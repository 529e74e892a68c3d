import type { ChildProcess } from "node:child_process"
import * as path from "node:path"
import {
  HAPROXY_BIN,
  type HaproxyServer,
  haproxyInstalled,
  spawnHaproxy,
  waitUntilReady,
  writeHaproxyConfig
} from "@rfq/host"

/**
 * HAProxy in front of a test's hosts, from the same template as `npm run cluster`
 * (`deploy/haproxy.cfg`, filled by the host package's `writeHaproxyConfig`).
 */
export interface FrontProxy {
  /** `http://127.0.0.1:<port>`, the one address of the service. */
  readonly url: string
  /** The JSON-RPC WebSocket through the proxy. */
  readonly wsUrl: string
  /** HAProxy's own output so far (its log lines), for a failing test's message. */
  readonly output: () => string
  /** Stops HAProxy (SIGTERM) and waits for it. */
  readonly stop: () => Promise<void>
}

// A proxy still running when the test process exits (an interrupted run) goes with it.
const running = new Set<ChildProcess>()
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL")
})

/**
 * Writes the filled configuration into `dir` and starts HAProxy on `127.0.0.1:<port>`; resolves
 * once a request through it reaches a ready host (`/readyz` answers 200).
 */
export const startFrontProxy = async (
  dir: string,
  port: number,
  servers: ReadonlyArray<HaproxyServer>
): Promise<FrontProxy> => {
  if (!haproxyInstalled()) throw new Error(`${HAPROXY_BIN} not found: apt-get install haproxy`)
  const bind = `127.0.0.1:${port}`
  const child = spawnHaproxy(writeHaproxyConfig(path.join(dir, "haproxy.cfg"), { bind, servers }))
  running.add(child)
  let output = ""
  for (const stream of [child.stdout, child.stderr]) {
    stream?.setEncoding("utf8").on("data", (chunk: string) => {
      output = (output + chunk).slice(-50_000)
    })
  }
  const exited = new Promise<void>((resolve) =>
    child.once("close", () => {
      running.delete(child)
      resolve()
    })
  )
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
    return exited
  }
  const url = `http://${bind}`
  try {
    await waitUntilReady(url, 30_000, () => child.exitCode !== null || child.signalCode !== null)
  } catch (error) {
    await stop()
    throw new Error(`HAProxy did not come up: ${error instanceof Error ? error.message : error}\n${output}`)
  }
  return { url, wsUrl: `ws://${bind}/ws/v1`, output: () => output, stop }
}

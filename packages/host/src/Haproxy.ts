import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/**
 * HAProxy in front of several hosts, for `npm run cluster` and the multi-host tests: both fill in
 * the one template, `deploy/haproxy.cfg` (its `bind` line and its server list), so what is tried
 * and tested locally is the configuration shipped for production.
 */

/** Debian's HAProxy (`apt-get install haproxy`). */
export const HAPROXY_BIN = "/usr/sbin/haproxy"

/** The production-shaped configuration in the repository, used as the template. */
export const HAPROXY_TEMPLATE = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../../deploy/haproxy.cfg"
)

/** One host behind HAProxy: its name in HAProxy's logs and the `host:port` of its HTTP server. */
export interface HaproxyServer {
  readonly name: string
  readonly address: string
}

/** What the template is filled with: the address clients use, and the hosts. */
export interface HaproxyLayout {
  readonly bind: string
  readonly servers: ReadonlyArray<HaproxyServer>
}

const SERVERS_BEGIN = "# servers: begin"
const SERVERS_END = "# servers: end"

/**
 * The template with its one `bind` line set to `layout.bind` and the lines between
 * `# servers: begin` and `# servers: end` replaced by one checked `server` line per host. Throws
 * if the template lost those landmarks (a broken template is a bug, not a runtime condition).
 */
export const fillHaproxyConfig = (template: string, layout: HaproxyLayout): string => {
  const lines = template.split("\n")
  const binds = lines.flatMap((line, index) => (/^\s*bind\s/.test(line) ? [index] : []))
  const begin = lines.findIndex((line) => line.trim() === SERVERS_BEGIN)
  const end = lines.findIndex((line) => line.trim() === SERVERS_END)
  if (binds.length !== 1 || begin === -1 || end < begin) {
    throw new Error(`HAProxy template needs one bind line and a "${SERVERS_BEGIN}" … "${SERVERS_END}" block`)
  }
  if (layout.servers.length === 0) throw new Error("HAProxy needs at least one server")
  const [bindAt] = binds as [number]
  const indent = (at: number) => /^\s*/.exec(lines[at]!)![0]
  const servers = layout.servers.map(
    (server) => `${indent(begin)}server ${server.name} ${server.address} check`
  )
  const filled = [...lines]
  filled.splice(begin + 1, end - begin - 1, ...servers)
  filled[bindAt] = `${indent(bindAt)}bind ${layout.bind}`
  return filled.join("\n")
}

/** Fills the repository's template for `layout` and writes it to `file`; returns `file`. */
export const writeHaproxyConfig = (file: string, layout: HaproxyLayout): string => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, fillHaproxyConfig(fs.readFileSync(HAPROXY_TEMPLATE, "utf8"), layout))
  return file
}

/** True when Debian's HAProxy is installed. */
export const haproxyInstalled = (): boolean => fs.existsSync(HAPROXY_BIN)

/**
 * Starts HAProxy in the foreground (`-db`) on `configFile`; its log lines come on the child's
 * stdout and stderr. SIGTERM stops it at once; it does not wait for open connections.
 */
export const spawnHaproxy = (configFile: string): ChildProcess =>
  spawn(HAPROXY_BIN, ["-db", "-f", configFile], { stdio: ["ignore", "pipe", "pipe"] })

/**
 * Resolves once `GET <baseUrl>/readyz` answers 200 (through HAProxy: once a host behind it is up),
 * polling every 200 ms; rejects after `timeoutMs` or as soon as `gaveUp()` says to stop waiting
 * (the process being waited for has exited).
 */
export const waitUntilReady = async (
  baseUrl: string,
  timeoutMs: number,
  gaveUp: () => boolean = () => false
): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const status = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
      async (response) => {
        await response.arrayBuffer()
        return response.status
      },
      () => 0
    )
    if (status === 200) return
    if (gaveUp()) throw new Error(`${baseUrl} stopped before it was ready`)
    if (Date.now() > deadline) throw new Error(`${baseUrl}/readyz did not answer 200 within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

import { Buffer } from "node:buffer"
import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { demoClientLogins } from "@rfq/engine"
import { ConfigProvider, Effect, Redacted } from "effect"
import { loadHostConfig } from "./Config.js"
import { HAPROXY_BIN, haproxyInstalled, spawnHaproxy, waitUntilReady, writeHaproxyConfig } from "./Haproxy.js"
import { resolveSecrets } from "./Secrets.js"

/**
 * `npm run cluster -- --hosts 3 [--port 8080] [--base-port 9101]`: a local try of multi-host mode.
 * Starts N hosts on one PostgreSQL (`DATABASE_URL`, default the local `test` database), NATS and
 * Redis (`NATS_URL`, `REDIS_URL`, default local), host i (from 0) on HTTP port base-port + i with
 * its runner on base-port + 100 + i, all with the secrets kept in `./data/cluster/` and the demo
 * data; then HAProxy on 127.0.0.1:<port> with `deploy/haproxy.cfg`. Ctrl-C stops everything.
 */

const DIR = path.resolve("data/cluster")
const DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/test"
// The host's entry beside this file, run with this process's own node flags (`--import tsx` etc.).
const here = fileURLToPath(import.meta.url)
const HOST_MAIN = path.join(path.dirname(here), `main${path.extname(here)}`)

const fail = (line: string): never => {
  process.stderr.write(`${line}\n`)
  process.exit(1)
}

const integer = (name: string, value: string, min: number, max: number): number => {
  const n = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN
  return n >= min && n <= max
    ? n
    : fail(`--${name} must be an integer between ${min} and ${max}, got "${value}"`)
}

/** JWT_SECRET and ENCRYPTION_KEYS for every host: from the environment, or the files in DIR. */
const sharedSecrets = (): Promise<Record<string, string>> => {
  const given = ["JWT_SECRET", "ENCRYPTION_KEY", "ENCRYPTION_KEYS"].flatMap((name) =>
    process.env[name] ? [[name, process.env[name]] as const] : []
  )
  return loadHostConfig.pipe(
    Effect.flatMap(resolveSecrets),
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["DATA_DIR", DIR], ...given]))),
    Effect.map((secrets) => ({
      JWT_SECRET: Buffer.from(Redacted.value(secrets.jwtSecret)).toString("utf8"),
      ENCRYPTION_KEYS: [...Redacted.value(secrets.encryptionKeys)]
        .map(([version, key]) => `${version}:${Buffer.from(key).toString("hex")}`)
        .join(",")
    })),
    Effect.catchAll((error) => Effect.sync(() => fail(error.message))),
    Effect.runPromise
  )
}

/** Every line a child writes, on ours, after its name. */
const relay = (name: string, child: ChildProcess): void => {
  const prefix = `${name.padEnd(7)} | `
  for (const [input, output] of [
    [child.stdout, process.stdout],
    [child.stderr, process.stderr]
  ] as const) {
    if (input !== null)
      readline.createInterface({ input }).on("line", (line) => output.write(prefix + line + "\n"))
  }
}

const main = async (): Promise<void> => {
  const { values } = parseArgs({
    options: {
      hosts: { type: "string", default: "3" },
      port: { type: "string", default: "8080" },
      "base-port": { type: "string", default: "9101" }
    }
  })
  const hosts = integer("hosts", values.hosts, 1, 20)
  const port = integer("port", values.port, 1, 65535)
  const basePort = integer("base-port", values["base-port"], 1, 65535 - 100 - hosts)
  if (port >= basePort && port < basePort + 100 + hosts) fail(`--port ${port} is among the hosts' ports`)
  if (!haproxyInstalled()) fail(`${HAPROXY_BIN} not found: apt-get install haproxy`)

  const secrets = await sharedSecrets()
  const children = new Map<string, ChildProcess>()
  const gone = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null
  let ready = false
  let stopping = false
  const stop = (code: number): void => {
    if (stopping) {
      // A second Ctrl-C: do not wait for the drain.
      for (const child of children.values()) child.kill("SIGKILL")
      return
    }
    stopping = true
    process.stdout.write("stopping hosts and HAProxy\n")
    const left = [...children.values()].filter((child) => !gone(child))
    for (const child of left) child.kill("SIGTERM")
    void Promise.all(left.map((child) => new Promise((resolve) => child.once("close", resolve)))).then(() =>
      process.exit(code)
    )
  }
  process.on("SIGINT", () => stop(0))
  process.on("SIGTERM", () => stop(0))
  process.on("exit", () => {
    for (const child of children.values()) if (!gone(child)) child.kill("SIGKILL")
  })

  const start = (name: string, child: ChildProcess): void => {
    children.set(name, child)
    relay(name, child)
    child.on("close", (code, signal) => {
      if (stopping) return
      process.stderr.write(`${name} exited (${code ?? signal})\n`)
      // Before everything is up, or HAProxy itself: give up; a host lost later: the others go on.
      if (!ready || name === "haproxy") stop(1)
    })
  }
  const waitFor = (name: string, url: string, timeoutMs: number): Promise<void> =>
    waitUntilReady(url, timeoutMs, () => stopping || gone(children.get(name)!)).catch((error: Error) => {
      if (!stopping) process.stderr.write(`${error.message}\n`)
      stop(1)
      return new Promise<never>(() => {})
    })

  const layout = Array.from({ length: hosts }, (_, i) => ({
    name: `host${i + 1}`,
    port: basePort + i,
    address: `127.0.0.1:${basePort + i}`,
    runner: `127.0.0.1:${basePort + 100 + i}`
  }))
  for (const host of layout) {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...secrets,
      PORT: `${host.port}`,
      HOST: "127.0.0.1",
      RUNNER_ADDRESS: host.runner,
      DATABASE_URL: process.env.DATABASE_URL || DEFAULT_DATABASE_URL,
      DATA_DIR: path.join(DIR, host.name),
      DEMO: "1"
    }
    delete env.ENCRYPTION_KEY
    start(
      host.name,
      spawn(process.execPath, [...process.execArgv, HOST_MAIN], { env, stdio: ["ignore", "pipe", "pipe"] })
    )
  }
  await Promise.all(layout.map((host) => waitFor(host.name, `http://${host.address}`, 180_000)))

  const bind = `127.0.0.1:${port}`
  const config = writeHaproxyConfig(path.join(DIR, "haproxy.cfg"), { bind, servers: layout })
  start("haproxy", spawnHaproxy(config))
  await waitFor("haproxy", `http://${bind}`, 30_000)
  ready = true

  const logins = demoClientLogins.map((login) => `${login.clientId} / ${login.clientSecret}`).join(", ")
  process.stdout.write(
    [
      "",
      `RFQ service on http://${bind} (WebSocket ws://${bind}/ws/v1): ${hosts} host${hosts === 1 ? "" : "s"} behind HAProxy (${config})`,
      ...layout.map((h) => `  ${h.name}: http://${h.address}, runner ${h.runner}`),
      `Demo logins (clientId / clientSecret): ${logins}`,
      "Ctrl-C stops every host and HAProxy.",
      ""
    ].join("\n")
  )
}

void main()

import * as fs from "node:fs"
import WebSocket from "ws"
import { spawnHost } from "../../../host/test/support/spawnHost.js"
import { RfqClient, type RfqClientOptions } from "../../src/index.js"

/**
 * Real hosts for the client's tests, started the way `npm start` does (the host package's test
 * support) on embedded PGlite in a temporary data directory with the demo desks; removed when
 * stopped. `restart` stops it (SIGTERM) and starts it again on the same data (a new port).
 */
export const HOST_START_TIMEOUT_MS = 240_000

export interface ClientTestHost {
  readonly url: () => string
  readonly port: () => number
  readonly restart: () => Promise<void>
  readonly stop: () => Promise<void>
}

export const startHost = async (env: Readonly<Record<string, string>> = {}): Promise<ClientTestHost> => {
  const start = (dataDir?: string) =>
    spawnHost({ env, startTimeoutMs: HOST_START_TIMEOUT_MS, ...(dataDir === undefined ? {} : { dataDir }) })
  let current = await start()
  const dataDir = current.dataDir!
  return {
    url: () => current.url,
    port: () => Number(new URL(current.url).port),
    restart: async () => {
      await current.stop("SIGTERM")
      current = await start(dataDir)
    },
    stop: async () => {
      await current.stop("SIGTERM")
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

/** A client of a demo API client (secret `<clientId>-secret`). */
export const demoClient = (
  baseUrl: string,
  clientId: string,
  options: Partial<RfqClientOptions> = {}
): RfqClient =>
  new RfqClient({
    baseUrl,
    clientId,
    clientSecret: `${clientId}-secret`,
    WebSocket: WebSocket as never,
    ...options
  })

/** A 1x1 BTC call spread on DBT for `makers` (instruments of the docs' walk-through). */
export const callSpread = (makers: ReadonlyArray<string>, amount = 50) => ({
  id: 0,
  baseCurrency: "BTC",
  amount,
  anonymous: false,
  settlementOptions: ["DBT"],
  makers: { DBT: [...makers] },
  legs: [
    { direction: "buy", instrumentName: "BTC-27DEC30-90000-C", ratio: 1 },
    { direction: "sell", instrumentName: "BTC-27DEC30-110000-C", ratio: 1 }
  ]
})

/** Polls `check` until it holds (no assertion on time; the test's timeout bounds it). */
export const eventually = async (check: () => boolean, everyMs = 50): Promise<void> => {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, everyMs))
}

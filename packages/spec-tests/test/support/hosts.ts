import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { expect } from "vitest"
import type { HostControl } from "../../src/hosted/HostControl.js"
import { makeTempDir, type SpawnedHost, spawnHost } from "../../../host/test/support/spawnHost.js"

/**
 * Real hosts for the black-box suite, started the way `npm start` does (the host package's test
 * support): on embedded PGlite in a temporary data directory, or on PostgreSQL in a schema of its
 * own that is dropped afterwards, so runs never collide.
 */

export type Backend = "embedded" | "postgres"
export const backends: ReadonlyArray<Backend> = ["embedded", "postgres"]

const POSTGRES_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

/** Starting a host runs tsx, opens (or initialises) the database and seeds the demo data. */
export const HOST_START_TIMEOUT_MS = 240_000

export interface TestHost extends HostControl {
  readonly backend: Backend
  /** Stops the host (SIGTERM) and removes its data (the data directory, or the schema). */
  readonly dispose: () => Promise<void>
  readonly output: () => string
}

const dropSchema = (schema: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sql = yield* PgClient.PgClient
      yield* sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    }).pipe(Effect.scoped, Effect.provide(PgClient.layer({ url: Redacted.make(POSTGRES_URL) })))
  )

export const startHost = async (
  backend: Backend,
  env: Readonly<Record<string, string>> = {}
): Promise<TestHost> => {
  const jwtSecret = randomBytes(48).toString("base64url")
  const schema = `spec_${randomBytes(6).toString("hex")}`
  const dataDir = backend === "embedded" ? makeTempDir("rfq-spec-") : undefined
  const fullEnv: Record<string, string> = {
    JWT_SECRET: jwtSecret,
    ...(backend === "postgres"
      ? {
          DATABASE_URL: POSTGRES_URL,
          DATABASE_SCHEMA: schema,
          DEMO: "1",
          ENCRYPTION_KEY: randomBytes(32).toString("hex")
        }
      : {}),
    ...env
  }
  const start = () =>
    spawnHost({
      env: fullEnv,
      ...(dataDir === undefined ? {} : { dataDir }),
      startTimeoutMs: HOST_START_TIMEOUT_MS
    })
  let current: SpawnedHost = await start()
  let logs = ""
  const stop = async () => {
    const exit = await current.stop("SIGTERM")
    logs += current.output().stdout + current.output().stderr
    return exit
  }
  return {
    backend,
    jwtSecret,
    url: () => current.url,
    output: () => logs + current.output().stdout + current.output().stderr,
    restart: async () => {
      const exit = await stop()
      expect({ code: exit.code, signal: exit.signal }).toEqual({ code: 0, signal: null })
      current = await start()
    },
    dispose: async () => {
      await stop()
      if (backend === "postgres") await dropSchema(schema)
      if (dataDir !== undefined) fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

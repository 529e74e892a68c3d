import * as path from "node:path"
import { Option, Redacted } from "effect"
import type { HostConfig } from "./Config.js"

/*
 * Where the host's database is, from its configuration: for the host and for `npm run admin`, which
 * opens the same database without loading the server.
 */

/** What the engine's `makeDatabaseLayer` takes. */
export type DatabaseLayerConfig =
  | { readonly kind: "pglite"; readonly dataDir: string; readonly queryTimeoutMs?: number }
  | {
      readonly kind: "postgres"
      readonly url: string
      readonly schema?: string
      readonly queryTimeoutMs?: number
    }

/** PGlite's files live in a subdirectory so that the lock and key files stay out of its way. */
export const PGLITE_SUBDIR = "pglite"

export const databaseLayerConfig = (config: HostConfig): DatabaseLayerConfig => {
  const database = config.database
  const queryTimeoutMs = config.databaseQueryTimeoutMs
  if (database.kind === "pglite")
    return { kind: "pglite", dataDir: path.join(config.dataDir, PGLITE_SUBDIR), queryTimeoutMs }
  const url = Redacted.value(database.url)
  return Option.match(database.schema, {
    onNone: () => ({ kind: "postgres", url, queryTimeoutMs }),
    onSome: (schema) => ({ kind: "postgres", url, schema, queryTimeoutMs })
  })
}

import * as fs from "node:fs"
import { dropSchema, type Place } from "./DatabaseReader.js"
import {
  type Backend,
  hostEnv,
  makeTempDir,
  randomSchema,
  type RunningHost,
  startHost
} from "./HostProcess.js"

/** A host on fresh data; `use` runs against it and the data is removed afterwards. */
export const withHost = async <A>(
  backend: Backend,
  extra: Record<string, string>,
  use: (host: RunningHost, place: Place) => Promise<A>
): Promise<A> => {
  const place: Place = { dataDir: makeTempDir("rfq-rel-"), schema: randomSchema("rel") }
  const host = await startHost(hostEnv(backend, place, extra))
  try {
    return await use(host, place)
  } finally {
    await host.stop("SIGTERM")
    if (backend === "postgres") await dropSchema(place.schema)
    fs.rmSync(place.dataDir, { recursive: true, force: true })
  }
}

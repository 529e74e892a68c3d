import { afterAll, beforeAll, describe } from "vitest"
import { expiry } from "../src/hosted/Expiry.js"
import { openWorld, type World } from "../src/World.js"
import { backends, HOST_START_TIMEOUT_MS, startHost, type TestHost } from "./support/hosts.js"
import { register } from "./support/register.js"

/** RFQ expiry on a host whose RFQs live two seconds. */
const TTL_SECONDS = 3

describe.each(backends)("%s", (backend) => {
  let host: TestHost
  let world: World
  beforeAll(async () => {
    host = await startHost(backend, {
      RATE_LIMIT_PER_MINUTE: "1000000",
      RFQ_TTL_SECONDS: String(TTL_SECONDS)
    })
    world = await openWorld(host.url())
  }, HOST_START_TIMEOUT_MS)
  afterAll(async () => {
    await host?.dispose()
  }, HOST_START_TIMEOUT_MS)

  register([expiry(TTL_SECONDS)], () => world)
})

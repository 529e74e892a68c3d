import { afterAll, beforeAll, describe } from "vitest"
import { rateLimit } from "../src/hosted/RateLimit.js"
import { backends, HOST_START_TIMEOUT_MS, startHost, type TestHost } from "./support/hosts.js"
import { register } from "./support/register.js"

/** Rate limits on a host that allows five requests a minute. */
const LIMIT = 5
// Each scenario may wait for the next one-minute window.
const SCENARIO_TIMEOUT_MS = 150_000

describe.each(backends)("%s", (backend) => {
  let host: TestHost
  beforeAll(async () => {
    host = await startHost(backend, { RATE_LIMIT_PER_MINUTE: String(LIMIT) })
  }, HOST_START_TIMEOUT_MS)
  afterAll(async () => {
    await host?.dispose()
  }, HOST_START_TIMEOUT_MS)

  register([rateLimit(LIMIT)], () => host.url(), SCENARIO_TIMEOUT_MS)
})

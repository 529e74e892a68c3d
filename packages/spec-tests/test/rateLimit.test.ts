import { afterAll, beforeAll, describe } from "vitest"
import { rateLimit } from "../src/hosted/RateLimit.js"
import { HOST_START_TIMEOUT_MS, startHost, type TestHost } from "./support/hosts.js"
import { register } from "./support/register.js"

/**
 * Rate limits on a host that allows five requests a minute. The limiter lives in the host's memory
 * and never touches the database, so one backend covers it: each scenario may wait up to a minute
 * for a fresh window, and running it twice would only double that wait.
 */
const LIMIT = 5
// Each scenario may wait for the next one-minute window.
const SCENARIO_TIMEOUT_MS = 150_000

describe("embedded", () => {
  let host: TestHost
  beforeAll(async () => {
    host = await startHost("embedded", { RATE_LIMIT_PER_MINUTE: String(LIMIT) })
  }, HOST_START_TIMEOUT_MS)
  afterAll(async () => {
    await host?.dispose()
  }, HOST_START_TIMEOUT_MS)

  register([rateLimit(LIMIT)], () => host.url(), SCENARIO_TIMEOUT_MS)
})

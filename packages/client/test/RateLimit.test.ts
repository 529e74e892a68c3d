import { afterAll, beforeAll, expect, it } from "vitest"
import { type RateLimitWait, RfqError } from "../src/index.js"
import { type ClientTestHost, demoClient, HOST_START_TIMEOUT_MS, startHost } from "./support/hosts.js"

/**
 * Rate limits on a host with small ones: REST 4 requests and WebSocket 3 messages per user per
 * one-minute window. Calls past the limit wait until the window's reset and go through; with no
 * retries left the 429 (or -32603 `Rate limit exceeded`) reaches the caller. The windows are the
 * service's fixed minutes, so this file waits up to about a minute.
 */

let host: ClientTestHost

beforeAll(async () => {
  host = await startHost({ RATE_LIMIT_PER_MINUTE: "4", WS_RATE_LIMIT_PER_MINUTE: "3" })
}, HOST_START_TIMEOUT_MS)

afterAll(async () => {
  await host?.stop()
}, HOST_START_TIMEOUT_MS)

it("REST and WebSocket calls past the limit wait for the reset and succeed; without retries the refusal is typed", async () => {
  const waits: Array<RateLimitWait> = []
  const rest = demoClient(host.url(), "demo-maker-1", { onRateLimited: (w) => waits.push(w) })
  const impatient = demoClient(host.url(), "demo-maker-2", { maxRateLimitRetries: 0 })
  const ws = demoClient(host.url(), "demo-maker-3")
  const session = ws.session()

  // The impatient client's fifth call in the window is refused with the spec's 429.
  const refusals: Array<RfqError> = []
  for (let i = 0; i < 5; i++) {
    await impatient.call("v1/exchange/maker", {}).catch((e: RfqError) => refusals.push(e))
  }
  expect(refusals.length).toBeGreaterThan(0)
  expect(refusals[0]).toBeInstanceOf(RfqError)
  expect([refusals[0]!.status, refusals[0]!.code, refusals[0]!.message]).toEqual([
    429,
    429,
    "rate limit exceeded"
  ])

  const restCalls = Promise.all(Array.from({ length: 6 }, () => rest.call("v1/exchange/maker", {})))
  const wsCalls = (async () => {
    const answers = []
    for (let i = 0; i < 5; i++) answers.push(await session.call("v1/exchange/maker", {}))
    return answers
  })()
  const [restAnswers, wsAnswers] = await Promise.all([restCalls, wsCalls])
  expect(restAnswers.every((makers) => makers.length === 3)).toBe(true)
  expect(wsAnswers.every((makers) => makers.length === 3)).toBe(true)
  expect(waits.length).toBeGreaterThan(0)
  expect(waits.every((w) => w.operation === "v1/exchange/maker" && w.waitMs <= 65_000)).toBe(true)

  await session.close()
  for (const client of [rest, impatient, ws]) client.logout()
}, 180_000)

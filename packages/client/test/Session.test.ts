import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, expect, it } from "vitest"
import type { Gap, Notification, RfqClient, RfqSession, SessionStatus } from "../src/index.js"
import { RfqError } from "../src/index.js"
import {
  callSpread,
  type ClientTestHost,
  demoClient,
  eventually,
  HOST_START_TIMEOUT_MS,
  startHost
} from "./support/hosts.js"
import { shortLived } from "./support/forgeToken.js"
import { startTcpProxy, type TcpProxy } from "./support/TcpProxy.js"

/**
 * The WebSocket session against a real host with a 1 s heartbeat timeout, reached through a TCP
 * proxy that can cut the connections, refuse new ones and follow a restarted host.
 */

const HEARTBEAT_TIMEOUT_MS = 1_000
const JWT_SECRET = randomBytes(48).toString("base64url")

let host: ClientTestHost
let proxy: TcpProxy
let taker: RfqClient

interface Watched {
  readonly session: RfqSession
  readonly statuses: Array<SessionStatus>
  readonly gaps: Array<Gap>
  readonly notifications: Array<Notification>
}

/** A session through the proxy, its status changes, gaps and notifications recorded. */
const watch = (session: RfqSession): Watched => {
  const watched: Watched = { session, statuses: [], gaps: [], notifications: [] }
  session.onStatus((s) => watched.statuses.push(s))
  session.onGap((g) => watched.gaps.push(g))
  return watched
}

const makerSession = async (clientId: string, heartbeatIntervalMs = 250) => {
  const client = demoClient(proxy.url, clientId)
  const watched = watch(
    client.session({ heartbeatIntervalMs, reconnect: { initialDelayMs: 50, maxDelayMs: 400 } })
  )
  await watched.session.subscribe(["rfq.maker"], (n) => watched.notifications.push(n))
  return { client, ...watched }
}

/** A new RFQ for `maker` and the notification of it the maker's session receives. */
const rfqHeardBy = async (watched: Watched, makerId: string) => {
  const { rfqId } = await taker.call("v1/rfq/create", callSpread([makerId]) as never)
  await eventually(() => watched.notifications.some((n) => (n.data as { rfqId: number }).rfqId === rfqId))
  return watched.notifications.find((n) => (n.data as { rfqId: number }).rfqId === rfqId)!
}

beforeAll(async () => {
  host = await startHost({
    WS_HEARTBEAT_TIMEOUT_MS: String(HEARTBEAT_TIMEOUT_MS),
    RATE_LIMIT_PER_MINUTE: "100000",
    JWT_SECRET
  })
  proxy = await startTcpProxy(host.port())
  taker = demoClient(proxy.url, "demo-taker")
}, HOST_START_TIMEOUT_MS)

afterAll(async () => {
  taker?.logout()
  await proxy?.close()
  await host?.stop()
}, HOST_START_TIMEOUT_MS)

it("heartbeats keep the session open past the service's idle limit; calls and notifications flow", async () => {
  const maker = await makerSession("demo-maker-1")
  await new Promise((resolve) => setTimeout(resolve, 4 * HEARTBEAT_TIMEOUT_MS))
  expect(maker.statuses).toEqual(["open"])
  const heard = await rfqHeardBy(maker, "maker-1")
  expect([heard.channel, heard.seq]).toEqual(["rfq.maker", 1])
  const rfq = await maker.session.call("v1/rfq/get", { id: (heard.data as { rfqId: number }).rfqId })
  expect(rfq.role).toBe("maker")
  expect(maker.gaps).toEqual([])
  await maker.session.close()
  expect(maker.statuses).toEqual(["open", "closed"])
  maker.client.logout()
})

it("without heartbeats the service closes it (4000); the session reconnects, re-subscribes and reports the gap", async () => {
  const maker = await makerSession("demo-maker-2", 60_000)
  await rfqHeardBy(maker, "maker-2")
  await eventually(() => maker.statuses.filter((s) => s === "open").length >= 2)
  expect(maker.statuses.slice(0, 3)).toEqual(["open", "reconnecting", "open"])
  expect(maker.gaps[0]).toEqual({ expected: 2, received: 1, kind: "reconnect" })
  await maker.session.close()
  maker.client.logout()
})

it("after the network cuts the connection and refuses new ones for a while, it comes back subscribed", async () => {
  const maker = await makerSession("demo-maker-3")
  await rfqHeardBy(maker, "maker-3")
  await rfqHeardBy(maker, "maker-3")
  const acceptedBefore = proxy.accepted()
  proxy.refuse(true)
  // A call in flight when the connection goes is rejected, not sent again: it may have run.
  const inFlight = maker.session.call("v1/quote/cancel-all", {}).catch((e: unknown) => e)
  proxy.cut()
  expect(await inFlight).toMatchObject({ status: 0, code: "disconnected" })
  await eventually(() => maker.statuses.includes("reconnecting"))
  // A call made meanwhile waits for the session to be open again.
  const waiting = maker.session.call("v1/exchange/maker", {})
  await new Promise((resolve) => setTimeout(resolve, 500))
  proxy.refuse(false)
  expect((await waiting).length).toBeGreaterThan(0)
  expect(proxy.accepted()).toBeGreaterThan(acceptedBefore)
  expect(maker.gaps).toEqual([{ expected: 3, received: 1, kind: "reconnect" }])
  // Re-subscribed: the next RFQ is heard, numbered from 1 on the new connection.
  const heard = await rfqHeardBy(maker, "maker-3")
  expect(heard.seq).toBe(1)
  await maker.session.close()
  maker.client.logout()
})

it("a channel the service refuses: subscribe rejects with -32602 naming it; the session stays open with the others", async () => {
  const client = demoClient(proxy.url, "demo-maker-1")
  const watched = watch(client.session({ heartbeatIntervalMs: 250 }))
  // Both asked for before the session is open, as a screen does when it starts.
  const good = watched.session.subscribe(["rfq.maker"], (n) => watched.notifications.push(n))
  const bad = watched.session.subscribe(["rfq.nope"], () => {}).catch((e: unknown) => e)
  await good
  const refusal = (await bad) as RfqError
  expect(refusal).toBeInstanceOf(RfqError)
  expect([refusal.status, refusal.code]).toEqual([400, -32602])
  expect(JSON.stringify(refusal.reason)).toContain("rfq.nope")
  await rfqHeardBy(watched, "maker-1")
  // After a drop only the accepted channel is asked for again, and the session comes back.
  proxy.cut()
  await eventually(() => watched.statuses.filter((s) => s === "open").length >= 2)
  await rfqHeardBy(watched, "maker-1")
  expect(watched.statuses).toEqual(["open", "reconnecting", "open"])
  await watched.session.close()
  client.logout()
})

it("a reconnect with nothing subscribed reports no gap; a later subscription counts from 1 again", async () => {
  const client = demoClient(proxy.url, "demo-maker-2")
  const watched = watch(client.session({ heartbeatIntervalMs: 250, reconnect: { initialDelayMs: 50 } }))
  await watched.session.subscribe(["rfq.maker"], (n) => watched.notifications.push(n))
  await rfqHeardBy(watched, "maker-2")
  await watched.session.unsubscribe(["rfq.maker"])
  proxy.cut()
  await eventually(() => watched.statuses.filter((s) => s === "open").length >= 2)
  await watched.session.subscribe(["rfq.maker"], (n) => watched.notifications.push(n))
  expect((await rfqHeardBy(watched, "maker-2")).seq).toBe(1)
  expect(watched.gaps).toEqual([])
  await watched.session.close()
  client.logout()
})

it("close() ends it for good: status closed, calls rejected, no reconnect", async () => {
  const maker = await makerSession("demo-maker-1")
  await maker.session.close()
  const error = await maker.session.call("v1/exchange/maker", {}).then(
    () => undefined,
    (e: unknown) => e
  )
  expect(error).toBeInstanceOf(RfqError)
  expect([(error as RfqError).status, (error as RfqError).code]).toEqual([0, "closed"])
  await new Promise((resolve) => setTimeout(resolve, 500))
  expect(maker.statuses).toEqual(["open", "closed"])
  maker.client.logout()
})

it("renews the session's token when the client renews its own (auth/refresh)", async () => {
  const client = demoClient(proxy.url, "demo-maker-2", { refreshAheadSeconds: 299 })
  const session = client.session({ heartbeatIntervalMs: 250 })
  const statuses: Array<SessionStatus> = []
  session.onStatus((s) => statuses.push(s))
  await session.call("v1/exchange/maker", {})
  await eventually(() => session.expiresAt !== undefined)
  const first = session.expiresAt!
  await eventually(() => session.expiresAt! > first)
  expect(statuses).toEqual(["open"])
  await session.close()
  client.logout()
})

it("the session's token expires (4001): it logs in afresh and comes back; without credentials it ends", async () => {
  const real = await demoClient(proxy.url, "demo-maker-2").accessToken()
  const client = demoClient(proxy.url, "demo-maker-2", { accessToken: shortLived(real, JWT_SECRET, 2) })
  const watched = watch(client.session({ heartbeatIntervalMs: 250, reconnect: { initialDelayMs: 50 } }))
  await watched.session.subscribe(["rfq.maker"], (n) => watched.notifications.push(n))
  await eventually(() => watched.statuses.filter((s) => s === "open").length >= 2)
  expect(watched.statuses.slice(0, 3)).toEqual(["open", "reconnecting", "open"])
  expect(await client.accessToken()).not.toBe(real)
  expect((await rfqHeardBy(watched, "maker-2")).seq).toBe(1)
  await watched.session.close()
  client.logout()

  // A caller's own token and no credentials: nothing can renew it, the session ends and says why.
  const tokenOnly = demoClient(proxy.url, "x", {
    clientId: undefined,
    clientSecret: undefined,
    accessToken: shortLived(real, JWT_SECRET, 2)
  } as never)
  const session = tokenOnly.session({ heartbeatIntervalMs: 250, reconnect: { initialDelayMs: 50 } })
  const errors: Array<RfqError> = []
  session.onError((e) => errors.push(e))
  await session.call("v1/exchange/maker", {})
  await eventually(() => session.currentStatus === "closed")
  expect(errors.map((e) => [e.status, e.message])).toEqual([
    [401, "authorisation token expired or not valid"]
  ])
  const refused = await session.call("v1/exchange/maker", {}).catch((e: unknown) => e)
  expect(refused).toBe(errors[0])
})

it("a restart of the service (1001): the session comes back once the host is up again", async () => {
  const maker = await makerSession("demo-maker-1")
  await host.restart()
  proxy.retarget(host.port())
  await eventually(() => maker.statuses.filter((s) => s === "open").length >= 2)
  expect(maker.statuses.slice(0, 2)).toEqual(["open", "reconnecting"])
  const heard = await rfqHeardBy(maker, "maker-1")
  expect(heard.seq).toBe(1)
  await maker.session.close()
  maker.client.logout()
})

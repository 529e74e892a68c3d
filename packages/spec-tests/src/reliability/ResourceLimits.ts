import { Worker } from "node:worker_threads"
import { type Answer, call, isStandardError } from "./Http.js"
import type { RunningHost } from "./HostProcess.js"
import { createRfq, credentialsOf, Desk, rfqBody } from "./Lifecycle.js"
import { connectWs } from "./WsClient.js"

/**
 * Resource limits (OWASP API4, unrestricted resource consumption): oversized and pathological
 * inputs are each refused cleanly (a documented 4xx with the standard body over REST; a JSON-RPC
 * error or a clean close over WebSocket), the host's resident memory grows less than 50 MB over
 * all of them, and a well-behaved client's median latency is measured with and without the attack.
 */
export interface LimitCase {
  readonly name: string
  readonly refusedCleanly: boolean
  readonly answer: string
}

export interface LimitFigures {
  readonly cases: Array<LimitCase>
  readonly rssGrowthMb: number
  readonly baselineMedianMs: number
  readonly underAttackMedianMs: number
  readonly wsSkipped: boolean
}

const describe = (a: Answer) =>
  `${a.status} ${(a.body as { message?: string } | undefined)?.message ?? a.text.slice(0, 80)}`

/**
 * One hostile request every 50 ms (20 per second, twelve times the default per-user rate limit of
 * 100 per minute, which these hosts lift). A back-to-back loop would instead measure fair sharing
 * of one event loop between two clients: even a cheap 400 sent without pause takes half of it.
 */
export const ATTACK_GAP_MS = 50

// Built once: the attack should cost the host, not the attacker.
let bodies: { big: Uint8Array; deepArray: string; deepObject: string } | undefined
const attackBodies = () => {
  bodies ??= {
    big: new TextEncoder().encode(`{"label":"${"x".repeat(10 * 1024 * 1024)}"}`),
    deepArray: `{"legs":${"[".repeat(10_000)}${"]".repeat(10_000)}}`,
    deepObject: `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`
  }
  return bodies
}

const restAttacks = (token: string) => [
  {
    name: "10 MB body",
    expect: 413,
    send: (base: string) =>
      call(base, "POST", "/v1/rfq/0", {
        token,
        body: attackBodies().big,
        headers: { "content-type": "application/json" }
      })
  },
  {
    name: "JSON array nested 10,000 deep",
    expect: 400,
    send: (base: string) => call(base, "POST", "/v1/rfq/0", { token, body: attackBodies().deepArray })
  },
  {
    name: "JSON object nested 10,000 deep",
    expect: 400,
    send: (base: string) => call(base, "POST", "/v1/rfq/0", { token, body: attackBodies().deepObject })
  },
  {
    name: "limit=1000000",
    expect: 400,
    send: (base: string) => call(base, "GET", "/v1/rfq?limit=1000000", { token })
  },
  {
    name: "quotes limit=1000000",
    expect: 400,
    send: (base: string) => call(base, "GET", "/v1/rfq/quotes?limit=1000000", { token })
  }
]

const median = (xs: Array<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] ?? 0
}

/**
 * The well-behaved client lives on its own thread: sharing the attacker's event loop (which
 * pushes 10 MB bodies) would measure the test process, not the host.
 */
const READER = `
const { parentPort, workerData } = require("node:worker_threads")
parentPort.on("message", async (count) => {
  const out = []
  for (let i = 0; i < count; i++) {
    const start = performance.now()
    const response = await fetch(workerData.url, { headers: { authorization: "Bearer " + workerData.token } })
    await response.arrayBuffer()
    out.push(performance.now() - start)
  }
  parentPort.postMessage(out)
})`

const makeReader = (url: string, token: string) => {
  const worker = new Worker(READER, { eval: true, workerData: { url, token } })
  const reads = (count: number) =>
    new Promise<Array<number>>((resolve) => {
      worker.once("message", resolve)
      worker.postMessage(count)
    })
  return { reads, close: () => worker.terminate() }
}

const wsAttacks = async (base: string, token: string): Promise<Array<LimitCase> | undefined> => {
  let ws: Awaited<ReturnType<typeof connectWs>>
  try {
    ws = await connectWs(base)
  } catch {
    return undefined
  }
  const cases: Array<LimitCase> = []
  await ws.rpc("auth", { token })
  const batch = JSON.stringify(
    Array.from({ length: 10_000 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "heartbeat" }))
  )
  const reply = (await ws.exchange(batch, 15_000)) as
    | { error?: { code: number; message: string } }
    | Array<unknown>
    | undefined
  const single = Array.isArray(reply) ? undefined : reply
  cases.push({
    name: "10,000-call JSON-RPC batch",
    refusedCleanly: single?.error !== undefined && single.error.code === -32600,
    answer: Array.isArray(reply) ? `${reply.length} replies (executed)` : JSON.stringify(reply).slice(0, 120)
  })
  ws.close()
  const big = await connectWs(base)
  big.socket.send(Buffer.alloc(100 * 1024 * 1024, 0x20))
  const close = await Promise.race([
    big.closed,
    new Promise<undefined>((r) => setTimeout(() => r(undefined), 20_000))
  ])
  cases.push({
    name: "100 MB WebSocket frame",
    refusedCleanly:
      close !== undefined && (close.code === 1009 || close.code === 1006 || close.code === 1008),
    answer: close === undefined ? "connection still open after 20 s" : `closed ${close.code} ${close.reason}`
  })
  big.close()
  return cases
}

export const runResourceLimits = async (host: RunningHost, rounds: number): Promise<LimitFigures> => {
  const taker = await Desk.login(host.url, "demo-taker")
  const rfqId = await createRfq(taker, rfqBody("single", await credentialsOf(taker), ["maker-1"]))
  const reader = makeReader(`${host.url}/v1/rfq/${rfqId}`, taker.token)
  await reader.reads(50) // warm up
  attackBodies()
  let rssBefore = host.rss() ?? 0
  const cases: Array<LimitCase> = []
  const attackRound = async (round: number) => {
    for (const attack of restAttacks(taker.token)) {
      const a = await attack
        .send(host.url)
        .catch((e: unknown) => ({ status: 0, text: String(e), body: undefined, headers: new Headers() }))
      await new Promise((r) => setTimeout(r, ATTACK_GAP_MS))
      if (round === 0 || a.status !== attack.expect || !isStandardError(a))
        cases.push({
          name: attack.name,
          refusedCleanly: a.status === attack.expect && isStandardError(a),
          answer: describe(a)
        })
    }
  }
  // Blocks of reads alone and reads during one round of attacks, alternating, so that the
  // machine's drift (other processes) weighs on both sides alike.
  const baseline: Array<number> = []
  const underAttack: Array<number> = []
  for (let round = 0; round < rounds; round++) {
    baseline.push(...(await reader.reads(40)))
    let done = false
    const attack = attackRound(round).finally(() => {
      done = true
    })
    do underAttack.push(...(await reader.reads(10)))
    while (!done)
    await attack
    // Growth is counted from the end of the first round: what the process allocates once to
    // serve these requests at all (buffers, compiled code) is not growth.
    if (round === 0) rssBefore = host.rss() ?? rssBefore
  }
  await reader.close()
  const ws = await wsAttacks(host.url, taker.token)
  if (ws !== undefined) cases.push(...ws)
  const alive = await call(host.url, "GET", "/healthz")
    .then((a) => a.status === 200)
    .catch(() => false)
  cases.push({ name: "host alive afterwards", refusedCleanly: alive, answer: alive ? "200" : "no answer" })
  await new Promise((r) => setTimeout(r, 1000))
  const rssAfter = host.rss() ?? Number.POSITIVE_INFINITY
  return {
    cases,
    rssGrowthMb: (rssAfter - rssBefore) / (1024 * 1024),
    baselineMedianMs: median(baseline),
    underAttackMedianMs: median(underAttack),
    wsSkipped: ws === undefined
  }
}

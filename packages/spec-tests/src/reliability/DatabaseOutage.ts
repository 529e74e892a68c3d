import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { dropSchema, openDatabase, type Place } from "./DatabaseReader.js"
import { checkDurability } from "./DurabilityCheck.js"
import { hostEnv, makeTempDir, randomSchema, startHost } from "./HostProcess.js"
import { call, isStandardError } from "./Http.js"
import { credentialsOf, Desk, rfqBody } from "./Lifecycle.js"
import { Witness } from "./Witness.js"
import { connectWs, type RpcReply, type WsConnection } from "./WsClient.js"

/**
 * Database outage: the host runs on PostgreSQL under a steady load of writes (each acknowledged
 * one recorded in an fsync'd witness); the PostgreSQL cluster is stopped for `outageMs`, then
 * started again. A third writer makes the same write over an authenticated WebSocket session
 * (`v1/rfq/create`). During the outage every answer must come fast (< 2 s) — as 503 with the
 * standard body over REST, as the JSON-RPC error of a 503 (`data.status` 503, `service
 * unavailable`) over WebSocket — and `/readyz` must say 503; after it, the first successful write
 * must come within 5 s; and no acknowledged write may be missing. PostgreSQL is restarted whatever
 * happens.
 *
 * The cluster is the whole machine's: run this only where nothing else needs PostgreSQL for the
 * duration (`npm run test:reliability`, never inside `npm test`).
 */
export interface OutageFigures {
  outageAnswers: number
  outageAnswersNot503: number
  /** JSON-RPC `v1/rfq/create` calls sent and answered (or timed out) during the outage. */
  outageRpcAnswers: number
  outageRpcAnswersNot503: number
  outageSlowestMs: number
  readyzNot503: number
  recoveryMs: number
  lost: number
  problems: Array<string>
}

const CLUSTER = (process.env.RELIABILITY_PG_CLUSTER ?? "15 main").split(" ")
const pgctl = (action: "stop" | "start") =>
  execFileSync(
    "pg_ctlcluster",
    ["--skip-systemctl-redirect", ...CLUSTER, action, ...(action === "stop" ? ["-m", "fast"] : [])],
    {
      stdio: "pipe",
      timeout: 60_000
    }
  )

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The JSON-RPC form of REST's 503: `-32603 service unavailable` with `data {status: 503, reason}`. */
const isRpcServiceUnavailable = (reply: RpcReply): boolean => {
  const data = reply.error?.data as { status?: unknown; reason?: unknown } | undefined
  return (
    reply.error?.code === -32603 &&
    reply.error.message === "service unavailable" &&
    data?.status === 503 &&
    Array.isArray(data.reason) &&
    data.reason.every((r) => typeof r === "string")
  )
}

/** Heartbeats keep the session open across the run (the host closes it after 30 s without one). */
const HEARTBEAT_EVERY_MS = 5000

export const runDatabaseOutage = async (options: {
  outageMs: number
  log: (line: string) => void
}): Promise<OutageFigures> => {
  const place: Place = { dataDir: makeTempDir("rfq-outage-"), schema: randomSchema("outage") }
  const figures: OutageFigures = {
    outageAnswers: 0,
    outageAnswersNot503: 0,
    outageRpcAnswers: 0,
    outageRpcAnswersNot503: 0,
    outageSlowestMs: 0,
    readyzNot503: 0,
    recoveryMs: Number.POSITIVE_INFINITY,
    lost: 0,
    problems: []
  }
  const witness = new Witness(path.join(place.dataDir, "witness.jsonl"))
  const host = await startHost(hostEnv("postgres", place))
  let stopped = false
  let ws: WsConnection | undefined
  let phase: "before" | "outage" | "after" = "before"
  let pgStopped = false
  // Runs on an interrupted run too (process.exit from a signal skips `finally`).
  const restartIfStopped = () => {
    if (!pgStopped) return
    pgStopped = false
    pgctl("start")
  }
  try {
    const taker = await Desk.login(host.url, "demo-taker")
    const body = rfqBody("single", await credentialsOf(taker), ["maker-1"])
    const writer = async () => {
      while (!stopped) {
        const started = Date.now()
        // Only a request sent and answered inside the outage counts (pg_ctlcluster blocks this
        // process while it stops the cluster: answers read then were given before).
        const sentDuring = phase === "outage"
        const a = await taker.request("POST", "/v1/rfq/0", body).catch(() => undefined)
        const ms = Date.now() - started
        if (a?.status === 200)
          witness.record({ t: "rfq", rfqId: (a.body as { rfqId: number }).rfqId, split: "single" })
        if (sentDuring && phase === "outage") {
          figures.outageAnswers++
          figures.outageSlowestMs = Math.max(figures.outageSlowestMs, ms)
          if (a === undefined || a.status !== 503 || !isStandardError(a)) {
            figures.outageAnswersNot503++
            if (figures.problems.length < 10)
              figures.problems.push(
                `write during outage: ${a?.status ?? "no answer"} ${a?.text.slice(0, 120) ?? ""}`
              )
          }
          const ready = await call(host.url, "GET", "/readyz").catch(() => undefined)
          if (ready?.status !== 503) figures.readyzNot503++
        }
        await sleep(100)
      }
    }
    // Authenticated before the outage (verifying a token reads the database).
    ws = await connectWs(host.url)
    const auth = await ws.rpc("auth", { token: taker.token })
    if ((auth.result as { success?: unknown } | undefined)?.success !== true)
      throw new Error(`WebSocket auth failed: ${JSON.stringify(auth).slice(0, 200)}`)
    const rpcWriter = async (session: WsConnection) => {
      let lastHeartbeat = Date.now()
      while (!stopped) {
        if (Date.now() - lastHeartbeat >= HEARTBEAT_EVERY_MS) {
          lastHeartbeat = Date.now()
          await session.rpc("heartbeat")
        }
        const started = Date.now()
        const sentDuring = phase === "outage"
        // `rpc` answers a timeout or a closed session as an error with code 0 ("no reply").
        const reply = await session.rpc("v1/rfq/create", body, 5000)
        const ms = Date.now() - started
        const created = reply.result as { rfqId?: unknown } | undefined
        if (typeof created?.rfqId === "number")
          witness.record({ t: "rfq", rfqId: created.rfqId, split: "single" })
        if (sentDuring && phase === "outage") {
          figures.outageRpcAnswers++
          figures.outageSlowestMs = Math.max(figures.outageSlowestMs, ms)
          if (!isRpcServiceUnavailable(reply)) {
            figures.outageRpcAnswersNot503++
            if (figures.problems.length < 10)
              figures.problems.push(`JSON-RPC write during outage: ${JSON.stringify(reply).slice(0, 160)}`)
          }
        }
        await sleep(100)
      }
    }
    const writers = [writer(), writer(), rpcWriter(ws)]
    await sleep(2000)
    pgStopped = true
    process.once("exit", restartIfStopped)
    pgctl("stop")
    options.log(`PostgreSQL stopped for ${options.outageMs} ms`)
    phase = "outage"
    await sleep(options.outageMs)
    phase = "after"
    restartIfStopped()
    const back = Date.now()
    options.log("PostgreSQL started")
    while (Date.now() - back < 60_000) {
      const a = await taker.request("POST", "/v1/rfq/0", body).catch(() => undefined)
      if (a?.status === 200) {
        witness.record({ t: "rfq", rfqId: (a.body as { rfqId: number }).rfqId, split: "single" })
        figures.recoveryMs = Date.now() - back
        break
      }
      await sleep(100)
    }
    stopped = true
    await Promise.all(writers)
  } finally {
    stopped = true
    ws?.close()
    try {
      restartIfStopped()
    } catch (error) {
      figures.problems.push(`PostgreSQL restart failed: ${String(error)}`)
    }
    process.off("exit", restartIfStopped)
    await host.stop("SIGTERM")
    witness.close()
  }
  const db = await openDatabase("postgres", place)
  try {
    const checked = await checkDurability(db, Witness.read(witness.file))
    figures.lost = checked.lost
    figures.problems.push(...checked.problems.filter((p) => p.startsWith("lost")))
  } finally {
    await db.close()
    await dropSchema(place.schema)
    fs.rmSync(place.dataDir, { recursive: true, force: true })
  }
  return figures
}

import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { dropSchema, openDatabase, type Place } from "./DatabaseReader.js"
import { checkDurability } from "./DurabilityCheck.js"
import { hostEnv, makeTempDir, randomSchema, startHost } from "./HostProcess.js"
import { call, isStandardError } from "./Http.js"
import { credentialsOf, Desk, rfqBody } from "./Lifecycle.js"
import { Witness } from "./Witness.js"

/**
 * Database outage: the host runs on PostgreSQL under a steady load of writes (each acknowledged
 * one recorded in an fsync'd witness); the PostgreSQL cluster is stopped for `outageMs`, then
 * started again. During the outage every answer must come fast (< 2 s) as 503 with the standard
 * body and `/readyz` must say 503; after it, the first successful write must come within 5 s; and
 * no acknowledged write may be missing. PostgreSQL is restarted whatever happens.
 *
 * The cluster is the whole machine's: run this only where nothing else needs PostgreSQL for the
 * duration (`npm run test:reliability`, never inside `npm test`).
 */
export interface OutageFigures {
  outageAnswers: number
  outageAnswersNot503: number
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

export const runDatabaseOutage = async (options: {
  outageMs: number
  log: (line: string) => void
}): Promise<OutageFigures> => {
  const place: Place = { dataDir: makeTempDir("rfq-outage-"), schema: randomSchema("outage") }
  const figures: OutageFigures = {
    outageAnswers: 0,
    outageAnswersNot503: 0,
    outageSlowestMs: 0,
    readyzNot503: 0,
    recoveryMs: Number.POSITIVE_INFINITY,
    lost: 0,
    problems: []
  }
  const witness = new Witness(path.join(place.dataDir, "witness.jsonl"))
  const host = await startHost(hostEnv("postgres", place))
  let stopped = false
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
    const writers = [writer(), writer()]
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

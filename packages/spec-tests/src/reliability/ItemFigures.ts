import * as fs from "node:fs"
import fc from "fast-check"
import { dropSchema, type Place } from "./DatabaseReader.js"
import { atMost, type Figure, info, SCALE, type Scale, zero } from "./Figures.js"
import { fuzzRequest, fuzzTokens, sendFuzzRequest } from "./Fuzz.js"
import { openRpcSession, rpcFrame, sendRpcFrame } from "./FuzzRpc.js"
import {
  type Backend,
  hostEnv,
  makeTempDir,
  randomSchema,
  type RunningHost,
  startHost
} from "./HostProcess.js"
import { call } from "./Http.js"
import { runResourceLimits } from "./ResourceLimits.js"
import { runRotationCheck } from "./RotationCheck.js"
import {
  dumpOf,
  exhaustiveBitFlips,
  knownSecrets,
  searchDump,
  type SecretsFigures,
  storeMarkedSecret,
  tamperCiphertexts
} from "./SecretsAtRest.js"
import { runTenancy } from "./Tenancy.js"
import { runWsTenancy } from "./TenancyWs.js"
import { runTokenAttacks } from "./TokenAttacks.js"
import { wsAvailable } from "./WsClient.js"

/** The figures of items 3, 4, 5, 7 and 8 against a running host (or hosts it starts itself). */
export const fuzzFigures = async (
  base: string,
  scale: Scale,
  seed: number,
  log: (l: string) => void
): Promise<Array<Figure>> => {
  // Generated before the first request: generating 10,000 takes long enough for the server to
  // close the idle keep-alive connections that the token requests opened, and undici's first
  // request on such a socket can fail with "other side closed" — a client-side race, not an answer.
  const requests = fc.sample(fuzzRequest, { numRuns: SCALE.fuzzRequests[scale], seed })
  const tokens = await fuzzTokens(base)
  let bad = 0
  let serverErrors = 0
  for (const [i, r] of requests.entries()) {
    const problem = await sendFuzzRequest(base, tokens, r).catch(
      (e: unknown) => `no answer: ${String(e)} (${String((e as { cause?: unknown }).cause)})`
    )
    if (problem === undefined) continue
    bad++
    if (/^5\d\d|no answer/.test(problem)) serverErrors++
    if (bad <= 5) log(`fuzz REST seed ${seed} #${i}: ${r.method} ${r.path} → ${problem}`)
  }
  const alive = (await call(base, "GET", "/healthz").catch(() => undefined))?.status === 200
  const out: Array<Figure> = [
    info("3 fuzz", "REST requests / seed", `${requests.length} / ${seed}`),
    zero("3 fuzz", "REST 5xx or no answer", serverErrors),
    zero("3 fuzz", "REST answers not a documented error", bad - serverErrors),
    zero("3 fuzz", "host crashed", alive ? 0 : 1)
  ]
  if (!(await wsAvailable(base))) {
    log("note: the WebSocket endpoint is not served; JSON-RPC frame fuzzing skipped")
    return [...out, info("3 fuzz", "JSON-RPC frames", "skipped: WebSocket not served")]
  }
  const frames = fc.sample(rpcFrame, { numRuns: SCALE.fuzzFrames[scale], seed })
  let ws = await openRpcSession(base, tokens.maker)
  let reconnects = 0
  let badFrames = 0
  for (const [i, frame] of frames.entries()) {
    if (ws.socket.readyState !== 1) {
      reconnects++
      ws = await openRpcSession(base, tokens.maker)
    }
    const problem = await sendRpcFrame(ws, frame, i)
    if (problem === undefined) continue
    badFrames++
    if (badFrames <= 5) log(`fuzz JSON-RPC seed ${seed} #${i}: ${problem}`)
  }
  ws.close()
  const stillAlive = (await call(base, "GET", "/healthz").catch(() => undefined))?.status === 200
  return [
    ...out,
    info(
      "3 fuzz",
      "JSON-RPC frames / seed / sessions closed by the server",
      `${frames.length} / ${seed} / ${reconnects}`
    ),
    zero("3 fuzz", "JSON-RPC replies not a documented error", badFrames),
    zero("3 fuzz", "host crashed after frames", stillAlive ? 0 : 1)
  ]
}

export const tenancyFigures = async (base: string, scale: Scale, seed: number, log: (l: string) => void) => {
  const f = await runTenancy(base, { fuzzedIds: SCALE.tenancyFuzzedIds[scale], seed })
  for (const p of f.problems.slice(0, 10)) log(p)
  const ws = (await wsAvailable(base)) ? await runWsTenancy(base) : undefined
  if (ws === undefined) log("note: the WebSocket endpoint is not served; tenancy over WS skipped")
  for (const p of ws?.problems.slice(0, 10) ?? []) log(p)
  const wsFigures =
    ws === undefined
      ? [info("4 tenancy", "over WebSocket", "skipped: not served")]
      : [
          info("4 tenancy", "WS calls with foreign / missing ids", ws.calls),
          zero("4 tenancy", "WS cross-tenant reads", ws.crossTenantReads),
          zero("4 tenancy", "WS cross-tenant writes", ws.crossTenantWrites),
          zero("4 tenancy", "WS answers revealing existence", ws.existenceLeaks),
          zero("4 tenancy", "WS notifications about another desk's RFQ", ws.notificationsLeaked)
        ]
  return [
    info("4 tenancy", "calls with foreign / missing / fuzzed ids (seed)", `${f.calls} (${seed})`),
    zero("4 tenancy", "cross-tenant reads", f.crossTenantReads),
    zero("4 tenancy", "cross-tenant writes", f.crossTenantWrites),
    zero("4 tenancy", "answers revealing existence", f.existenceLeaks),
    zero("4 tenancy", "extra body fields that changed something", f.extraFieldEffects),
    ...wsFigures
  ]
}

export const tokenFigures = async (base: string, log: (l: string) => void) => {
  const cases = await runTokenAttacks(base)
  for (const c of cases)
    log(`${c.ok ? "ok  " : "FAIL"} ${c.name}: ${c.actual}${c.ok ? "" : ` (expected ${c.expected})`}`)
  return [
    info("5 tokens", "cases", cases.length),
    zero("5 tokens", "forged tokens accepted", cases.filter((c) => c.forgedAccepted).length),
    zero("5 tokens", "outcomes other than documented", cases.filter((c) => !c.ok).length)
  ]
}

export const limitFigures = async (host: RunningHost, scale: Scale, log: (l: string) => void) => {
  const f = await runResourceLimits(host, SCALE.limitRounds[scale])
  for (const c of f.cases) log(`${c.refusedCleanly ? "ok  " : "FAIL"} ${c.name}: ${c.answer}`)
  if (f.wsSkipped) log("note: the WebSocket endpoint is not served; batch and frame limits skipped")
  const worse =
    f.baselineMedianMs === 0 ? 0 : ((f.underAttackMedianMs - f.baselineMedianMs) / f.baselineMedianMs) * 100
  return [
    zero("7 limits", "inputs not refused cleanly", f.cases.filter((c) => !c.refusedCleanly).length),
    atMost("7 limits", "RSS growth", f.rssGrowthMb, 50, " MB"),
    atMost("7 limits", "well-behaved client's median latency worse by", worse, 20, " %"),
    info(
      "7 limits",
      "median latency alone / under attack (ms)",
      `${f.baselineMedianMs.toFixed(2)} / ${f.underAttackMedianMs.toFixed(2)}`
    )
  ]
}

export const secretsFigures = async (backends: ReadonlyArray<Backend>, log: (l: string) => void) => {
  const figures: SecretsFigures = {
    plaintextsInDump: 0,
    searched: 0,
    tamperedAccepted: 0,
    tamperCases: 0,
    problems: []
  }
  for (const backend of backends) {
    const place: Place = { dataDir: makeTempDir("rfq-secrets-"), schema: randomSchema("secrets") }
    const host = await startHost(hostEnv(backend, place))
    try {
      const secrets = [...(await knownSecrets(host.url)), (await storeMarkedSecret(host.url)).secret]
      if (backend === "postgres") await tamperCiphertexts(host, place, figures)
      await host.stop("SIGTERM")
      const found = searchDump(dumpOf(backend, place), secrets)
      figures.searched += secrets.length
      figures.plaintextsInDump += found.length
      for (const s of found)
        figures.problems.push(`${backend}: plaintext secret in the dump (${s.slice(0, 6)}…)`)
    } finally {
      await host.stop("SIGKILL")
      if (backend === "postgres") await dropSchema(place.schema)
      fs.rmSync(place.dataDir, { recursive: true, force: true })
    }
  }
  for (const p of figures.problems.slice(0, 10)) log(p)
  const flips = exhaustiveBitFlips()
  const rotation = await runRotationCheck()
  return [
    info("8 secrets", "secrets searched in dumps", `${figures.searched} (${backends.join(", ")})`),
    zero("8 secrets", "plaintext secrets in a dump", figures.plaintextsInDump),
    zero(
      "8 secrets",
      `tampered ciphertexts decrypted by the API (of ${figures.tamperCases})`,
      figures.tamperedAccepted
    ),
    zero("8 secrets", `single-bit flips opened by SecretBox (of ${flips.cases})`, flips.accepted),
    zero("8 secrets", `rotation: secrets lost or changed (of ${rotation.rows})`, rotation.lostOrChanged),
    zero(
      "8 secrets",
      "rotation: rows left on the old key",
      rotation.notOnNewVersion + rotation.readableWithOldKeyOnly
    ),
    zero("8 secrets", "rotation: rows rewritten by a second run", rotation.secondRunRotated),
    zero("8 secrets", "rotation: rows written despite a tampered row", rotation.partialWritesOnTamper)
  ]
}

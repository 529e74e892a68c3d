import { type CrashFigures, runCrashDurability } from "./CrashDurability.js"
import { openDatabase } from "./DatabaseReader.js"
import { runDatabaseOutage } from "./DatabaseOutage.js"
import { checkDurability } from "./DurabilityCheck.js"
import { atMost, type Figure, info, type Item, type RunContext, SCALE, type Scale, zero } from "./Figures.js"
import { fuzzFigures, limitFigures, secretsFigures, tenancyFigures, tokenFigures } from "./ItemFigures.js"
import { emptyRaceFigures, MAX_ATTEMPTS_PER_ROUND, type RaceKind, runRaces } from "./Races.js"
import { wsAvailable } from "./WsClient.js"
import { cursorProbeItem } from "./CursorProbe.js"
import { databaseStallItem } from "./DatabaseStall.js"
import { guessingItem } from "./Guessing.js"
import { hostileStringsItem } from "./HostileStrings.js"
import { moneyRulesItem } from "./MoneyRules.js"
import { revocationItem } from "./Revocation.js"
import { withHost } from "./WithHost.js"
import { hostKillItem } from "../cluster/HostKill.js"

export { type Figure, formatFigures, SCALE, type Scale } from "./Figures.js"
export * from "./ItemFigures.js"

export { withHost } from "./WithHost.js"

const seedOf = (context: RunContext) => context.seed ?? Date.now() % 2 ** 31

export const crashFigures = (f: CrashFigures): Array<Figure> => {
  const item = `1 crash (${f.backend})`
  const a = f.acknowledged
  const first = (kind: string) => f.problems.find((p) => p.startsWith(kind))
  return [
    info(
      item,
      "kills (SIGKILL) / of which during startup / seed",
      `${f.kills} / ${f.startupKills} / ${f.seed}`
    ),
    info(
      item,
      "acknowledged rfqs/quotes/trades/block trades/cancels",
      `${a.rfqs}/${a.quotes}/${a.trades}/${a.blockTrades}/${a.cancels}`
    ),
    zero(item, "acknowledged writes lost", f.lost, first("lost")),
    zero(item, "doubled block trades", f.doubled, first("doubled")),
    zero(item, "block trades unknown to the service", f.unknownBlockTrades, first("unknown")),
    zero(item, "invalid states", f.invalid, first("invalid")),
    zero(item, "5xx answers while up", f.serverErrors)
  ]
}

export const raceFigures = async (
  base: string,
  kinds: ReadonlyArray<RaceKind>,
  scale: Scale,
  log: (l: string) => void
) => {
  const wanted = [...kinds]
  if (wanted.includes("two accepts (WS + REST)") && !(await wsAvailable(base))) {
    log("note: the WebSocket endpoint is not served; WS races skipped")
    wanted.splice(wanted.indexOf("two accepts (WS + REST)"), 1)
  }
  const figures = await runRaces(base, wanted, SCALE.raceRounds[scale], emptyRaceFigures())
  for (const p of figures.problems.slice(0, 10)) log(p)
  return figures
}

export const RACE_KINDS: ReadonlyArray<RaceKind> = [
  "two accepts",
  "accept vs cancel",
  "accept vs quote update",
  "two accepts (WS + REST)"
]

const raceItemFigures = async (scale: Scale, log: (l: string) => void): Promise<Array<Figure>> => {
  let rounds = ""
  let violations = 0
  let voids = 0
  let shortfall = 0
  let doubled = 0
  let invalid = 0
  for (const [ttl, kinds] of [
    ["300", RACE_KINDS],
    ["3", ["accept vs expiry"]]
  ] as const) {
    await withHost("pglite", { RFQ_TTL_SECONDS: ttl }, async (host, place) => {
      const f = await raceFigures(host.url, kinds, scale, log)
      rounds += kinds
        .filter((k) => f.rounds[k] !== undefined || f.voids[k] !== undefined)
        .map((k) => {
          const v = f.voids[k] ?? 0
          return `${k}: ${f.rounds[k] ?? 0}${v === 0 ? "" : ` (${v} void)`}; `
        })
        .join("")
      violations += f.violations
      voids += f.voidRounds
      shortfall += f.shortfall
      await host.stop("SIGTERM")
      const db = await openDatabase("pglite", place)
      try {
        const checked = await checkDurability(db, f.acknowledged)
        doubled += checked.doubled + checked.unknownBlockTrades
        invalid += checked.invalid + checked.lost
        for (const p of checked.problems.slice(0, 5)) log(p)
      } finally {
        await db.close()
      }
    })
  }
  return [
    info("2 races", "decided rounds", rounds),
    zero(
      "2 races",
      `decided rounds short of ${SCALE.raceRounds[scale]} per race (after ${MAX_ATTEMPTS_PER_ROUND}× as many attempts)`,
      shortfall
    ),
    zero("2 races", "rounds without exactly one winner", violations),
    zero("2 races", "double fills (ledger)", doubled),
    zero("2 races", "invalid or lost states afterwards", invalid),
    info("2 races", "void rounds, replaced (setup failed or RFQ expired before its quote)", voids)
  ]
}

export const items: ReadonlyArray<Item> = [
  {
    id: "crash",
    title: "1. Crash durability (SIGKILL, PGlite and PostgreSQL)",
    run: async (context) => {
      const out: Array<Figure> = []
      for (const backend of ["pglite", "postgres"] as const) {
        const f = await runCrashDurability({
          backend,
          kills: SCALE.crashKills[context.scale],
          log: context.log,
          seed: seedOf(context)
        })
        for (const p of f.problems.slice(0, 10)) context.log(p)
        out.push(...crashFigures(f))
      }
      return out
    }
  },
  { id: "races", title: "2. Races over HTTP and WS", run: ({ scale, log }) => raceItemFigures(scale, log) },
  {
    id: "fuzz",
    title: "3. Fuzzing (REST requests, JSON-RPC frames)",
    run: (c) => withHost("pglite", {}, (host) => fuzzFigures(host.url, c.scale, seedOf(c), c.log))
  },
  {
    id: "tenancy",
    title: "4. Tenancy (OWASP API1/API3)",
    run: (c) => withHost("pglite", {}, (host) => tenancyFigures(host.url, c.scale, seedOf(c), c.log))
  },
  {
    id: "tokens",
    title: "5. Tokens (RFC 8725)",
    run: (c) => withHost("pglite", {}, (host) => tokenFigures(host.url, c.log))
  },
  {
    id: "outage",
    title: "6. Database outage (PostgreSQL stopped under load)",
    run: async ({ scale, log }) => {
      if (scale === "short")
        return [info("6 outage", "run", "only in the full run (stops the shared PostgreSQL)")]
      const f = await runDatabaseOutage({ outageMs: 10_000, log })
      for (const p of f.problems.slice(0, 10)) log(p)
      return [
        info("6 outage", "writes answered during the outage", f.outageAnswers),
        zero(
          "6 outage",
          "answers during the outage other than 503 with the standard body",
          f.outageAnswersNot503
        ),
        info("6 outage", "JSON-RPC writes answered during the outage", f.outageRpcAnswers),
        {
          ...zero(
            "6 outage",
            "JSON-RPC answers during the outage other than the 503 error",
            f.outageRpcAnswersNot503
          ),
          // None at all would be a pass that looked at nothing.
          ok: f.outageRpcAnswersNot503 === 0 && f.outageRpcAnswers > 0
        },
        atMost("6 outage", "slowest answer during the outage", f.outageSlowestMs, 2000, " ms"),
        zero("6 outage", "/readyz not 503 during the outage", f.readyzNot503),
        atMost("6 outage", "recovery after PostgreSQL is back", f.recoveryMs, 5000, " ms"),
        zero("6 outage", "acknowledged writes lost", f.lost)
      ]
    }
  },
  {
    id: "limits",
    title: "7. Resource limits (OWASP API4)",
    run: (c) => withHost("pglite", {}, (host) => limitFigures(host, c.scale, c.log))
  },
  {
    id: "secrets",
    title: "8. Secrets at rest",
    run: ({ log }) => secretsFigures(["pglite", "postgres"], log)
  },
  databaseStallItem,
  revocationItem,
  guessingItem,
  hostileStringsItem,
  moneyRulesItem,
  cursorProbeItem,
  hostKillItem
]

import { type Figure, formatFigures, items, type Scale } from "./Items.js"

/**
 * `npm run test:reliability`: every reliability item at full scale, each figure printed with its
 * target; exit 1 when any figure misses it. `--short` runs the short version (what `npm test`
 * runs); `--only crash,tenancy` picks items; `--seed N` fixes the seed of the seeded ones.
 */
const args = process.argv.slice(2)
const flagValue = (flag: string) => {
  const i = args.indexOf(flag)
  return i === -1 ? undefined : args[i + 1]
}
const scale: Scale = args.includes("--short") ? "short" : "full"
const only = flagValue("--only")?.split(",")
const seedText = flagValue("--seed")
const seed = seedText === undefined ? undefined : Number(seedText)

const log = (line: string) => process.stdout.write(`  ${line}\n`)

const main = async () => {
  const selected = items.filter((item) => only === undefined || only.includes(item.id))
  const all: Array<Figure> = []
  let failed = false
  for (const item of selected) {
    process.stdout.write(`\n== ${item.title} (${scale})\n`)
    const started = Date.now()
    try {
      const figures = await item.run({ scale, log, ...(seed === undefined ? {} : { seed }) })
      all.push(...figures)
      process.stdout.write(formatFigures(figures))
      if (figures.some((f) => !f.ok)) failed = true
    } catch (error) {
      failed = true
      all.push({ item: item.id, name: "run", value: "failed to run", target: "runs", ok: false })
      process.stdout.write(
        `  FAILED TO RUN: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`
      )
    }
    process.stdout.write(`  (${((Date.now() - started) / 1000).toFixed(1)} s)\n`)
  }
  process.stdout.write("\n== Summary\n")
  process.stdout.write(formatFigures(all))
  const passed = all.filter((f) => f.ok).length
  process.stdout.write(`\nreliability: ${passed} passed, ${all.length - passed} failed\n`)
  process.exitCode = failed ? 1 : 0
}

// An interrupted run still ends through process.exit, so that the hosts it started are killed
// and a stopped PostgreSQL is started again (their "exit" hooks).
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => process.exit(130))

void main()

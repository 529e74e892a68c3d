/** A published figure: what was measured, its value and whether it meets its target. */
export interface Figure {
  readonly item: string
  readonly name: string
  readonly value: number | string
  readonly target: string
  readonly ok: boolean
  readonly note?: string
}

export type Scale = "short" | "full"

export interface RunContext {
  readonly scale: Scale
  readonly log: (line: string) => void
  readonly seed?: number
}

export interface Item {
  readonly id: string
  readonly title: string
  readonly run: (context: RunContext) => Promise<ReadonlyArray<Figure>>
}

export const zero = (item: string, name: string, value: number, note?: string): Figure => ({
  item,
  name,
  value,
  target: "0",
  ok: value === 0,
  ...(note === undefined ? {} : { note })
})

export const atMost = (item: string, name: string, value: number, max: number, unit = ""): Figure => ({
  item,
  name,
  value: Number.isInteger(value) ? value : Number(value.toFixed(2)),
  target: `< ${max}${unit}`,
  ok: value < max
})

export const info = (item: string, name: string, value: number | string): Figure => ({
  item,
  name,
  value,
  target: "(measured)",
  ok: true
})

export const formatFigures = (figures: ReadonlyArray<Figure>): string =>
  figures
    .map(
      (f) =>
        `  ${f.ok ? "ok  " : "FAIL"} ${f.item} | ${f.name}: ${f.value} (target ${f.target})${f.note === undefined ? "" : ` — ${f.note}`}\n`
    )
    .join("")

/** Iteration counts of each item: full for `npm run test:reliability`, short inside `npm test`. */
export const SCALE = {
  crashKills: { full: 50, short: 2 },
  raceRounds: { full: 1000, short: 10 },
  fuzzRequests: { full: 10_000, short: 300 },
  fuzzFrames: { full: 10_000, short: 300 },
  tenancyFuzzedIds: { full: 2000, short: 100 },
  limitRounds: { full: 20, short: 2 }
} as const

/** What a scenario hands back: its figures (for the JSON file and the README), and its targets. */
export interface ScenarioResult {
  readonly id: string
  readonly title: string
  /** Why the scenario did not run (a missing PostgreSQL, an endpoint not served); nothing else is set then. */
  readonly skipped?: string
  readonly figures: Record<string, number | string>
  readonly targets: ReadonlyArray<TargetCheck>
  readonly notes: ReadonlyArray<string>
}

export type Comparison = ">=" | ">" | "<" | "<="

export interface TargetCheck {
  readonly name: string
  readonly value: number
  readonly comparison: Comparison
  readonly threshold: number
  readonly unit: string
  readonly pass: boolean
}

export const check = (
  name: string,
  value: number,
  comparison: Comparison,
  threshold: number,
  unit = ""
): TargetCheck => ({
  name,
  value,
  comparison,
  threshold,
  unit,
  pass:
    comparison === ">="
      ? value >= threshold
      : comparison === ">"
        ? value > threshold
        : comparison === "<"
          ? value < threshold
          : value <= threshold
})

export const formatNumber = (value: number): string => {
  if (!Number.isFinite(value)) return String(value)
  const abs = Math.abs(value)
  if (abs >= 100) return Math.round(value).toLocaleString("en-US")
  if (abs >= 10) return value.toFixed(1)
  if (abs >= 1) return value.toFixed(2)
  return value.toFixed(3)
}

export const targetLine = (t: TargetCheck): string =>
  `${t.pass ? "PASS" : "FAIL"}  ${t.name}: ${formatNumber(t.value)}${t.unit} (target ${t.comparison} ${formatNumber(t.threshold)}${t.unit})`

/** How a scenario talks while it runs. */
export type Log = (line: string) => void

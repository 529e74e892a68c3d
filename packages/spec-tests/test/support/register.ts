import { describe, it } from "vitest"
import type { ScenarioGroup } from "../../src/Scenario.js"

/** One Vitest `describe` per group and one test per scenario, all on the context `get` returns. */
export const register = <C>(
  groups: ReadonlyArray<ScenarioGroup<C>>,
  get: () => C,
  timeoutMs?: number
): void => {
  for (const g of groups) {
    describe(g.name, () => {
      for (const s of g.scenarios) it(s.name, () => s.run(get()), timeoutMs)
    })
  }
}

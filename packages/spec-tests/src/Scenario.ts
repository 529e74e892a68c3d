import type { World } from "./World.js"

/**
 * A scenario is a plain async function over a world (a base URL with the demo clients logged in)
 * that throws when the service misbehaves. Vitest files turn each into a test, against hosts they
 * spawn or against the URL given to the command line.
 */
export interface Scenario<C = World> {
  readonly name: string
  readonly run: (context: C) => Promise<void>
}

export interface ScenarioGroup<C = World> {
  readonly name: string
  readonly scenarios: ReadonlyArray<Scenario<C>>
}

export const scenario = <C = World>(name: string, run: (context: C) => Promise<void>): Scenario<C> => ({
  name,
  run
})

export const group = <C = World>(name: string, scenarios: ReadonlyArray<Scenario<C>>): ScenarioGroup<C> => ({
  name,
  scenarios
})

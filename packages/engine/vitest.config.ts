import { defineProject } from "vitest/config"

export default defineProject({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: {
    name: "engine",
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // The engine's files share a worker's modules (effect, xstate, PGlite and the engine itself load
    // once per worker, not once per file): about half the project's CPU. Isolation is a pool's
    // setting, not a project's, so the engine runs alone in the threads pool, which the root config
    // sets not to isolate, and before the other projects (groupOrder 0; theirs is 1), so the two
    // pools' workers do not run at once. Safe because the engine keeps no state in modules: every
    // service is a layer built per test.
    pool: "threads",
    sequence: { groupOrder: 0 }
  }
})

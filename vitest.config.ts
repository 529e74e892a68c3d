import { defineConfig } from "vitest/config"
import { LongestFirst } from "./vitest.sequencer.js"

// One run covers every package. The "source" export condition lets the packages import each
// other's TypeScript sources directly, without a build step in between.
export default defineConfig({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: {
    projects: ["packages/*", "bench"],
    testTimeout: 30_000,
    // Most files spend their time waiting on spawned hosts, databases and timers rather than on
    // CPU, so three workers on two cores finish sooner than the default of one per spare core.
    maxWorkers: 3,
    // As many as maxWorkers: with fewer, the pool ends idle workers of a project that does not
    // isolate its files (the engine's) while vitest still hands them files, and the run stops with
    // "Terminating worker thread" and files unreported (vitest 3.2).
    minWorkers: 3,
    hookTimeout: 60_000,
    // The engine's project runs in the threads pool without isolation (packages/engine/vitest.config.ts);
    // every other project in the forks pool, each file in a fresh process.
    poolOptions: { threads: { isolate: false } },
    reporters: ["default"],
    // The longest files first, on a fresh clone too (vitest.sequencer.ts).
    sequence: { sequencer: LongestFirst }
  }
})

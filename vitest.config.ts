import { defineConfig } from "vitest/config"

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
    minWorkers: 1,
    hookTimeout: 60_000,
    reporters: ["default"]
  }
})

import { defineConfig } from "vitest/config"

// One run covers every package. The "source" export condition lets the packages import each
// other's TypeScript sources directly, without a build step in between.
export default defineConfig({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: {
    projects: ["packages/*", "bench"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ["default"]
  }
})

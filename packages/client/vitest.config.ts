import { defineProject } from "vitest/config"

export default defineProject({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: {
    name: "client",
    include: ["test/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 240_000,
    sequence: { groupOrder: 1 }
  }
})

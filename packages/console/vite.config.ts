import { fileURLToPath } from "node:url"
import { defaultClientConditions, defineConfig } from "vite"

/**
 * The console's bundle: Vite 7 (Rollup for the build, esbuild for TypeScript and JSX, no Babel),
 * Preact's automatic JSX runtime. The `source` condition lets the bundle take the workspace
 * packages (`@rfq/client`, `@rfq/engine/api`) from their TypeScript sources, as the tests and
 * `npm start` do, so a build needs no `tsc` output first. `base` is where the host serves it.
 */
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/console/",
  resolve: { conditions: ["source", ...defaultClientConditions] },
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: true,
    // One script and one stylesheet: the console is one screen, loaded once.
    chunkSizeWarningLimit: 2048
  },
  logLevel: "warn"
})

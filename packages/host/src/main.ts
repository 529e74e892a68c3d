import { NodeRuntime } from "@effect/platform-node"
import { ping } from "@rfq/engine"
import { Effect } from "effect"
import { type AppServices, appAround, appLayer, appOnListening, appRoutes } from "./App.js"
import { isStartupFailure, runHost } from "./Host.js"

// A start that cannot proceed prints one plain line on stderr and exits 1 (runMain's teardown);
// SIGTERM/SIGINT interrupt the program, which drains, closes the database, unlocks and exits 0.
const program = runHost<AppServices>({
  databaseLayer: appLayer,
  ping,
  routes: appRoutes,
  around: appAround,
  onListening: appOnListening
}).pipe(
  Effect.tapError((error) =>
    Effect.sync(() => {
      process.stderr.write(`${isStartupFailure(error) ? error.message : String(error)}\n`)
    })
  )
)

NodeRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
